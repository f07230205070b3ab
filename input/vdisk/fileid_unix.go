//go:build unix

package vdisk

import (
	"os"

	"golang.org/x/sys/unix"
)

// FileID is the identity of the open file f, its device and inode
// (fstat(2)); ok false when it cannot be asked.
func FileID(f *os.File) (dev, ino uint64, ok bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true
}
