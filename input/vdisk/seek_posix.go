//go:build linux || freebsd || darwin

package vdisk

import "golang.org/x/sys/unix"

// lseek's whences for the data and the holes of a file.
const (
	seekData = unix.SEEK_DATA
	seekHole = unix.SEEK_HOLE
)
