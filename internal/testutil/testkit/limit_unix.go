//go:build unix

package testkit

import (
	"testing"

	"golang.org/x/sys/unix"
)

// SetFileLimit sets the process's soft limit of open files (RLIMIT_NOFILE)
// to n until the test ends; the test is skipped where that cannot be done
// (n above the hard limit, or no permission).
func SetFileLimit(t testing.TB, n uint64) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Skip(err)
	}
	if n > uint64(old.Max) {
		t.Skipf("hard limit of open files %d, below %d", old.Max, n)
	}
	lim := old
	setRlim(&lim.Cur, n)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_NOFILE, &old) })
}

// setRlim sets an rlim_t field, uint64 on Linux and macOS, int64 on
// FreeBSD.
func setRlim[T int64 | uint64](p *T, v uint64) { *p = T(v) }
