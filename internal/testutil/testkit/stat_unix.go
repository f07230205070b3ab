//go:build unix

package testkit

import (
	"testing"

	"golang.org/x/sys/unix"
)

// FileStat is what the tests ask of a file: its identity (device and
// inode; on Windows the volume serial and file index), its size and its
// allocated 512-byte blocks.
type FileStat struct {
	Dev, Ino     uint64
	Size, Blocks int64
}

// Stat is the FileStat of path (following a symlink unless lstat), the
// test failing when it cannot be had.
func Stat(t testing.TB, path string, lstat bool) FileStat {
	t.Helper()
	var st unix.Stat_t
	var err error
	if lstat {
		err = unix.Lstat(path, &st)
	} else {
		err = unix.Stat(path, &st)
	}
	if err != nil {
		t.Fatal(err)
	}
	return FileStat{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, Blocks: st.Blocks}
}
