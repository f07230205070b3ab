package saved

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// randomScans writes n scans of model m whose keys overlap (key(i) for
// i drawn from a range shared by all), with refcnts up to 2^20, embedded
// entries and empty partitions (when few keys), and returns their paths
// and one table holding them all (refcnts added by the table itself).
func randomScans(t *testing.T, m model.Model, n, keys int, seed uint64) ([]string, *ddt.Table) {
	t.Helper()
	p, err := m.Policy()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	all := ddt.NewTable(p.DSize)
	dir := t.TempDir()
	var paths []string
	for s := range n {
		tab := ddt.NewTable(p.DSize)
		for range keys {
			i := rng.IntN(keys * 2)
			k := key(i)
			psize := uint32(i%9) * 4096 // 0: embedded
			ref := uint64(1)
			if rng.IntN(4) == 0 {
				ref = 1 + rng.Uint64N(1<<uint(rng.IntN(21)))
			}
			for _, tb := range []*ddt.Table{tab, all} {
				if tb.RefN(k, 128<<10, ref) {
					tb.Set(k, psize)
				}
			}
		}
		sc := testScan(t)
		sc.Model, sc.Table = m, tab
		sc.Paths = []Path{Path("/data/" + string(rune('a'+s)))}
		path := filepath.Join(dir, string(rune('a'+s)))
		if s == n-1 && n > 2 {
			// The last one in format version 1.
			path += ".ddts"
			if err := os.WriteFile(path, encode(t, sc), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := Write(path, sc); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths, all
}

// The streaming merge gives what one table holding every scan's entries
// gives, whatever the number of partitions merged at once.
func TestMergeEqualsOneTable(t *testing.T) {
	t.Parallel()
	m, _ := testModel(t)
	m.Sample = 1
	for _, c := range []struct {
		scans, keys int
		opts        MergeOptions
	}{
		{1, 5, MergeOptions{}},
		{3, 2000, MergeOptions{Jobs: 1}},
		{7, 3000, MergeOptions{Jobs: 4}},
		{7, 3000, MergeOptions{Mem: 1}}, // below the minimum: one at a time
	} {
		paths, all := randomScans(t, m, c.scans, c.keys, uint64(c.scans*c.keys))
		got, err := Merge(paths, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		h, sum := all.Summarize()
		if *got.Histogram != *h || got.Summary != sum {
			t.Errorf("%d scans: merged histogram or summary %+v differ from one table's %+v", c.scans, got.Summary, sum)
		}
		r := got.Result()
		// No table is held whole: no table size, not the inputs' peaks
		// added up (they said more than the process's peak RSS).
		if r.Counters.UniqueBlocks != sum.Entries || r.Counters.Stored != sum.Refs || r.Counters.Embedded != sum.EmbeddedRefs || r.Counters.TableBytes != 0 {
			t.Errorf("counters %+v", r.Counters)
		}
		if c.opts.Mem == 1 && got.Memory != MinMergeMemory(c.scans-1) {
			t.Errorf("--mem below the minimum: memory %d, want one partition at a time (%d)", got.Memory, MinMergeMemory(c.scans-1))
		}
	}
}

// Sampled scans merged give the estimate of the merged sample.
func TestMergeSample(t *testing.T) {
	t.Parallel()
	m, _ := testModel(t) // sample 4
	paths, all := randomScans(t, m, 3, 1500, 9)
	got, err := Merge(paths, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The merge feeds the estimator in key order (its sums in floating
	// point depend on the order).
	var es []ddt.Entry
	var ks []ddt.Key
	all.Range(func(k ddt.Key, e ddt.Entry) bool { ks = append(ks, k); return true })
	slices.SortFunc(ks, func(a, b ddt.Key) int { return bytes.Compare(a[:], b[:]) })
	for _, k := range ks {
		e, _ := all.Lookup(k)
		es = append(es, e)
	}
	want := ddt.EstimateSample(func(f func(ddt.Entry) bool) {
		for _, e := range es {
			f(e)
		}
	}, m.Sample)
	a, _ := json.Marshal(got.Sample)
	b, _ := json.Marshal(want)
	if got.Sample == nil || string(a) != string(b) {
		t.Errorf("sample estimate\n got %s\nwant %s", a, b)
	}
}

// corrupt writes two good scans, lets change damage the first, and
// returns Merge's error.
func corrupt(t *testing.T, change func(dir string, m *Manifest)) error {
	t.Helper()
	md, _ := testModel(t)
	paths, _ := randomScans(t, md, 2, 3000, 3)
	mf, err := ReadManifest(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	change(paths[0], mf)
	b, _ := json.Marshal(mf)
	if err := os.WriteFile(filepath.Join(paths[0], ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if mf.Paths == nil {
		paths = paths[:1]
	}
	_, err = Merge(paths, MergeOptions{})
	if err == nil {
		t.Fatal("damaged scan merged")
	}
	return err
}

func TestMergeRefusesDamagedTables(t *testing.T) {
	t.Parallel()
	part := func(dir string) string { return filepath.Join(dir, PartName(3)) }
	for _, c := range []struct {
		name   string
		change func(dir string, m *Manifest)
		want   []string
	}{
		{"cut short", func(dir string, m *Manifest) {
			os.Truncate(part(dir), m.Parts[3].Bytes/2)
		}, []string{"part-03.parquet", "bytes where the manifest says", "cut short"}},
		{"byte changed", func(dir string, m *Manifest) {
			b, _ := os.ReadFile(part(dir))
			b[len(b)/2] ^= 1
			os.WriteFile(part(dir), b, 0o644)
		}, []string{"part-03.parquet", "BLAKE3 does not match"}},
		{"missing", func(dir string, m *Manifest) {
			os.Remove(part(dir))
		}, []string{"part-03.parquet", testkit.NotExistText(t)}},
		{"foreign Parquet", func(dir string, m *Manifest) {
			type other struct {
				Name string `parquet:"name"`
				N    int64  `parquet:"n"`
			}
			f, _ := os.Create(part(dir))
			w := parquet.NewGenericWriter[other](f)
			w.Write([]other{{"x", 1}})
			w.Close()
			f.Close()
			setPart(t, dir, m, 3)
		}, []string{"part-03.parquet", "columns are not a ddtsim table's"}},
		{"not Parquet", func(dir string, m *Manifest) {
			os.WriteFile(part(dir), []byte("Simulated DDT histogram:\n"), 0o644)
			setPart(t, dir, m, 3)
		}, []string{"part-03.parquet", "not a readable Parquet file"}},
		{"rows of another partition", func(dir string, m *Manifest) {
			b, _ := os.ReadFile(filepath.Join(dir, PartName(4)))
			os.WriteFile(part(dir), b, 0o644)
			m.Parts[3] = m.Parts[4]
			m.Parts[3].File = PartName(3)
		}, []string{"part-03.parquet", "is not of partition 3"}},
		{"another model", func(dir string, m *Manifest) {
			m.Model.Copies = 1 // the rows' DSIZE are of copies=2
			m.Paths = nil      // (only this one is merged: see corrupt)
		}, []string{"part-", "a table of another model"}},
		{"version 8", func(dir string, m *Manifest) {
			m.Version = 8
		}, []string{"_manifest.json", "format version 8"}},
		{"a read plan in version 3", func(dir string, m *Manifest) {
			m.Read = &estimate.Plan{Fraction: 0.05, Seed: 1}
		}, []string{"_manifest.json", "read plan"}},
		{"a group plan in version 4", func(dir string, m *Manifest) {
			m.Version = 4
			m.Read = &estimate.Plan{Fraction: 0.05, Seed: 1, Groups: true}
		}, []string{"_manifest.json", "read plan"}},
		{"a group plan in version 5", func(dir string, m *Manifest) {
			m.Version = 5
			m.Read = &estimate.Plan{Fraction: 0.05, Seed: 1, Groups: true}
		}, []string{"_manifest.json", "format version 5, a --read group sample of a development build", "scan again"}},
		{"a group plan in version 6", func(dir string, m *Manifest) {
			m.Version = 6
			m.Read = &estimate.Plan{Fraction: 0.05, Seed: 1, Groups: true}
		}, []string{"_manifest.json", "format version 6, a --read group sample of a development build", "scan again"}},
		{"partitions missing from the manifest", func(dir string, m *Manifest) {
			m.Parts = m.Parts[:8]
		}, []string{"_manifest.json", "8 partitions listed, want 16"}},
	} {
		err := corrupt(t, c.change)
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want it to say %q", c.name, err, w)
			}
		}
	}
	// A directory without a manifest, and one of another program.
	dir := t.TempDir()
	if _, err := Merge([]string{dir}, MergeOptions{}); !errors.Is(err, ErrNotScan) || !strings.Contains(err.Error(), "has no _manifest.json") {
		t.Errorf("empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"format":"something else"}`), 0o644)
	if _, err := Merge([]string{dir}, MergeOptions{}); !errors.Is(err, ErrNotScan) {
		t.Errorf("foreign manifest: %v", err)
	}
}

// setPart makes the manifest describe the partition file as it is.
func setPart(t *testing.T, dir string, m *Manifest, p int) {
	t.Helper()
	st, err := os.Stat(filepath.Join(dir, PartName(p)))
	if err != nil {
		t.Fatal(err)
	}
	m.Parts[p].Bytes = st.Size()
	m.Parts[p].Blake3 = fileBlake3(t, filepath.Join(dir, PartName(p)))
}

// What replaces what: only saved scans, empty directories and files.
func TestCheckReplaceable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, _ := testModel(t)
	paths, _ := randomScans(t, m, 1, 10, 1)
	other := filepath.Join(dir, "photos")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "a.jpg"), []byte("x"), 0o644)
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	for path, ok := range map[string]bool{paths[0]: true, empty: true, filepath.Join(dir, "new"): true, other: false} {
		err := CheckReplaceable(path)
		var ne *NotSavedScanError
		if ok != (err == nil) || (!ok && !errors.As(err, &ne)) {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// readerMemory is what one open partition file holds while merged: the
// heap that 32 readers in the middle of a 300,000-row file hold.
func TestReaderMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 300,000 entries")
	}
	m, p := testModel(t)
	tab := ddt.NewTable(p.DSize)
	for i := range 300000 * Partitions {
		if i%Partitions == 0 { // keep the table small: only partition 0's keys
			continue
		}
		k := key(i)
		if Partition((*[16]byte)(k[:16])) != 0 {
			continue
		}
		if tab.RefN(k, 128<<10, 1) {
			tab.Set(k, 4096)
		}
	}
	sc := testScan(t)
	sc.Model, sc.Table = m, tab
	dir := filepath.Join(t.TempDir(), "s")
	if err := Write(dir, sc); err != nil {
		t.Fatal(err)
	}
	mf, _ := ReadManifest(dir)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var rs []*partReader
	for range 32 {
		pr, err := openPart(dir, 0, mf.Parts[0], false)
		if err != nil {
			t.Fatal(err)
		}
		for range mf.Parts[0].Rows / 2 {
			if _, err := pr.next(); err != nil {
				t.Fatal(err)
			}
		}
		rs = append(rs, pr)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapInuse) - int64(before.HeapInuse)) / int64(len(rs))
	t.Logf("%d rows per file: %d bytes per open reader", mf.Parts[0].Rows, per)
	if per > readerMemory {
		t.Errorf("an open reader holds %d bytes, more than readerMemory (%d)", per, readerMemory)
	}
	for _, r := range rs {
		r.close()
	}
}

// A Write that fails leaves the old scan as it was and nothing beside it.
func TestWriteFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	m, _ := testModel(t)
	paths, _ := randomScans(t, m, 2, 500, 5)
	before, err := Read(paths[0], DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Read(paths[1], DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Failing before the replace, and when a partition file is created
	// (a full disk).
	for _, w := range []*Writer{
		{BeforeReplace: func() error { return errors.New("disk on fire") }},
		{CreateFault: func(name string) error {
			if filepath.Base(name) == PartName(3) {
				return errors.New("disk on fire")
			}
			return nil
		}},
	} {
		if err := w.Write(paths[0], other); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("Write: %v", err)
		}
		after, err := Read(paths[0], DecodeOptions{})
		if err != nil || !reflect.DeepEqual(entries(after), entries(before)) {
			t.Errorf("the old scan changed: %v", err)
		}
		ls, _ := os.ReadDir(filepath.Dir(paths[0]))
		for _, e := range ls {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left behind: %s", e.Name())
			}
		}
	}
}

// A table larger than Writer.Budget is written in passes over key ranges
// (within a partition, or over several): the same partition files as one
// pass writes.
func TestWriteInPasses(t *testing.T) {
	m, _ := testModel(t)
	paths, _ := randomScans(t, m, 1, 3000, 11)
	sc, err := Read(paths[0], DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := readParts(t, paths[0])
	for _, budget := range []int64{rowBytes * 1000, rowBytes * 50} { // 4 passes; 64 passes
		dir := filepath.Join(t.TempDir(), "s")
		if err := (&Writer{Budget: budget}).Write(dir, sc); err != nil {
			t.Fatal(err)
		}
		if got := readParts(t, dir); !reflect.DeepEqual(got, want) {
			t.Errorf("budget %d: partition files differ from one pass's", budget)
		}
	}
}

// Scans made with --read keep their plan (format version 4; without a
// plan, version 3, which older readers read); merged, they give the
// tally of the merged table of the records read, the counters summed
// (MaxLSize the largest); scans of another plan, or a full scan, are
// refused as scans of other properties are, and so is the SQL path,
// which sees only a histogram.
func TestMergeReadPlans(t *testing.T) {
	t.Parallel()
	m, _ := testModel(t)
	m.Sample = 1
	paths, all := randomScans(t, m, 2, 800, 3)
	plan := &estimate.Plan{Fraction: 0.05, Seed: 7}
	for i, p := range paths {
		sc, err := Read(p, DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Version != 3 {
			t.Errorf("a scan without a plan written as version %d", sc.Version)
		}
		sc.Read = plan
		sc.Counters.Unread, sc.Counters.DataLSize, sc.Counters.MaxLSize = 100, 100<<17, uint64(64<<10)<<i
		if err := Write(p, sc); err != nil {
			t.Fatal(err)
		}
		mf, err := ReadManifest(p)
		if err != nil || mf.Version != 4 || mf.Read == nil || *mf.Read != *plan {
			t.Fatalf("saved plan: %v, version %d, %+v", err, mf.Version, mf.Read)
		}
		// A group plan is version 7: a ddtsim reading only 4 would take
		// its (content, group) keys for contents, one reading only 5 its
		// files of one record for empty groups.
		g := *plan
		g.Groups = true
		if v := WriteVersion(&Header{Read: &g}); v != 7 {
			t.Errorf("a group plan written as version %d", v)
		}
	}
	got, err := Merge(paths, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Read == nil || *got.Read != *plan || got.ReadSample == nil {
		t.Fatalf("merged plan %+v, tally %v", got.Read, got.ReadSample)
	}
	if c := got.Counters; c.Unread != 200 || c.DataLSize != 200<<17 || c.MaxLSize != 128<<10 {
		t.Errorf("counters: unread %d, data %d, largest %d", c.Unread, c.DataLSize, c.MaxLSize)
	}
	want := estimate.TallyOf(func(f func(ddt.Entry) bool) { all.Range(func(_ ddt.Key, e ddt.Entry) bool { return f(e) }) })
	in := estimate.Input{Fraction: plan.Fraction, Records: 5000, Read: 1000, MaxLSize: 128 << 10, MaxDSize: 256 << 10, LSize: 5000 << 17}
	a, b := in, in
	a.Tally, b.Tally = want, got.ReadSample
	if want.Len() == 0 || !reflect.DeepEqual(estimate.Compute(a), estimate.Compute(b)) {
		t.Errorf("the merged tally (%d kinds) is not one table's (%d kinds)", got.ReadSample.Len(), want.Len())
	}
	if _, err := MergeHistogram(paths, func() *ddt.Histogram { h, _ := all.Summarize(); return h }()); err == nil || !strings.Contains(err.Error(), "--read") {
		t.Errorf("MergeHistogram of --read scans: %v", err)
	}

	// Another seed, another fraction, a full scan: refused.
	other, _ := randomScans(t, m, 1, 50, 4)
	for _, o := range []*estimate.Plan{{Fraction: 0.05, Seed: 8}, {Fraction: 0.15, Seed: 7}, nil} {
		sc, err := Read(other[0], DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc.Read = o
		if err := Write(other[0], sc); err != nil {
			t.Fatal(err)
		}
		_, err = Merge(append([]string{paths[0]}, other[0]), MergeOptions{})
		var me *ModelError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), "--read: 5% of the records, seed 7 vs ") {
			t.Errorf("plan %+v merged with 5%% seed 7: %v", o, err)
		}
	}
}

// AddCounters adds every counter but the largest LSIZE, of which it
// keeps the largest.
func TestAddCountersMaxLSize(t *testing.T) {
	a := analyzer.Counters{Records: 3, MaxLSize: 4096, ReadLSize: 10}
	AddCounters(&a, &analyzer.Counters{Records: 4, MaxLSize: 512, ReadLSize: 5})
	if a.Records != 7 || a.MaxLSize != 4096 || a.ReadLSize != 15 {
		t.Errorf("%+v", a)
	}
}
