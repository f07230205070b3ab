package analyzer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/zio"
)

// An EIO in the middle of one file: reported with path and reason, counted,
// the other files scanned in full.
func TestReadErrorIsReportedAndScanGoesOn(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, randBytes(1, 512<<10))
	writeFile(t, filepath.Join(dir, "good"), randBytes(2, 256<<10))
	testReadFault = func(path string, off uint64) error {
		if path == bad && off == 256<<10 {
			return &os.PathError{Op: "read", Path: path, Err: syscall.EIO}
		}
		return nil
	}
	defer func() { testReadFault = nil }()
	res, warns := scanT(t, testPolicy(t, zio.Off), SparseAuto, dir)
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

// A file that disappears between listing and opening.
func TestVanishedFile(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	writeFile(t, gone, randBytes(1, 1000))
	writeFile(t, filepath.Join(dir, "stays"), randBytes(2, 1000))
	testBeforeOpen = func(path string) {
		if path == gone {
			os.Remove(path)
		}
	}
	defer func() { testBeforeOpen = nil }()
	res, warns := scanT(t, testPolicy(t, zio.Off), SparseAuto, dir)
	if len(warns) != 1 || !strings.Contains(warns[0], "no such file") || res.Counters.Errors != 1 || res.Counters.Files != 1 {
		t.Errorf("warnings %q, counters %+v; want one ENOENT error and 1 file", warns, res.Counters)
	}
}

// A file that grows, or shrinks, while it is read: a warning, counted as
// changed, not as an error.
func TestFileChangedDuringScan(t *testing.T) {
	for _, grow := range []bool{true, false} {
		dir := t.TempDir()
		f := filepath.Join(dir, "log")
		writeFile(t, f, randBytes(1, 384<<10))
		testReadFault = func(path string, off uint64) error {
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
		res, warns := scanT(t, testPolicy(t, zio.Off), SparseAuto, dir)
		testReadFault = nil
		if res.Counters.Changed != 1 || res.Counters.Errors != 0 || len(warns) != 1 || !strings.Contains(warns[0], "while it was read") {
			t.Errorf("grow=%v: changed %d, errors %d, warnings %q; want 1 changed warning", grow, res.Counters.Changed, res.Counters.Errors, warns)
		}
	}
}

// --follow: a symlink loop ends; --count-links counts each name; a path
// named twice (or inside another) is scanned once.
func TestFollowLinksAndRepeats(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	data := randBytes(3, 128<<10)
	writeFile(t, filepath.Join(sub, "f"), data)
	if err := os.Symlink(dir, filepath.Join(sub, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(sub, "f"), filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	p := testPolicy(t, zio.Off)
	run := func(o Options, paths ...string) Counters {
		t.Helper()
		o.Policy = p
		res, err := Scan(context.Background(), paths, o)
		if err != nil {
			t.Fatal(err)
		}
		return res.Counters
	}
	if c := run(Options{Follow: true}, dir); c.Files != 1 || c.RepeatedDirs != 1 || c.Stored != 1 {
		t.Errorf("follow: %+v; want 1 file, the loop skipped once", c)
	}
	if c := run(Options{}, dir, sub, filepath.Join(sub, "f")); c.Files != 1 || c.Stored != 1 || c.Symlinks != 1 {
		t.Errorf("repeated paths: %+v; want the file once", c)
	}
	if c := run(Options{CountLinks: true}, dir); c.Files != 2 || c.Stored != 2 || c.UniqueBlocks != 1 {
		t.Errorf("count links: %+v; want 2 files, one block referenced twice", c)
	}
}

// Special files: FIFOs and sockets are skipped (and warned about when named
// explicitly); a character device named explicitly too.
func TestSpecialFilesNamedExplicitly(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	res, warns := scanT(t, testPolicy(t, zio.Off), SparseAuto, fifo, "/dev/null")
	if res.Counters.Special != 2 || len(warns) != 2 || !strings.Contains(warns[0], "FIFO") || !strings.Contains(warns[1], "character device") {
		t.Errorf("counters %+v, warnings %q", res.Counters, warns)
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
		sp    Sparse
		holes uint64
	}{{zio.LZ4, SparseNever, size/(128<<10) - 1}, {zio.Off, SparseNever, 0}} {
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

// Symlinks named as paths are followed (to a file and to a directory);
// a file named twice is scanned once and counted as repeated.
func TestSymlinkArgumentsAndRepeatedFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	writeFile(t, filepath.Join(real, "f"), randBytes(7, 200<<10))
	flink := filepath.Join(dir, "flink")
	dlink := filepath.Join(dir, "dlink")
	if err := os.Symlink(filepath.Join(real, "f"), flink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, dlink); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{flink}, {dlink}} {
		res, warns := scanT(t, testPolicy(t, zio.Off), SparseAuto, args...)
		if len(warns) != 0 || res.Counters.Files != 1 || res.Counters.Stored != 2 {
			t.Errorf("%v: warnings %q, counters %+v; want the file scanned", args, warns, res.Counters)
		}
	}
	f := filepath.Join(real, "f")
	res, _ := scanT(t, testPolicy(t, zio.Off), SparseAuto, f, f, real)
	if c := res.Counters; c.Files != 1 || c.RepeatedFiles != 2 || c.HardLinks != 0 || c.Stored != 2 {
		t.Errorf("repeated file: %+v", c)
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
	res, warns := scanT(t, p, SparseNever, f)
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
	testBeforeOpen = func(path string) {
		if path == bad {
			os.Remove(path)
			os.Symlink("good", path)
		}
	}
	defer func() { testBeforeOpen = nil }()
	res, warns := scanT(t, testPolicy(t, zio.Off), SparseAuto, dir)
	c := res.Counters
	if len(warns) != 1 || !strings.Contains(warns[0], "bad") || c.Errors != 1 || c.Files != 2 ||
		c.LogicalBytes != 400<<10 || c.ScannedBytes != 100<<10 {
		t.Errorf("warnings %q, counters %+v; want one error, 2 files of 400K, 100K covered", warns, c)
	}
}
