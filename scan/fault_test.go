package scan_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/sourcetest"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
	"github.com/ddtsim/ddtsim/scan"
)

// Disk images read as their guests see them (--guest) through reads that
// come back half short with no error: the guest reader goes through the
// same seam, and the scan reads the rest; the result is exactly a clean
// scan's, without a problem.
func TestGuestShortReads(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	raw := filepath.Join(t.TempDir(), "raw")
	base := append(testkit.Rand(1, 3<<20), make([]byte, 1<<20)...)
	testkit.Write(t, raw, base)
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", raw, filepath.Join(dir, "base.qcow2"))
	copy(base[1<<20:], testkit.Rand(2, 1<<20))
	testkit.Write(t, raw, base)
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", "-B", "base.qcow2", "-F", "qcow2", raw, filepath.Join(dir, "vm.qcow2"))
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "vmdk", raw, filepath.Join(dir, "vm.vmdk"))
	want := runGuest(t, guestSettings(t), scan.Options{Jobs: 2}, dir)
	faults, reads := sourcetest.ShortReads(func(n int) int { return max(n/2, 1) })
	got := runGuest(t, guestSettings(t), scan.Options{Jobs: 2, Faults: faults}, dir)
	if reads() == 0 {
		t.Fatal("no read went through the seam")
	}
	if len(got.Problems) != 0 || len(want.Problems) != 0 {
		t.Errorf("problems %+v (clean: %+v)", got.Problems, want.Problems)
	}
	if *got.Analysis.Histogram != *want.Analysis.Histogram || !reflect.DeepEqual(got.Analysis.Counters, want.Analysis.Counters) {
		t.Errorf("short reads:\n got %+v\nwant %+v", got.Analysis.Counters, want.Analysis.Counters)
	}
}
