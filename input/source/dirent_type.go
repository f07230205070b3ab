//go:build linux || freebsd

package source

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// direntTypeOf is the d_type of the struct dirent at the start of b.
func direntTypeOf(b []byte) uint8 { return b[unsafe.Offsetof(unix.Dirent{}.Type)] }
