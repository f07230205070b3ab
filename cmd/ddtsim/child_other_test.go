//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// childFileLimit: the child's free file descriptors are counted in
// /proc/self/fd, on Linux only (TestOutOfFileDescriptors is Linux's).
func childFileLimit(k int) error {
	return fmt.Errorf("%s: DDTSIM_TEST_NOFILE_SPARE needs /proc/self/fd", runtime.GOOS)
}
