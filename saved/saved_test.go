package saved

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/blake3"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

func testModel(t *testing.T) (model.Model, *zio.Policy) {
	t.Helper()
	st := model.Settings{Release: "2.1", RecordSize: 1 << 20, Compression: "zstd-fast-5", Copies: 2, Dedup: "on",
		Vdevs: []string{"raidz2 6"}, Ashift: 12, Sparse: model.SparseNever, Sample: 4}
	p, err := st.Policy()
	if err != nil {
		t.Fatal(err)
	}
	return st.Model(p), p
}

func key(i int) ddt.Key {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i))
	return ddt.Key(blake3.Sum256(b[:]))
}

// testScan builds a scan with a few entries of every kind.
func testScan(t *testing.T) *Scan {
	m, p := testModel(t)
	tab := ddt.NewTable(p.DSize)
	for i := 1; i <= 300; i++ {
		psize := uint32(i%7) * 4096 // 0: embedded
		if tab.RefN(key(i), 1<<20, uint64(i*i)) {
			tab.Set(key(i), psize)
		}
	}
	tab.RefN(key(1000), 512, 1<<40)
	tab.Set(key(1000), 4096)
	return &Scan{
		Header: Header{
			Ddtsim:  "ddtsim test",
			Created: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
			Host:    "hostA",
			Dir:     "/home/a",
			Model:   m,
			Options: Options{Follow: true},
			Paths:   []Path{"./vmstore", "/data/odd\xffname\n"},
			Problems: []source.Problem{
				{Path: `/data/x`, Kind: "error", Reason: "open: permission denied"},
			},
			Files: []File{
				{Path: "/data/odd\xffname\n/a", Dev: 2049, Ino: 12, Size: 5 << 20, Mtime: 1700000000123456789, Records: 5, Done: [][2]uint64{{0, 5}}},
				{Path: "vmstore/disk.img", Dev: 2049, Ino: 13, Size: 100 << 20, Mtime: 1, Records: 100, Done: [][2]uint64{{0, 8}, {16, 40}}},
			},
		},
		Table:    tab,
		Counters: analyzer.Counters{Files: 2, Dirs: 1, LogicalBytes: 105 << 20, ReadBytes: 12345, Records: 105, Holes: 3, Stored: 99, UniqueBlocks: 77, Compressed: 70, Unsampled: 9},
	}
}

func entries(t *Scan) map[ddt.Key]ddt.Entry {
	m := map[ddt.Key]ddt.Entry{}
	t.Table.Range(func(k ddt.Key, e ddt.Entry) bool { m[k] = e; return true })
	return m
}

func encode(t *testing.T, s *Scan) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := encodeV1(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	s := testScan(t)
	path := filepath.Join(t.TempDir(), "scan")
	if err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Header, s.Header) {
		t.Errorf("header:\n got %+v\nwant %+v", got.Header, s.Header)
	}
	if !reflect.DeepEqual(got.Counters, s.Counters) {
		t.Errorf("counters:\n got %+v\nwant %+v", got.Counters, s.Counters)
	}
	we, ge := entries(s), entries(got)
	if !reflect.DeepEqual(we, ge) {
		t.Errorf("entries differ: %d read, %d written", len(ge), len(we))
	}
	// DSIZE is recomputed from PSIZE by the model's policy.
	_, p := testModel(t)
	for _, e := range ge {
		if e.PSize != 0 && e.DSize != p.DSize(uint64(e.PSize)) {
			t.Fatalf("entry %+v: DSIZE not the policy's %d", e, p.DSize(uint64(e.PSize)))
		}
	}
	wh, _ := s.Table.Summarize()
	gh, _ := got.Table.Summarize()
	if *wh != *gh {
		t.Error("histograms differ")
	}
	// Result recomputes what derives from the table.
	r := got.Result()
	if r.Counters.UniqueBlocks != gh.Total().Allocated.Blocks || r.Counters.Stored != gh.Total().Referenced.Blocks {
		t.Errorf("Result counters %+v", r.Counters)
	}
	// Written again, the same table files, byte for byte (rows sorted).
	before := readParts(t, path)
	if err := Write(path, got); err != nil {
		t.Fatal(err)
	}
	if after := readParts(t, path); !reflect.DeepEqual(before, after) {
		t.Error("table files differ when written again")
	}
	// No temporary directory is left behind; the scan's directory holds
	// the manifest and the partitions only.
	if ls, _ := os.ReadDir(filepath.Dir(path)); len(ls) != 1 {
		t.Errorf("parent directory holds %d entries", len(ls))
	}
	if ls, _ := os.ReadDir(path); len(ls) != Partitions+1 {
		t.Errorf("scan directory holds %d entries", len(ls))
	}
	// Header only.
	h, err := ReadHeader(path)
	if err != nil || !reflect.DeepEqual(*h, s.Header) {
		t.Errorf("ReadHeader: %v", err)
	}
}

