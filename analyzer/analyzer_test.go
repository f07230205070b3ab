package analyzer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// A sparse file: 128K random, a 256K hole, 128K random (512K, 4 records).
func writeSparse(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(testkit.Rand(1, 128<<10)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(testkit.Rand(2, 128<<10), 384<<10); err != nil {
		t.Fatal(err)
	}
}

func scanT(t *testing.T, p *zio.Policy, sp model.Sparse, paths ...string) (*Analysis, []string) {
	t.Helper()
	var mu sync.Mutex
	var warns []string
	res, err := Run(context.Background(), paths, Options{Policy: p, Sparse: sp,
		Warn: func(path string, err error) { mu.Lock(); warns = append(warns, path+": "+err.Error()); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	return res, warns
}

// Zero records: holes with compression on; with compression off, holes only
// when copied sparse (cp --sparse=always, or auto on a sparse-looking file).
func TestZeroRecordsAndSparseModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// dense: 128K random + 128K zeros written as data (not sparse on disk).
	testkit.Write(t, filepath.Join(dir, "dense"), append(testkit.Rand(3, 128<<10), make([]byte, 128<<10)...))
	writeSparse(t, filepath.Join(dir, "sparse"))
	st := testkit.Stat(t, filepath.Join(dir, "sparse"), false)
	// On Windows a file has holes only once marked sparse (Wine 8 reports
	// the allocation of the Linux file below, holes included).
	fsHoles := st.Blocks*512 < st.Size && runtime.GOOS != "windows"
	cases := []struct {
		name              string
		comp              zio.Compression
		sp                model.Sparse
		holes, zeroBlocks uint64
	}{
		{"lz4 never", zio.LZ4, model.SparseNever, 3, 0},
		{"off always", zio.Off, model.SparseAlways, 3, 0},
		{"off never", zio.Off, model.SparseNever, 0, 3},
	}
	if fsHoles {
		cases = append(cases, struct {
			name              string
			comp              zio.Compression
			sp                model.Sparse
			holes, zeroBlocks uint64
		}{"off auto", zio.Off, model.SparseAuto, 2, 1})
	}
	for _, c := range cases {
		res, warns := scanT(t, testkit.Policy(t, c.comp), c.sp, dir)
		if len(warns) > 0 {
			t.Fatal(warns)
		}
		k := res.Counters
		if k.Records != 6 || k.Holes != c.holes || k.ZeroBlocks != c.zeroBlocks || k.Stored != 6-c.holes {
			t.Errorf("%s: counters %+v; want 6 records, %d holes, %d zero blocks", c.name, k, c.holes, c.zeroBlocks)
		}
		if fsHoles && (k.SourceHoles != 2 || k.ReadBytes != 4*128<<10) {
			t.Errorf("%s: %d source holes, %d bytes read; want 2 and %d (holes are never read)",
				c.name, k.SourceHoles, k.ReadBytes, 4*128<<10)
		}
	}
	if !fsHoles {
		t.Log("file system does not keep holes: sparse=auto case and source-hole reads not checked")
	}
}

// Symlinks inside directories are not followed, FIFOs are skipped and
// counted, hard links count once, a missing path is reported and the scan
// goes on: the walk's counters (package source, which tests the walk
// itself) reach the scan's, and its files are scanned.
func TestWalkSpecialEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := testkit.Rand(5, 300<<10)
	testkit.Write(t, filepath.Join(dir, "a", "file"), data)
	if err := os.Symlink(filepath.Join(dir, "a", "file"), filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a", "file"), filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := testkit.Mkfifo(t, filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, filepath.Join(dir, "empty"), nil)
	missing := filepath.Join(dir, "missing")
	res, warns := scanT(t, testkit.Policy(t, zio.Off), model.SparseAuto, dir, missing)
	k := res.Counters
	if k.Files != 2 || k.Symlinks != 2 || k.Special != 1 || k.HardLinks != 1 || k.Errors != 1 {
		t.Errorf("counters %+v; want 2 files (file, empty), 2 symlinks, 1 special, 1 hard link, 1 error", k)
	}
	if len(warns) != 1 || !bytes.Contains([]byte(warns[0]), []byte(missing)) {
		t.Errorf("warnings %q; want one naming %s", warns, missing)
	}
	// 300K with recordsize 128K: 3 records, stored once each.
	if k.Records != 3 || k.Stored != 3 || k.UniqueBlocks != 3 || k.LogicalBytes != 300<<10 {
		t.Errorf("counters %+v; want 3 records stored once", k)
	}
}

// A duplicate content is compressed once; refcnt and buckets follow.
func TestDedupAndCompressOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := testkit.Rand(9, 128<<10)
	var img []byte
	for i := 0; i < 5; i++ {
		img = append(img, rec...)
	}
	testkit.Write(t, filepath.Join(dir, "img"), img)
	testkit.Write(t, filepath.Join(dir, "copy"), img)
	res, _ := scanT(t, testkit.Policy(t, zio.LZ4), model.SparseAuto, dir)
	if res.Counters.Compressed != 1 {
		t.Errorf("compressor ran %d times, want 1", res.Counters.Compressed)
	}
	// One key with refcnt 10: bucket 8 (2^3).
	b := res.Histogram[3]
	if b.Allocated.Blocks != 1 || b.Referenced.Blocks != 10 || b.Referenced.PSize != 10*128<<10 {
		t.Errorf("bucket 8 = %+v", b)
	}
}

// The result does not depend on the number of workers.
func TestDeterministicAcrossJobs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := 0; i < 20; i++ {
		data := testkit.Rand(int64(i%7), 50000+i*40000)
		testkit.Write(t, filepath.Join(dir, string(rune('a'+i))), data)
	}
	var first *Analysis
	for _, jobs := range []int{1, 2, 7} {
		res, err := Run(context.Background(), []string{dir}, Options{Policy: testkit.Policy(t, zio.LZ4), Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
			continue
		}
		if *res.Histogram != *first.Histogram || !reflect.DeepEqual(res.Counters, first.Counters) {
			t.Errorf("jobs=%d: result differs from jobs=1", jobs)
		}
	}
}
