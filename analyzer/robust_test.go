//go:build linux

package analyzer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
	"golang.org/x/sys/unix"
)

// An EIO in the middle of one file: reported with path and reason, counted,
// the other files scanned in full.
func TestReadErrorIsReportedAndScanGoesOn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	testkit.Write(t, bad, testkit.Rand(1, 512<<10))
	testkit.Write(t, filepath.Join(dir, "good"), testkit.Rand(2, 256<<10))
	faults := &source.Faults{ReadFault: func(path string, off uint64) error {
		if path == bad && off == 256<<10 {
			return &os.PathError{Op: "read", Path: path, Err: syscall.EIO}
		}
		return nil
	}}
	res, warns := scanWarn(t, Options{Policy: testkit.Policy(t, zio.Off), Sparse: model.SparseAuto, Faults: faults}, dir)
	if len(warns) != 1 || !strings.Contains(warns[0], bad) || !strings.Contains(warns[0], "input/output error") {
		t.Errorf("warnings %q; want one naming %s and the I/O error", warns, bad)
	}
	if res.Counters.Errors != 1 || res.Counters.Files != 2 {
		t.Errorf("counters %+v; want 1 error, 2 files", res.Counters)
	}
	// good: 2 records; bad: records 0 and 1 before the error (one worker
	// may also have read records after it in another chunk: none here, the
	// file is one chunk).
	if res.Counters.Stored != 4 {
		t.Errorf("stored %d records, want 4 (2 of good, 2 of bad before the error)", res.Counters.Stored)
	}
}

// A file that grows, or shrinks, while it is read: a warning, counted as
// changed, not as an error.
func TestFileChangedDuringScan(t *testing.T) {
	t.Parallel()
	for _, grow := range []bool{true, false} {
		dir := t.TempDir()
		f := filepath.Join(dir, "log")
		testkit.Write(t, f, testkit.Rand(1, 384<<10))
		faults := &source.Faults{ReadFault: func(path string, off uint64) error {
			if path == f && off == 128<<10 {
				if grow {
					h, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
					h.Write([]byte("more\n"))
					h.Close()
					os.Chtimes(path, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
				} else {
					os.Truncate(path, 200<<10)
				}
			}
			return nil
		}}
		res, warns := scanWarn(t, Options{Policy: testkit.Policy(t, zio.Off), Sparse: model.SparseAuto, Faults: faults}, dir)
		if res.Counters.Changed != 1 || res.Counters.Errors != 0 || len(warns) != 1 || !strings.Contains(warns[0], "while it was read") {
			t.Errorf("grow=%v: changed %d, errors %d, warnings %q; want 1 changed warning", grow, res.Counters.Changed, res.Counters.Errors, warns)
		}
	}
}

// A sparse file of 8 TiB apparent size with 128 KiB of data: hole runs are
// accounted in one step (the record count is exact, only data is read).
func TestHugeSparseFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "huge")
	h, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 43
	if _, err := h.WriteAt(testkit.Rand(4, 128<<10), 1<<40); err != nil {
		h.Close()
		t.Skipf("file system cannot hold a file with data at 1 TiB: %v", err)
	}
	if err := h.Truncate(size); err != nil {
		h.Close()
		t.Skipf("file system cannot hold an 8 TiB file: %v", err)
	}
	h.Close()
	var st syscall.Stat_t
	syscall.Stat(f, &st)
	if st.Blocks*512 >= st.Size {
		t.Skip("file system does not keep holes")
	}
	for _, c := range []struct {
		comp  zio.Compression
		sp    model.Sparse
		holes uint64
	}{{zio.LZ4, model.SparseNever, size/(128<<10) - 1}, {zio.Off, model.SparseNever, 0}} {
		res, warns := scanT(t, testkit.Policy(t, c.comp), c.sp, f)
		k := res.Counters
		if len(warns) != 0 || k.Records != size/(128<<10) || k.Holes != c.holes || k.ReadBytes != 128<<10 {
			t.Errorf("compression %v: counters %+v, warnings %q", c.comp, k, warns)
		}
		if c.comp == zio.Off {
			// 2^26 − 1 zero blocks in one key: bucket 25.
			if b := res.Histogram[25]; b.Allocated.Blocks != 1 || b.Referenced.Blocks != size/(128<<10)-1 {
				t.Errorf("zero blocks bucket: %+v", b)
			}
		}
	}
}

