package testkit

import "testing"

// Mkfifo makes a FIFO at path (mkfifo(2)); on Windows, which has none,
// it skips the test.
func Mkfifo(t testing.TB, path string, mode uint32) error {
	t.Helper()
	t.Skip("windows: no FIFOs")
	return nil
}
