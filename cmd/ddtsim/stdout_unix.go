//go:build unix && !linux

package main

import "golang.org/x/sys/unix"

// stdoutIsRuntimeNull reports whether stdout is /dev/null (the same
// device as stat("/dev/null") says) opened read-write: what the Go
// runtime opens in place of a closed stdout (runtime: checkfds); a
// shell's >/dev/null opens it write-only.
func stdoutIsRuntimeNull() bool {
	var st, null unix.Stat_t
	if unix.Fstat(1, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR ||
		unix.Stat("/dev/null", &null) != nil || st.Rdev != null.Rdev {
		return false
	}
	fl, err := unix.FcntlInt(1, unix.F_GETFL, 0)
	return err == nil && fl&unix.O_ACCMODE == unix.O_RDWR
}