// A sparse file of 8 EiB − 1 bytes, the largest Linux allows (tmpfs, at
// /dev/shm, takes it; ext4 stops at 16 TiB), with 128 KiB of data at 1 TiB
// and 100 bytes in its last page: its 2^46 records are counted, the holes
// in one step each, only the two records holding data are read (the last
// one is 128 KiB − 1 bytes), and the scan allocates no memory by the
// record. The data in the last page is found though lseek(SEEK_DATA) does
// not see it there (source's dataExtents).
func TestHugeSparseFile8EiB(t *testing.T) {
	var fs syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &fs) != nil || fs.Type != 0x01021994 { // TMPFS_MAGIC
		t.Skip("no tmpfs at /dev/shm: no file system here holds a file of 8 EiB")
	}
	dir, err := os.MkdirTemp("/dev/shm", "ddtsim-8eib-")
	if err != nil {
		t.Skipf("/dev/shm: %v", err)
	}
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "huge")
	h, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1<<63 - 1
	const records = 1 << 46 // the last one 128 KiB − 1 bytes
	tail := []byte("the last bytes of the largest file there can be, 100 bytes long........................ the end.")
	if err := h.Truncate(size); err != nil {
		h.Close()
		t.Skipf("tmpfs here does not take a file of 8 EiB − 1 bytes: %v", err)
	}
	if _, err := h.WriteAt(testkit.Rand(4, 128<<10), 1<<40); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt(tail, size-200); err != nil {
		t.Fatal(err)
	}
	h.Close()
	for _, c := range []struct {
		comp         zio.Compression
		holes, zeros uint64
	}{{zio.LZ4, records - 2, 0}, {zio.Off, 0, records - 2}} {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc
		res, warns := scanT(t, testkit.Policy(t, c.comp), model.SparseNever, f)
		runtime.ReadMemStats(&ms)
		k := res.Counters
		if len(warns) != 0 || k.Files != 1 || k.LogicalBytes != size || k.Records != records || k.Holes != c.holes ||
			k.ZeroBlocks != c.zeros || k.Stored != records-c.holes || k.ReadBytes != 128<<10+128<<10-1 {
			t.Errorf("compression %v: counters %+v, warnings %q", c.comp, k, warns)
		}
		if grew := ms.TotalAlloc - alloc; grew > 64<<20 {
			t.Errorf("compression %v: %d MiB allocated for a file of 2 records of data", c.comp, grew>>20)
		}
	}
}

// Hole runs cost nothing per record even at recordsize 512: a 1 TiB
// sparse file is 2^31 records.
func TestSparseFileSmallRecordsize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "tb")
	h, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(1 << 40); err != nil {
		h.Close()
		t.Skipf("no 1 TiB file here: %v", err)
	}
	h.Close()
	p := testkit.Policy(t, zio.LZ4)
	p.RecordSize = 512
	res, warns := scanT(t, p, model.SparseNever, f)
	if len(warns) != 0 || res.Counters.Records != 1<<31 || res.Counters.Holes != 1<<31 || res.Counters.ReadBytes != 0 {
		t.Errorf("counters %+v, warnings %q", res.Counters, warns)
	}
}

// A file that cannot be opened (a mode-000 file, for a user other than
// root: its open fails with EACCES, here by the test seam, since the tests
// run as root) keeps its listed size in the file data, so the result says
// how much it does not cover (found by a new user: a mode-000 file
// vanished from the totals).
func TestUnopenableFileCounted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	testkit.Write(t, bad, testkit.Rand(1, 300<<10))
	testkit.Write(t, filepath.Join(dir, "good"), testkit.Rand(2, 100<<10))
	faults := &source.Faults{OpenFault: func(path string) error {
		if path == bad {
			return unix.EACCES
		}
		return nil
	}}
	res, warns := scanWarn(t, Options{Policy: testkit.Policy(t, zio.Off), Sparse: model.SparseAuto, Faults: faults}, dir)
	c := res.Counters
	if len(warns) != 1 || !strings.Contains(warns[0], "bad") || c.Errors != 1 || c.Files != 2 ||
		c.LogicalBytes != 400<<10 || c.ScannedBytes != 100<<10 {
		t.Errorf("warnings %q, counters %+v; want one error, 2 files of 400K, 100K covered", warns, c)
	}
	// Not sharded, the share is all the file data, the file not read
	// included; it is counted as unreadable (found by a new user: the
	// shards' "share" line in a scan without shards).
	if c.ShareBytes != c.LogicalBytes || c.Unreadable != 1 || c.UnreadableBytes != 300<<10 {
		t.Errorf("share %d of %d bytes, %d unreadable files of %d bytes; want all, 1 of 300K",
			c.ShareBytes, c.LogicalBytes, c.Unreadable, c.UnreadableBytes)
	}
}

