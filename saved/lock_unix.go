//go:build unix

package saved

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Lock is the lock of a saved scan held by this process (see LockName).
type Lock struct {
	f    *os.File
	name string
}

// TakeLock locks the saved scan at path (the directory written: a
// symlink's target) for this process, creating its lock file, or returns a
// *LockedError when another process holds it (flock is per open file: a
// second lock in this process is refused too). Unlock releases it; so
// does the end of the process, however it ends.
func TakeLock(path string) (*Lock, error) {
	name := LockName(path)
	for tries := 0; ; tries++ {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		fd := int(f.Fd())
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) && tries < probeTries {
				// Perhaps LockHolder's probe (another ddtsim reading
				// the scan), which holds it for a moment.
				time.Sleep(probeWait)
				continue
			}
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &LockedError{Path: path, PID: parsePID(b)}
			}
			return nil, &os.PathError{Op: "flock", Path: name, Err: err}
		}
		// The holder before may have removed the file between our open
		// and our lock (Unlock): then the lock is on a file no one else
		// opens, and a new one is needed.
		var a, b unix.Stat_t
		if unix.Fstat(fd, &a) != nil || unix.Stat(name, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
			f.Close()
			continue
		}
		return held(f, name), nil
	}
}

// lockHolder is LockHolder: the lock file's PID, and whether a process
// holds its lock (a shared lock cannot be had then).
func lockHolder(path string) (int, bool) {
	f, err := os.Open(LockName(path))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	held := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil
	return parsePID(b), held
}