// The non-UTF-8 path is kept byte for byte, as base64 in the JSON.
func TestPathJSON(t *testing.T) {
	t.Parallel()
	for _, p := range []Path{"plain/ü", "odd\xff\xfe", "", "tab\tnl\n"} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q Path
		if err := json.Unmarshal(b, &q); err != nil || q != p {
			t.Errorf("%q → %s → %q, %v", p, b, q, err)
		}
	}
	b, _ := json.Marshal(Path("odd\xff"))
	if !strings.Contains(string(b), "base64") {
		t.Errorf("non-UTF-8 path as %s", b)
	}
	var q Path
	if err := json.Unmarshal([]byte(`{"hex":"00"}`), &q); err == nil {
		t.Error("path object without base64 accepted")
	}
}

func readParts(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for p := range Partitions {
		b, err := os.ReadFile(filepath.Join(dir, PartName(p)))
		if err != nil {
			t.Fatal(err)
		}
		m[PartName(p)] = b
	}
	return m
}

// Files of format version 1 are still read.
func TestReadV1(t *testing.T) {
	t.Parallel()
	s := testScan(t)
	path := filepath.Join(t.TempDir(), "old.ddts")
	if err := os.WriteFile(path, encode(t, s), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path, DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Header, s.Header) || !reflect.DeepEqual(got.Counters, s.Counters) || !reflect.DeepEqual(entries(got), entries(s)) {
		t.Error("version 1 file read differently")
	}
	if err := CheckReplaceable(path); err != nil {
		t.Errorf("a version 1 file is not replaceable: %v", err)
	}
	// Saved again, it becomes a directory of version 2.
	if err := Write(path, got); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(path, ManifestName)); err != nil || !st.Mode().IsRegular() {
		t.Errorf("after Write: %v", err)
	}
}

func TestTruncatedCorruptAndForeignFiles(t *testing.T) {
	t.Parallel()
	good := encode(t, testScan(t))
	decode := func(b []byte) error {
		_, err := decodeV1(bytes.NewReader(b), DecodeOptions{})
		return err
	}
	if err := decode(good); err != nil {
		t.Fatal(err)
	}
	// Every prefix is refused as truncated (or, inside the magic, as not
	// a saved scan): all short ones, the long ones, some in between.
	for n := 0; n < len(good); n++ {
		if n > 1000 && n < len(good)-300 && n%37 != 0 {
			continue
		}
		err := decode(good[:n])
		switch {
		case n < len(magicV1) && !errors.Is(err, ErrNotScan):
			t.Fatalf("%d bytes: %v, want not a saved scan", n, err)
		case n >= len(magicV1) && (!errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "truncated")):
			t.Fatalf("%d of %d bytes: %v, want truncated", n, len(good), err)
		}
	}
	// Every changed byte is refused (all of the header and the end, some
	// of the entries).
	for i := 0; i < len(good); i++ {
		if i > 1000 && i < len(good)-300 && i%37 != 0 {
			continue
		}
		bad := append([]byte(nil), good...)
		bad[i] ^= 0x40
		if err := decode(bad); err == nil {
			t.Fatalf("byte %d changed: accepted", i)
		}
	}
	// A changed entry byte: the checksum says so.
	bad := append([]byte(nil), good...)
	bad[len(bad)-600] ^= 1
	if err := decode(bad); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("changed entry: %v", err)
	}
	if err := decode(append(append([]byte(nil), good...), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
	// Another version.
	v3 := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(v3[len(magicV1):], 3)
	if err := decode(v3); !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("version 3: %v", err)
	}
	if err := decode([]byte("Simulated DDT histogram:\n")); !errors.Is(err, ErrNotScan) {
		t.Errorf("text: %v", err)
	}
	// Read names the file.
	path := filepath.Join(t.TempDir(), "cut.ddts")
	os.WriteFile(path, good[:len(good)/2], 0o644)
	if _, err := Read(path, DecodeOptions{}); err == nil || !strings.HasPrefix(err.Error(), path+": truncated") {
		t.Errorf("Read: %v", err)
	}
}

