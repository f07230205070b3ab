//go:build linux || freebsd || darwin || netbsd || openbsd || dragonfly

package sys

import "golang.org/x/sys/unix"

// The file types of a directory entry (struct dirent's d_type).
const (
	DT_UNKNOWN = unix.DT_UNKNOWN
	DT_FIFO    = unix.DT_FIFO
	DT_CHR     = unix.DT_CHR
	DT_DIR     = unix.DT_DIR
	DT_BLK     = unix.DT_BLK
	DT_REG     = unix.DT_REG
	DT_LNK     = unix.DT_LNK
	DT_SOCK    = unix.DT_SOCK
)
