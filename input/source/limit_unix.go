//go:build unix

package source

import (
	"math"

	"golang.org/x/sys/unix"
)

// FileLimit is the process's limit of open files (RLIMIT_NOFILE's soft
// limit), or MaxUint64 when unlimited or unknown.
func FileLimit() uint64 {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil || uint64(rl.Cur) == uint64(unix.RLIM_INFINITY) {
		return math.MaxUint64
	}
	return uint64(rl.Cur)
}
