//go:build unix

package compresstest

import "syscall"

// cpuSeconds returns the CPU time (user and system) the process has used so
// far, in seconds, or 0 when it cannot be read.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
