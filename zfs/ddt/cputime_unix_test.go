//go:build unix

package ddt

import (
	"syscall"
	"testing"
)

// cpuNanos returns the CPU time (user and system) the process has used.
func cpuNanos(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
