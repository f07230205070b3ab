package testkit

import "testing"

// SetFileLimit: Windows has no limit of open files to set; the test is
// skipped.
func SetFileLimit(t testing.TB, n uint64) {
	t.Helper()
	t.Skip("windows: no limit of open files (RLIMIT_NOFILE) to set")
}