// A file truncated while it is read (a 40 MiB file of 320 records cut to
// 10 MiB + 5 bytes, 81 records, when record 72 is read, four workers on
// its chunks of 64 records): the result holds its 81 records, the last
// with its 5 bytes, read in full whatever the chunks the other workers
// were on, and none past the new end, as the warning says; Done reports
// exactly those (found by a new user: 104 records stored of a file of 80).
// Records past the new end that were read before the truncation stay
// counted, and reported done, and the warning says so. Cut at a record's
// boundary (10 MiB, 80 records: the read of record 80 finds nothing), the
// same.
func TestFileTruncatedWhileRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		early uint64 // records of the third chunk read before the truncation
		comp  zio.Compression
		tail  uint64 // bytes left past record 80
	}{{"lz4", 0, zio.LZ4, 5}, {"off", 0, zio.Off, 5}, {"read-before", 6, zio.LZ4, 5},
		{"boundary", 0, zio.LZ4, 0}, {"boundary-read-before", 6, zio.LZ4, 0}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "big")
			testkit.Write(t, f, testkit.Rand(9, 320*rec))
			truncated, early := make(chan struct{}), make(chan struct{})
			if c.early == 0 {
				close(early)
			}
			// Once each: a read that finds the file shorter probes
			// records before it for its new end.
			var cut, readEarly sync.Once
			faults := &source.Faults{ReadFault: func(path string, off uint64) error {
				switch r := off / rec; {
				case r == 72:
					cut.Do(func() {
						<-early
						if err := os.Truncate(path, int64(80*rec+c.tail)); err != nil {
							t.Error(err)
						}
						close(truncated)
					})
				case r >= 128 && r < 128+c.early:
				case r == 128+c.early && c.early > 0:
					readEarly.Do(func() { close(early) })
					<-truncated
				case r >= 80:
					<-truncated
				}
				return nil
			}}
			prog := newProgress()
			var mu sync.Mutex
			var warns []string
			res, err := Run(context.Background(), []string{dir}, Options{Policy: testkit.Policy(t, c.comp), Jobs: 4,
				Done: prog.done, Faults: faults,
				Warn: func(path string, err error) { mu.Lock(); warns = append(warns, err.Error()); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			kept := uint64(80) // records left after the cut
			if c.tail > 0 {
				kept++
			}
			n := kept + c.early
			want := "the records past its new end are left out"
			if c.early > 0 {
				want = "records past its new end read before it shrank are counted"
			}
			k := res.Counters
			if len(warns) != 1 || !strings.Contains(warns[0], want) || k.Changed != 1 || k.Errors != 0 {
				t.Errorf("warnings %q, changed %d, errors %d; want one saying %q", warns, k.Changed, k.Errors, want)
			}
			if k.Stored != n || k.Records != n || k.Holes != 0 || k.ZeroBlocks != 0 || k.UniqueBlocks != n ||
				k.ScannedBytes != (80+c.early)*rec+c.tail || k.ReadBytes != k.ScannedBytes || k.LogicalBytes != 320*rec {
				t.Errorf("counters %+v; want %d records stored, %d bytes covered", k, n, (80+c.early)*rec+c.tail)
			}
			spans, _ := prog.skip(t)(prog.files[f].info)
			wantSpans := []Span{{0, kept}}
			if c.early > 0 {
				wantSpans = append(wantSpans, Span{128, 128 + c.early})
			}
			if !slices.Equal(spans, wantSpans) {
				t.Errorf("done %v, want %v", spans, wantSpans)
			}
		})
	}
}

// A file with nothing to read (all holes: an empty thin image) is still
// checked for changes once accounted: an image still being written looks
// empty at open, and must not pass for an empty disk silently.
func TestAllHoleFileChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "thin")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 1<<30); err != nil {
		t.Fatal(err)
	}
	w := &source.Walker{Paths: []string{dir}, Guest: func(f *os.File, path string) (vdisk.Disk, error) {
		// Written to after it was opened (the walker stamped it first).
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
		return vdisk.Raw(f)
	}}
	var changed []string
	res, err := scanSource(context.Background(), w, Options{Policy: testkit.Policy(t, zio.LZ4), Warn: func(path string, err error) {
		if errors.Is(err, source.ErrChanged) {
			changed = append(changed, path)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counters.ReadBytes != 0 || res.Counters.Changed != 1 || len(changed) != 1 || changed[0] != p {
		t.Errorf("read %d bytes, %d changed (%q); want 0 read, the file changed", res.Counters.ReadBytes, res.Counters.Changed, changed)
	}
}
