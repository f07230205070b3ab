//go:build !unix

package compresstest

// cpuSeconds reports 0: the process's CPU time is not read on this platform.
func cpuSeconds() float64 { return 0 }
