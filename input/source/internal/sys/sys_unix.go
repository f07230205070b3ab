//go:build unix

package sys

import (
	"os"

	"golang.org/x/sys/unix"
)

// Stat_t is stat(2)'s struct stat.
type Stat_t = unix.Stat_t

// Timespec is a time in seconds and nanoseconds (st_mtim).
type Timespec = unix.Timespec

// The file types of st_mode, the flags of open(2) and fstatat(2).
const (
	S_IFMT   = unix.S_IFMT
	S_IFREG  = unix.S_IFREG
	S_IFDIR  = unix.S_IFDIR
	S_IFLNK  = unix.S_IFLNK
	S_IFBLK  = unix.S_IFBLK
	S_IFCHR  = unix.S_IFCHR
	S_IFIFO  = unix.S_IFIFO
	S_IFSOCK = unix.S_IFSOCK

	O_RDONLY    = unix.O_RDONLY
	O_DIRECTORY = unix.O_DIRECTORY
	O_CLOEXEC   = unix.O_CLOEXEC
	O_NOCTTY    = unix.O_NOCTTY
	O_NONBLOCK  = unix.O_NONBLOCK
	O_NOFOLLOW  = unix.O_NOFOLLOW
	F_SETFL     = unix.F_SETFL

	AT_FDCWD            = unix.AT_FDCWD
	AT_SYMLINK_NOFOLLOW = unix.AT_SYMLINK_NOFOLLOW
)

// The errors the walk tells apart.
const (
	EINTR  = unix.EINTR
	EAGAIN = unix.EAGAIN
	EPERM  = unix.EPERM
	EINVAL = unix.EINVAL
	ENOSYS = unix.ENOSYS
	ENOENT = unix.ENOENT
	EMFILE = unix.EMFILE
	ENFILE = unix.ENFILE
	EBADF  = unix.EBADF
)

// Openat is openat(2).
func Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	return unix.Openat(dirfd, path, flags, mode)
}

// Close is close(2).
func Close(fd int) error { return unix.Close(fd) }

// Fstat is fstat(2).
func Fstat(fd int, st *Stat_t) error { return unix.Fstat(fd, st) }

// Fstatat is fstatat(2).
func Fstatat(dirfd int, path string, st *Stat_t, flags int) error {
	return unix.Fstatat(dirfd, path, st, flags)
}

// Stat is stat(2).
func Stat(path string, st *Stat_t) error { return unix.Stat(path, st) }

// Lstat is lstat(2).
func Lstat(path string, st *Stat_t) error { return unix.Lstat(path, st) }

// Seek is lseek(2).
func Seek(fd int, off int64, whence int) (int64, error) { return unix.Seek(fd, off, whence) }

// Pread is pread(2).
func Pread(fd int, p []byte, off int64) (int, error) { return unix.Pread(fd, p, off) }

// FcntlInt is fcntl(2) with an int argument.
func FcntlInt(fd uintptr, cmd, arg int) (int, error) { return unix.FcntlInt(fd, cmd, arg) }

// NewFile is os.NewFile of the descriptor fd, which the *os.File then
// owns.
func NewFile(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }
