//go:build windows

package sys

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Timespec is a time in seconds and nanoseconds since 1970 (a
// FILETIME's, to its 100 ns).
type Timespec struct{ Sec, Nsec int64 }

// Nano is ts in nanoseconds since 1970.
func (ts Timespec) Nano() int64 { return ts.Sec*1e9 + ts.Nsec }

// Unix is ts's seconds and nanoseconds.
func (ts Timespec) Unix() (sec, nsec int64) { return ts.Sec, ts.Nsec }

// Stat_t is what GetFileInformationByHandle says of a file, in the terms
// of struct stat: Dev is the volume's serial number, Ino the file index
// (the low 64 bits of ReFS's 128-bit IDs), Mode the type only (S_IFDIR,
// S_IFREG, S_IFLNK for a symlink or junction, S_IFCHR and S_IFIFO for
// consoles and pipes), Blocks the allocation size in 512-byte units of a
// file marked sparse or compressed (FILE_ATTRIBUTE_SPARSE_FILE,
// _COMPRESSED), the size of any other.
type Stat_t struct {
	Dev    uint64
	Ino    uint64
	Nlink  uint32
	Mode   uint32
	Size   int64
	Blocks int64
	Rdev   uint64
	Mtim   Timespec
}

// The file types of st_mode and the flags of open(2) and fstatat(2), as
// the walk passes them; those Windows has no use for are 0.
const (
	S_IFMT   = 0xf000
	S_IFIFO  = 0x1000
	S_IFCHR  = 0x2000
	S_IFDIR  = 0x4000
	S_IFBLK  = 0x6000
	S_IFREG  = 0x8000
	S_IFLNK  = 0xa000
	S_IFSOCK = 0xc000

	O_RDONLY    = 0
	O_DIRECTORY = 1 << 16
	O_NOFOLLOW  = 1 << 17
	O_CLOEXEC   = 0
	O_NOCTTY    = 0
	O_NONBLOCK  = 0
	F_SETFL     = 4

	AT_FDCWD            = -100
	AT_SYMLINK_NOFOLLOW = 0x100
)

// The errors the walk tells apart: Windows's own where it has one.
const (
	EINTR  = syscall.EINTR
	EAGAIN = syscall.EAGAIN
	EPERM  = syscall.EPERM
	EINVAL = syscall.EINVAL
	ENOSYS = syscall.ENOSYS
	ENOENT = syscall.ERROR_FILE_NOT_FOUND
	EMFILE = syscall.Errno(windows.ERROR_TOO_MANY_OPEN_FILES)
	ENFILE = syscall.ENFILE
	EBADF  = syscall.EBADF
)

// paths holds the path each handle Openat opened was opened by: what
// names relative to it are joined to.
var paths sync.Map // int → string

// Path is the path the handle fd was opened by (Openat), false for a
// handle Openat did not open or that was closed.
func Path(fd int) (string, bool) {
	p, ok := paths.Load(fd)
	if !ok {
		return "", false
	}
	return p.(string), true
}

// join is path relative to dirfd.
func join(dirfd int, path string) (string, error) {
	if dirfd == AT_FDCWD || filepath.IsAbs(path) {
		return path, nil
	}
	d, ok := Path(dirfd)
	if !ok {
		return "", EBADF
	}
	return filepath.Join(d, path), nil
}

// long makes p an extended-length path (\\?\) when it is longer than
// MAX_PATH allows, as package os does.
func long(p string) string {
	if len(p) < 248 || strings.HasPrefix(p, `\\`) {
		return p
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return `\\?\` + a
}

// create opens path with CreateFile for access, sharing everything
// (another process may write, rename or delete the file meanwhile, as
// on Unix systems); directories too (FILE_FLAG_BACKUP_SEMANTICS), and
// the link itself rather than its target when nofollow.
func create(path string, access uint32, nofollow bool) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(long(path))
	if err != nil {
		return windows.InvalidHandle, err
	}
	attrs := uint32(windows.FILE_FLAG_BACKUP_SEMANTICS)
	if nofollow {
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	return windows.CreateFile(p, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, attrs, 0)
}

// Openat opens path relative to the directory handle dirfd (AT_FDCWD:
// the working directory) to be read. O_NOFOLLOW refuses a symlink or a
// junction (ELOOP), O_DIRECTORY anything but a directory (ENOTDIR), as
// openat(2) does.
func Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	p, err := join(dirfd, path)
	if err != nil {
		return -1, err
	}
	h, err := create(p, windows.GENERIC_READ, flags&O_NOFOLLOW != 0)
	if err != nil {
		return -1, err
	}
	fd := int(h)
	if flags&(O_NOFOLLOW|O_DIRECTORY) != 0 {
		var st Stat_t
		err = Fstat(fd, &st)
		switch {
		case err != nil:
		case st.Mode&S_IFMT == S_IFLNK && flags&O_NOFOLLOW != 0:
			err = syscall.ELOOP
		case st.Mode&S_IFMT != S_IFDIR && flags&O_DIRECTORY != 0:
			err = syscall.ENOTDIR
		}
		if err != nil {
			windows.CloseHandle(h)
			return -1, err
		}
	}
	paths.Store(fd, p)
	return fd, nil
}

// Close closes the handle fd.
func Close(fd int) error {
	paths.Delete(fd)
	return windows.CloseHandle(windows.Handle(fd))
}

// fileStandardInfo is FILE_STANDARD_INFO.
type fileStandardInfo struct {
	AllocationSize int64
	EndOfFile      int64
	NumberOfLinks  uint32
	DeletePending  bool
	Directory      bool
}

// fileAttributeTagInfo is FILE_ATTRIBUTE_TAG_INFO.
type fileAttributeTagInfo struct {
	FileAttributes uint32
	ReparseTag     uint32
}

// Fstat fills st for the handle fd.
func Fstat(fd int, st *Stat_t) error {
	h := windows.Handle(fd)
	*st = Stat_t{}
	switch t, err := windows.GetFileType(h); {
	case err != nil:
		return err
	case t == windows.FILE_TYPE_CHAR:
		st.Mode = S_IFCHR
		return nil
	case t == windows.FILE_TYPE_PIPE:
		st.Mode = S_IFIFO
		return nil
	}
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return err
	}
	st.Dev = uint64(fi.VolumeSerialNumber)
	st.Ino = uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow)
	st.Nlink = fi.NumberOfLinks
	st.Size = int64(fi.FileSizeHigh)<<32 | int64(fi.FileSizeLow)
	ns := fi.LastWriteTime.Nanoseconds()
	st.Mtim = Timespec{Sec: ns / 1e9, Nsec: ns % 1e9}
	st.Mode = S_IFREG
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		st.Mode = S_IFDIR
	}
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		var tag fileAttributeTagInfo
		if windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&tag)), uint32(unsafe.Sizeof(tag))) == nil &&
			(tag.ReparseTag == windows.IO_REPARSE_TAG_SYMLINK || tag.ReparseTag == windows.IO_REPARSE_TAG_MOUNT_POINT) {
			st.Mode = S_IFLNK
		}
	}
	// Only a sparse or compressed file has holes; the allocation of
	// another (as Wine reports it, say) says nothing of them.
	st.Blocks = (st.Size + 511) / 512
	var si fileStandardInfo
	if fi.FileAttributes&(windows.FILE_ATTRIBUTE_SPARSE_FILE|windows.FILE_ATTRIBUTE_COMPRESSED) != 0 &&
		windows.GetFileInformationByHandleEx(h, windows.FileStandardInfo, (*byte)(unsafe.Pointer(&si)), uint32(unsafe.Sizeof(si))) == nil {
		st.Blocks = (si.AllocationSize + 511) / 512
	}
	return nil
}

// Fstatat fills st for path relative to dirfd; of the link itself, not
// its target, with AT_SYMLINK_NOFOLLOW. It needs no right to read the
// file.
func Fstatat(dirfd int, path string, st *Stat_t, flags int) error {
	p, err := join(dirfd, path)
	if err != nil {
		return err
	}
	h, err := create(p, windows.FILE_READ_ATTRIBUTES, flags&AT_SYMLINK_NOFOLLOW != 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return Fstat(int(h), st)
}

// Stat fills st for path, following links.
func Stat(path string, st *Stat_t) error { return Fstatat(AT_FDCWD, path, st, 0) }

// Lstat fills st for path, not following a link.
func Lstat(path string, st *Stat_t) error {
	return Fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW)
}

// Seek moves the handle's file pointer (whence as io.Seeker's).
func Seek(fd int, off int64, whence int) (int64, error) {
	return windows.Seek(windows.Handle(fd), off, whence)
}

// Pread reads len(p) bytes at off (ReadFile at an offset); 0 and no error
// at the end of the file.
func Pread(fd int, p []byte, off int64) (int, error) {
	var n uint32
	o := windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32)}
	err := windows.ReadFile(windows.Handle(fd), p, &n, &o)
	if err == windows.ERROR_HANDLE_EOF {
		return int(n), nil
	}
	return int(n), err
}

// FcntlInt does nothing: the flags it sets on Unix systems (O_NONBLOCK,
// O_NOATIME) have no Windows counterpart the walk uses.
func FcntlInt(fd uintptr, cmd, arg int) (int, error) { return 0, nil }

// NewFile is an *os.File of the handle fd, which it then owns.
func NewFile(fd int, name string) *os.File {
	paths.Delete(fd)
	return os.NewFile(uintptr(fd), name)
}
