package source

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The page cache policy's calls on Linux (cache.go): cachestat(2),
// mincore(2), posix_fadvise(2) and the device's read_ahead_kb.

// canDrop: the platform can drop a file's pages from the page cache
// (POSIX_FADV_DONTNEED).
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

// cachestat asks the kernel how many pages of fd are cached. ok false:
// it does not say (missing: no cachestat, Linux before 6.5, or
// Faults.NoCachestat; else EPERM).
func cachestat(fd int, faults *Faults) (pages uint64, ok, missing bool) {
	if faults != nil && faults.NoCachestat {
		return 0, false, true
	}
	var cs unix.Cachestat_t
	err := unix.Cachestat(uint(fd), &unix.CachestatRange{}, &cs, 0)
	switch {
	case err == nil:
		return cs.Cache, true, false
	case errors.Is(err, unix.ENOSYS):
		return 0, false, true
	}
	return 0, false, false
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

// readahead holds the readahead window of each device met (st_dev →
// bytes).
var readahead sync.Map

// readaheadBytes is the readahead window of a sequential reader of the
// file whose fstat is st: twice its device's read_ahead_kb (as
// POSIX_FADV_SEQUENTIAL makes it), at least 1 MiB; 16 MiB when the
// device does not say (the anonymous devices of btrfs, overlayfs).
func readaheadBytes(st *unix.Stat_t) uint64 {
	dev := uint64(st.Dev)
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		dev = uint64(st.Rdev)
	}
	if v, ok := readahead.Load(dev); ok {
		return v.(uint64)
	}
	ra := uint64(16 << 20)
	b, err := os.ReadFile(fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(dev), unix.Minor(dev)))
	var kb uint64
	if err == nil {
		if _, err := fmt.Sscan(string(b), &kb); err == nil {
			ra = max(2*kb<<10, 1<<20)
		}
	}
	readahead.Store(dev, ra)
	return ra
}
