//go:build linux

package scan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// smallTmpfs mounts a tmpfs of size bytes on a new directory and returns
// it (unmounted at the end of the test); it skips the test where that is
// not permitted (not root, or no mount in this container).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// The spill directory on a file system that fills up (a real tmpfs of
// 512 KiB, --tmpdir there) while the table spills: one warning naming the
// spill directory and "no space left on device", saying that the table
// stays in memory; the runs written before stay and are merged; the
// table and the counters are exactly those of a scan without --mem, and
// Close leaves the file system empty.
func TestSpillDiskFull(t *testing.T) {
	tmp := smallTmpfs(t, "512k")
	dir := t.TempDir()
	data := testkit.Rand(71, 16<<20)
	testkit.Write(t, filepath.Join(dir, "a"), data)
	testkit.Write(t, filepath.Join(dir, "b"), data[3<<20:7<<20]) // dedup
	// 512-byte records: some 40000 entries, 1.2 MiB of runs: more than
	// twice what the tmpfs holds, however the spills fall (with 1 MiB the
	// runs fitted once in a full go test ./...).
	set, err := model.Parse(model.Text{Properties: []string{"recordsize=512", "compression=lz4"}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()

	const mem = 256 << 10
	var mu sync.Mutex
	var warns []error
	res, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{Jobs: 2, Mem: mem, TmpDir: tmp,
		SpillWarn: func(err error) { mu.Lock(); warns = append(warns, err); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			res.Close() // a failed check: the tmpfs is unmounted after
		}
	}()
	var se *ddt.SpillError
	if len(warns) != 1 || !errors.As(warns[0], &se) {
		t.Fatalf("spill warnings %v; want one *ddt.SpillError", warns)
	}
	if filepath.Dir(se.Dir) != tmp || !strings.HasPrefix(filepath.Base(se.Dir), "ddtsim-spill-") ||
		!strings.HasPrefix(se.Error(), "writing spill run to "+se.Dir+": no space left on device; ") ||
		!strings.Contains(se.Error(), "the table stays in memory") {
		t.Errorf("warning %q; want it to name the spill directory in %s and the full disk", se, tmp)
	}
	k := res.Analysis.Counters
	t.Logf("%d runs before the disk was full; the table's peak %d bytes", k.SpillRuns, k.TableBytes)
	if k.SpillRuns == 0 || k.TableBytes <= mem {
		t.Errorf("%d runs, peak %d bytes: want runs written before the disk was full, then the table past --mem", k.SpillRuns, k.TableBytes)
	}
	if len(res.Problems) != 0 || res.Partial {
		t.Errorf("problems %v, partial %v", res.Problems, res.Partial)
	}
	if *res.Analysis.Histogram != *want.Analysis.Histogram {
		t.Errorf("histogram %+v, want %+v", res.Analysis.Histogram.Total(), want.Analysis.Histogram.Total())
	}
	// All the counters, but for the table's memory and the compressor
	// runs: a content spilled and met again is compressed again (see
	// ddt/spill.go), at least as many runs.
	w := want.Analysis.Counters
	if k.Compressed < w.Compressed {
		t.Errorf("%d compressor runs, fewer than without --mem (%d)", k.Compressed, w.Compressed)
	}
	k.TableBytes, k.SpillRuns, k.Compressed, w.TableBytes, w.Compressed = 0, 0, 0, 0, 0
	if !reflect.DeepEqual(k, w) {
		t.Errorf("counters\n got %+v\nwant %+v", k, w)
	}
	res.Close()
	closed = true
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("after Close: %d entries in the tmpfs (%v)", len(left), err)
	}
}
