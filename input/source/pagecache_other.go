//go:build !linux && !freebsd

package source

import (
	"errors"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// The page cache policy where the platform cannot drop a file's pages
// from the cache (macOS, illumos, Windows: no POSIX_FADV_DONTNEED, or one
// that does nothing): every file is left alone (residency leave), as with
// Walker.KeepCache, and no advice is given.

// canDrop: the platform can drop a file's pages from the page cache.
const canDrop = false

// The advice the policy would give; fadviseSys ignores them.
const (
	fadvDontneed   = 4
	fadvSequential = 2
	fadvRandom     = 1
	fadvWillneed   = 3
)

// fadviseSys does nothing: no posix_fadvise here.
func fadviseSys(fd int, off, n uint64, advice int) {}

// cachestat: none here (missing).
func cachestat(fd int, faults *Faults) (pages uint64, ok, missing bool) {
	return 0, false, true
}

// mincore: not asked here (canDrop is false).
func mincore(fd int, off, n uint64, vec []byte) error {
	return errors.New("mincore: not on this platform")
}

// readaheadBytes is the readahead window of a sequential reader: 16 MiB,
// what the policy takes where the device does not say.
func readaheadBytes(st *sys.Stat_t) uint64 { return 16 << 20 }
