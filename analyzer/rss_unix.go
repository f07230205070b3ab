//go:build unix

package analyzer

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// PeakRSS returns the process's peak resident set size so far, bytes
// (getrusage ru_maxrss, which Linux, FreeBSD and illumos give in KiB and
// macOS in bytes), or 0 if unknown.
func PeakRSS() uint64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil || ru.Maxrss < 0 {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return uint64(ru.Maxrss)
	}
	return uint64(ru.Maxrss) << 10
}
