//go:build unix

package testkit

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Mkfifo makes a FIFO at path (mkfifo(2)); on Windows, which has none,
// it skips the test.
func Mkfifo(t testing.TB, path string, mode uint32) error {
	t.Helper()
	return unix.Mkfifo(path, mode)
}
