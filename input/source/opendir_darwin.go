package source

import (
	"os"

	"golang.org/x/sys/unix"
)

// openDirFile opens the directory open as fd again ("." relative to it:
// a descriptor of its own, with its own offset) as an *os.File to list.
func openDirFile(fd int) (*os.File, error) {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(d), "."), nil
}
