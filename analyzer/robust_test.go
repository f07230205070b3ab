package analyzer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/internal/testseam"
	"github.com/ddtsim/ddtsim/model"
	"github.com/ddtsim/ddtsim/zio"
)

// An EIO in the middle of one file: reported with path and reason, counted,
// the other files scanned in full.
func TestReadErrorIsReportedAndScanGoesOn(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, randBytes(1, 512<<10))
	writeFile(t, filepath.Join(dir, "good"), randBytes(2, 256<<10))
	testseam.ReadFault = func(path string, off uint64) error {
		if path == bad && off == 256<<10 {
			return &os.PathError{Op: "read", Path: path, Err: syscall.EIO}
		}
		return nil
	}
	defer func() { testseam.ReadFault = nil }()
	res, warns := scanT(t, testPolicy(t, zio.Off), model.SparseAuto, dir)
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
	for _, grow := range []bool{true, false} {
		dir := t.TempDir()
		f := filepath.Join(dir, "log")
		writeFile(t, f, randBytes(1, 384<<10))
		testseam.ReadFault = func(path string, off uint64) error {
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
		}
		res, warns := scanT(t, testPolicy(t, zio.Off), model.SparseAuto, dir)
		testseam.ReadFault = nil
		if res.Counters.Changed != 1 || res.Counters.Errors != 0 || len(warns) != 1 || !strings.Contains(warns[0], "while it was read") {
			t.Errorf("grow=%v: changed %d, errors %d, warnings %q; want 1 changed warning", grow, res.Counters.Changed, res.Counters.Errors, warns)
		}
	}
}

// A sparse file of 8 TiB apparent size with 128 KiB of data: hole runs are
// accounted in one step (the record count is exact, only data is read).
func TestHugeSparseFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "huge")
	h, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 43
	if _, err := h.WriteAt(randBytes(4, 128<<10), 1<<40); err != nil {
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
		res, warns := scanT(t, testPolicy(t, c.comp), c.sp, f)
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

// Hole runs cost nothing per record even at recordsize 512: a 1 TiB
// sparse file is 2^31 records.
func TestSparseFileSmallRecordsize(t *testing.T) {
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
	p := testPolicy(t, zio.LZ4)
	p.RecordSize = 512
	res, warns := scanT(t, p, model.SparseNever, f)
	if len(warns) != 0 || res.Counters.Records != 1<<31 || res.Counters.Holes != 1<<31 || res.Counters.ReadBytes != 0 {
		t.Errorf("counters %+v, warnings %q", res.Counters, warns)
	}
}

// A file that cannot be opened (here: replaced by a symlink after it was
// listed, which O_NOFOLLOW refuses; permissions act the same for a user
// other than root) keeps its listed size in the file data, so the result
// says how much it does not cover (found by a new user: a mode-000 file
// vanished from the totals).
func TestUnopenableFileCounted(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, randBytes(1, 300<<10))
	writeFile(t, filepath.Join(dir, "good"), randBytes(2, 100<<10))
	testseam.BeforeOpen = func(path string) {
		if path == bad {
			os.Remove(path)
			os.Symlink("good", path)
		}
	}
	defer func() { testseam.BeforeOpen = nil }()
	res, warns := scanT(t, testPolicy(t, zio.Off), model.SparseAuto, dir)
	c := res.Counters
	if len(warns) != 1 || !strings.Contains(warns[0], "bad") || c.Errors != 1 || c.Files != 2 ||
		c.LogicalBytes != 400<<10 || c.ScannedBytes != 100<<10 {
		t.Errorf("warnings %q, counters %+v; want one error, 2 files of 400K, 100K covered", warns, c)
	}
}
