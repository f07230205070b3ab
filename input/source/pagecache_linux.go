package source

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// The page cache policy's calls on Linux (cache.go): cachestat(2),
// mincore(2), posix_fadvise(2) and the device's read_ahead_kb.

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
