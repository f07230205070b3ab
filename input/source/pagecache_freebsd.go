package source

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// The page cache policy's calls on FreeBSD (cache.go): posix_fadvise(2)
// (POSIX_FADV_DONTNEED frees the clean pages of the range) and mincore(2);
// FreeBSD has no cachestat, so a file's residency is asked of mincore,
// from dropMin bytes, as on Linux before 6.5.

// canDrop: the platform can drop a file's pages from the page cache.
const canDrop = true

// The advice the policy gives (posix_fadvise(2)).
const (
	fadvDontneed   = unix.FADV_DONTNEED
	fadvSequential = unix.FADV_SEQUENTIAL
)

// fadviseSys is posix_fadvise(2) of [off, off+n) (n 0: to the end of the
// file); its errors are ignored.
func fadviseSys(fd int, off, n uint64, advice int) {
	unix.Fadvise(fd, int64(off), int64(n), advice)
}

// cachestat: FreeBSD has none (missing).
func cachestat(fd int, faults *Faults) (pages uint64, ok, missing bool) {
	return 0, false, true
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

// readaheadBytes is the readahead window of a sequential reader: 16 MiB,
// what the policy takes where the device does not say (FreeBSD's
// vfs.read_max is per file system, not asked).
func readaheadBytes(st *sys.Stat_t) uint64 { return 16 << 20 }
