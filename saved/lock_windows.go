package saved

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// Lock is the lock of a saved scan held by this process (see LockName).
// On Windows the lock is LockFileEx's, exclusive, on one byte of the lock
// file far past its content (lockOffset): Windows' byte-range locks are
// mandatory, and one on the PID's bytes would keep others from reading
// it. Windows releases it when the handle closes, also when the process
// ends however it ends.
type Lock struct {
	f    *os.File
	name string
}

// lockOffset is the byte of the lock file that is locked (1 TiB: past
// any PID; Windows locks bytes past a file's end).
const lockOffset = 1 << 40

// lockRange locks (or with unlock, unlocks) the byte at lockOffset of h:
// exclusive or shared, failing at once when another handle holds a
// conflicting lock (ERROR_LOCK_VIOLATION).
func lockRange(h windows.Handle, exclusive, unlock bool) error {
	ol := windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	if unlock {
		return windows.UnlockFileEx(h, 0, 1, 0, &ol)
	}
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	return windows.LockFileEx(h, flags, 0, 1, 0, &ol)
}

// openLockFile opens (creating it with create) the lock file name for
// reading and writing, shared with every other opener, deletion included
// (so that Unlock can remove it while others have it open).
func openLockFile(name string, create bool) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	disp, access := uint32(windows.OPEN_EXISTING), uint32(windows.GENERIC_READ)
	if create {
		disp, access = windows.OPEN_ALWAYS, windows.GENERIC_READ|windows.GENERIC_WRITE
	}
	h, err := windows.CreateFile(p, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, disp, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// sameFile reports whether f is the file now at name (not one removed
// from under it).
func sameFile(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}

// TakeLock locks the saved scan at path (the directory written) for this
// process, creating its lock file, or returns a *LockedError when another
// process holds it (the lock is per handle: a second lock in this process
// is refused too). Unlock releases it; so does the end of the process,
// however it ends.
func TakeLock(path string) (*Lock, error) {
	name := LockName(path)
	for tries := 0; ; tries++ {
		f, err := openLockFile(name, true)
		if err != nil {
			// A lock file removed (Unlock) while another process had it
			// open stays until that one closes it, refusing opens
			// (ERROR_ACCESS_DENIED, "delete pending"): a moment.
			if errors.Is(err, windows.ERROR_ACCESS_DENIED) && tries < 100 {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return nil, err
		}
		if err := lockRange(windows.Handle(f.Fd()), true, false); err != nil {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			f.Close()
			if errors.Is(err, windows.ERROR_LOCK_VIOLATION) && tries < probeTries {
				// Perhaps LockHolder's probe (another ddtsim reading
				// the scan), which holds it for a moment.
				time.Sleep(probeWait)
				continue
			}
			if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
				return nil, &LockedError{Path: path, PID: parsePID(b)}
			}
			return nil, &os.PathError{Op: "LockFileEx", Path: name, Err: err}
		}
		// The holder before may have removed the file between our open
		// and our lock (Unlock): then the lock is on a file no one else
		// opens, and a new one is needed.
		if !sameFile(f, name) {
			f.Close()
			continue
		}
		return held(f, name), nil
	}
}

// lockHolder is LockHolder: the lock file's PID, and whether a process
// holds its lock (a shared lock cannot be had then).
func lockHolder(path string) (int, bool) {
	f, err := openLockFile(LockName(path), false)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	h := windows.Handle(f.Fd())
	if lockRange(h, false, false) != nil {
		return parsePID(b), true
	}
	lockRange(h, false, true)
	return parsePID(b), false
}
