//go:build linux || freebsd || illumos

package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fill appends the entries of the directory open as fd, read with
// getdents(2) (ReadDirent) into buf, until its end or an error.
func (l *listing) fill(fd int, buf []byte) error {
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return err
		}
		if err = l.parse(buf[:n]); err != nil {
			return err
		}
	}
}

// The layout of a struct dirent as getdents returns it: d_ino (d_fileno)
// first, 8 bytes, d_reclen (2 bytes) at direntReclen, d_type (1 byte) at
// direntType on Linux and FreeBSD (illumos has none: dirent_illumos.go),
// then the name from direntHeader on, NUL-terminated.
const (
	direntHeader = int(unsafe.Offsetof(unix.Dirent{}.Name))
	direntReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
)

// parse appends the entries of a getdents buffer, but "." and ".."
// and entries of inode 0 (deleted, as os.ReadDir skips them).
func (l *listing) parse(b []byte) error {
	for len(b) >= direntHeader {
		ino := binary.NativeEndian.Uint64(b[0:])
		reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
		typ := direntTypeOf(b)
		if reclen < direntHeader || reclen > len(b) {
			return errors.New("getdents: malformed entry")
		}
		name := b[direntHeader:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		if ino == 0 {
			continue
		}
		if err := l.add(name, typ); err != nil {
			return err
		}
	}
	return nil
}
