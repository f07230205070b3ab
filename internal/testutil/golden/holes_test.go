//go:build linux || darwin || freebsd

package golden

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// firstHole returns the offset of the first hole of the file (its size when
// the filesystem reports no hole).
func firstHole(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return unix.Seek(int(f.Fd()), 0, unix.SEEK_HOLE)
}

func TestSyntheticHoles(t *testing.T) {
	t.Parallel()
	roots, err := Inputs()
	if err != nil {
		t.Fatal(err)
	}
	syn := roots[1]
	// sparse-4m has a 2 MiB hole at 1 MiB: if SEEK_HOLE does not find a hole
	// before its end, the filesystem does not support (or report) holes.
	st, err := os.Stat(filepath.Join(syn, "sparse-4m"))
	if err != nil {
		t.Fatal(err)
	}
	off, err := firstHole(filepath.Join(syn, "sparse-4m"))
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("filesystem of %s has no SEEK_HOLE: %v", syn, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if off >= st.Size() {
		t.Skipf("filesystem of %s does not report holes (SEEK_HOLE = %d, size %d)", syn, off, st.Size())
	}
	for _, tc := range []struct {
		name string
		size int64
	}{
		{"sparse-4m", 4 << 20},
		{"sparse-unaligned", 500 << 10},
		{"sparse-tail", 1 << 20},
	} {
		p := filepath.Join(syn, tc.name)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() != tc.size {
			t.Errorf("%s: size %d, want %d", tc.name, st.Size(), tc.size)
		}
		blocks := int64(st.Sys().(*syscall.Stat_t).Blocks)
		if blocks*512 >= st.Size() {
			t.Errorf("%s: st_blocks*512 = %d, size %d: no hole", tc.name, blocks*512, st.Size())
		}
		if off, err := firstHole(p); err != nil || off >= st.Size() {
			t.Errorf("%s: first hole at %d (%v), size %d", tc.name, off, err, st.Size())
		}
	}
}
