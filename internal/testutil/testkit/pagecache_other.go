//go:build !linux && !freebsd

package testkit

import (
	"runtime"
	"testing"
)

// Evict: the page cache cannot be emptied of one file on this platform
// (no posix_fadvise DONTNEED, or none that drops pages): the test is
// skipped.
func Evict(t testing.TB, path string) {
	t.Helper()
	t.Skipf("%s: no dropping a file's pages from the page cache", runtime.GOOS)
}

// NeedDroppableCache skips the test: see Evict.
func NeedDroppableCache(t testing.TB, dir string) {
	t.Helper()
	t.Skipf("%s: no dropping a file's pages from the page cache", runtime.GOOS)
}

// Resident skips the test: the page cache's residency is not asked on
// this platform.
func Resident(t testing.TB, path string) []bool {
	t.Helper()
	t.Skipf("%s: the page cache's residency (mincore) is not asked", runtime.GOOS)
	return nil
}

// ResidentPages skips the test: see Resident.
func ResidentPages(t testing.TB, path string) int {
	t.Helper()
	Resident(t, path)
	return 0
}
