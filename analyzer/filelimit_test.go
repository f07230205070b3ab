package analyzer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Under ulimit -n 64 a tree 20 directories deep with 20 small files at
// each level, and a directory of 500, is scanned whole at -j 1 and 2: no
// file lost to EMFILE (found by a new user: the deeper queue to the
// workers and the files opened ahead took the descriptors, and a scan at
// ulimit -n 64 lost 1,940 of 2,000 files).
func TestLowFileLimitScansAll(t *testing.T) {
	dir := t.TempDir()
	d := dir
	for level := range 20 {
		d = filepath.Join(d, fmt.Sprintf("l%02d", level))
		for i := range 20 {
			testkit.Write(t, filepath.Join(d, fmt.Sprintf("f%02d", i)), []byte(fmt.Sprintf("%d %d", level, i)))
		}
	}
	for i := range 500 {
		testkit.Write(t, filepath.Join(dir, "flat", fmt.Sprintf("f%03d", i)), []byte(fmt.Sprintf("x%d", i)))
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil || len(ents) > 24 {
		t.Skipf("%d descriptors open already (%v)", len(ents), err)
	}
	testkit.SetFileLimit(t, 64)
	for _, jobs := range []int{1, 2} {
		var warns []string
		var mu sync.Mutex
		res, err := Run(context.Background(), []string{dir}, Options{Policy: testkit.Policy(t, zio.LZ4), Sparse: model.SparseAuto, Jobs: jobs,
			Warn: func(path string, err error) { mu.Lock(); warns = append(warns, path+": "+err.Error()); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Counters; c.Files != 900 || c.Errors != 0 || c.Dirs != 22 {
			t.Errorf("-j %d: %d files, %d directories, %d errors (%.200q); want 900 files, 22 directories, none", jobs, c.Files, c.Dirs, c.Errors, warns)
		}
	}
}
