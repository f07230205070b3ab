//go:build !unix && !windows

package saved

import (
	"os"
	"strconv"
)

// Lock is the lock of a saved scan held by this process (see LockName).
// On this system there is no flock(2): the lock file only records the
// writer's process ID, and a second writer is not refused.
type Lock struct{ name string }

// TakeLock writes the lock file of the saved scan at path. Without
// flock(2) it never refuses (no *LockedError here).
func TakeLock(path string) (*Lock, error) {
	name := LockName(path)
	if err := os.WriteFile(name, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return nil, err
	}
	return &Lock{name: name}, nil
}

// Unlock removes the lock file. A nil Lock is unlocked already.
func (l *Lock) Unlock() error {
	if l == nil || l.name == "" {
		return nil
	}
	err := os.Remove(l.name)
	l.name = ""
	return err
}

// lockHolder is LockHolder: the lock file's PID; whether it is held is
// not known here (false).
func lockHolder(path string) (int, bool) {
	b, err := os.ReadFile(LockName(path))
	if err != nil {
		return 0, false
	}
	return parsePID(b), false
}
