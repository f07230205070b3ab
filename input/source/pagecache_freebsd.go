package source

import "github.com/ddtsim/ddtsim/input/source/internal/sys"

// The page cache policy on FreeBSD (cache.go): posix_fadvise(2) and
// mincore(2) as on Linux (pagecache_fadvise.go);
// FreeBSD has no cachestat, so a file's residency is asked of mincore,
// from dropMin bytes, as on Linux before 6.5.

// cachestat: FreeBSD has none (missing).
func cachestat(fd int, faults *Faults) (pages uint64, ok, missing bool) {
	return 0, false, true
}

// readaheadBytes is the readahead window of a sequential reader: 16 MiB,
// what the policy takes where the device does not say (FreeBSD's
// vfs.read_max is per file system, not asked).
func readaheadBytes(st *sys.Stat_t) uint64 { return 16 << 20 }
