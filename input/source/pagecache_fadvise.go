//go:build linux || freebsd

package source

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The page cache calls Linux and FreeBSD share (cache.go): posix_fadvise(2)
// (POSIX_FADV_DONTNEED frees the clean pages of a range) and mincore(2).

// canDrop: the platform can drop a file's pages from the page cache
// (POSIX_FADV_DONTNEED).
const canDrop = true

// The advice the policy gives (posix_fadvise(2)).
const (
	fadvDontneed   = unix.FADV_DONTNEED
	fadvSequential = unix.FADV_SEQUENTIAL
	fadvRandom     = unix.FADV_RANDOM
	fadvWillneed   = unix.FADV_WILLNEED
)

// fadviseSys is posix_fadvise(2) of [off, off+n) (n 0: to the end of the
// file); its errors are ignored.
func fadviseSys(fd int, off, n uint64, advice int) {
	unix.Fadvise(fd, int64(off), int64(n), advice)
}

// mincore fills vec with the residency of the pages of [off, off+n) of
// fd (off page-aligned): it maps the range and asks mincore(2).
func mincore(fd int, off, n uint64, vec []byte) error {
	m, err := unix.Mmap(fd, int64(off), int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap: %w", err)
	}
	defer unix.Munmap(m)
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return fmt.Errorf("mincore: %w", e)
	}
	return nil
}