func TestAddRun(t *testing.T) {
	t.Parallel()
	var runs [][2]uint64
	for _, r := range [][2]uint64{{10, 20}, {30, 40}, {0, 5}, {20, 30}, {50, 60}, {45, 46}, {5, 10}, {44, 61}} {
		runs = addRun(runs, r)
	}
	if want := [][2]uint64{{0, 40}, {44, 61}}; !reflect.DeepEqual(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
}

func TestTracker(t *testing.T) {
	t.Parallel()
	saved := []File{
		{Path: "done", Ino: 1, Size: 100, Mtime: 5, Records: 1, Done: [][2]uint64{{0, 1}}},
		{Path: "half", Ino: 2, Size: 1 << 20, Mtime: 5, Records: 8, Done: [][2]uint64{{0, 4}}},
		{Path: "changed", Ino: 3, Size: 1 << 20, Mtime: 5, Records: 8, Done: [][2]uint64{{2, 3}}},
		{Path: "gone", Ino: 4, Size: 1 << 20, Mtime: 5, Records: 8, Done: [][2]uint64{{0, 1}}},
	}
	tr := NewTracker(saved, nil, 2)
	// A file done completely is skipped, even if it changed since.
	if s, err := tr.Skip(analyzer.FileInfo{Path: "done", Ino: 9, Size: 300, Mtime: 7, Records: 1}); err != nil || !reflect.DeepEqual(s, []analyzer.Span{{First: 0, End: 1}}) {
		t.Errorf("done: %v, %v", s, err)
	}
	half := analyzer.FileInfo{Path: "half", Dev: 77, Ino: 2, Size: 1 << 20, Mtime: 5, Records: 8}
	if s, err := tr.Skip(half); err != nil || !reflect.DeepEqual(s, []analyzer.Span{{First: 0, End: 4}}) {
		t.Errorf("half: %v, %v", s, err)
	}
	_, err := tr.Skip(analyzer.FileInfo{Path: "changed", Ino: 3, Size: 2 << 20, Mtime: 5, Records: 16})
	if err == nil || !strings.Contains(err.Error(), "changed since the scan was saved (size 2097152 bytes, was 1048576)") || !strings.Contains(err.Error(), "the 1 of its 8 records") {
		t.Errorf("changed: %v", err)
	}
	if s, err := tr.Skip(analyzer.FileInfo{Path: "new", Records: 3}); s != nil || err != nil {
		t.Errorf("new: %v, %v", s, err)
	}
	tr.Started(half, []analyzer.Span{{First: 0, End: 4}})
	tr.Done(half, 4, 8)
	tr.Done(analyzer.FileInfo{Path: "new", Ino: 5, Records: 3}, 1, 3)
	_, files := tr.Progress(nil, nil)
	var names []string
	for _, f := range files {
		names = append(names, string(f.Path))
	}
	if strings.Join(names, " ") != "changed done gone half new" || !files[3].Complete() || !reflect.DeepEqual(files[4].Done, [][2]uint64{{1, 3}}) {
		t.Errorf("files %+v", files)
	}
	if m := tr.Missed(); len(m) != 1 || m[0].Path != "gone" {
		t.Errorf("missed %+v", m)
	}
}

func TestMergeRefusesOtherModels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := testScan(t)
	b := testScan(t)
	b.Model.RecordSize = 128 << 10
	b.Model.Dedup = false
	c := testScan(t)
	pa, pb, pc := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	for p, s := range map[string]*Scan{pa: a, pb: b, pc: c} {
		if err := Write(p, s); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Merge([]string{pa, pb, pc}, MergeOptions{})
	var me *ModelError
	if !errors.As(err, &me) || len(me.Diffs) != 1 || !strings.Contains(err.Error(), pb+": recordsize: 1M vs 128K; dedup: on vs off") {
		t.Errorf("Merge: %v", err)
	}
	m, err := Merge([]string{pa, pc}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Same entries twice: refcnts double; counters add.
	want := &ddt.Histogram{}
	a.Table.Range(func(_ ddt.Key, e ddt.Entry) bool {
		if e.PSize != 0 {
			want.Add(2*e.Refcnt, uint64(e.LSize), uint64(e.PSize), e.DSize)
		}
		return true
	})
	if *m.Histogram != *want {
		t.Error("merged histogram is not the one of doubled refcnts")
	}
	if m.Counters.Records != 2*a.Counters.Records || len(m.Paths) != 4 || len(m.Problems) != 2 || m.Complete != a.Complete {
		t.Errorf("merged %+v", m.Header)
	}
	if len(m.Notes) != 2 || !strings.Contains(m.Notes[0], "both scanned /home/a/vmstore on host hostA") {
		t.Errorf("notes %q", m.Notes)
	}
}

// The tracker keeps a position in the walk's order and the files after
// it: files done are forgotten once the position passes them, whatever
// order they finish in; a resumed scan skips what lies behind the
// position, but for paths the saved scan could not read (and what lies
// below them); a saved file taken on again is not listed from the saved
// scan again (it would be read twice).
func TestTrackerPosition(t *testing.T) {
	t.Parallel()
	fi := func(path string, records uint64) analyzer.FileInfo {
		return analyzer.FileInfo{Path: path, Ino: uint64(len(path)), Size: records << 17, Records: records}
	}
	a, b, c := fi("d/a/x", 2), fi("d/a.txt", 3), fi("d/b", 4)
	tr := NewTracker(nil, nil, Version)
	for _, f := range []analyzer.FileInfo{a, b, c} {
		tr.Started(f, nil)
	}
	tr.Done(b, 0, 3)
	tr.Finished(b) // out of order: a is still in flight
	if pos, files := tr.Progress(nil, nil); pos != nil || len(files) != 1 || files[0].Path != "d/a.txt" {
		t.Fatalf("b done before a: position %v, files %+v; want none, and b listed", pos, files)
	}
	tr.Done(a, 0, 2)
	tr.Finished(a)
	tr.Done(c, 0, 1)
	tr.Unread("d/a/unlisted")
	tr.Unread("d/a/gone")
	pos, files := tr.Progress(nil, nil)
	if pos == nil || pos.Path != "d/a.txt" {
		t.Fatalf("position %v; want d/a.txt: a and b are done", pos)
	}
	var names []string
	for _, f := range files {
		names = append(names, string(f.Path))
	}
	if strings.Join(names, " ") != "d/a/gone d/a/unlisted d/b" || !reflect.DeepEqual(files[2].Done, [][2]uint64{{0, 1}}) || !files[0].Unread {
		t.Fatalf("files %+v", files)
	}

	// Resumed.
	tr = NewTracker(files, pos, Version)
	if s, err := tr.Skip(a); err != nil || !reflect.DeepEqual(s, []analyzer.Span{{First: 0, End: 2}}) {
		t.Errorf("a, behind the position: %v, %v; want all done", s, err)
	}
	if s, err := tr.Skip(fi("d/a/unlisted/y", 1)); s != nil || err != nil {
		t.Errorf("a file below a directory that could not be listed: %v, %v; want it read", s, err)
	}
	if s, err := tr.Skip(fi("d/a/new", 1)); err != nil || len(s) != 1 {
		t.Errorf("a new file behind the position: %v, %v; want it skipped as done", s, err)
	}
	sc, err := tr.Skip(c)
	if err != nil || !reflect.DeepEqual(sc, []analyzer.Span{{First: 0, End: 1}}) {
		t.Errorf("c, in flight: %v, %v; want its first record done", sc, err)
	}
	if s, err := tr.Skip(fi("d/c", 1)); s != nil || err != nil {
		t.Errorf("a file after the position: %v, %v; want it read", s, err)
	}
	tr.Started(c, sc)
	tr.Done(c, 1, 4)
	tr.Finished(c)
	pos, files = tr.Progress(nil, nil)
	names = nil
	for _, f := range files {
		names = append(names, string(f.Path))
	}
	// d/a/unlisted was reached; d/a/gone was not: still listed.
	if pos == nil || pos.Path != "d/b" || strings.Join(names, " ") != "d/a/gone" {
		t.Errorf("after c: position %v, files %v; want d/b and only d/a/gone", pos, names)
	}
}
