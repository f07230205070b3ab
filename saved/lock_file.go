//go:build unix || windows

package saved

import (
	"os"
	"strconv"
)

// held is the Lock of the lock file f (named name) that this process has
// just locked: its PID written in it, for messages only (on a full disk
// the lock holds without it).
func held(f *os.File, name string) *Lock {
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f, name: name}
}

// Unlock removes the lock file and releases the lock (removed first, so
// that no other process takes a lock on a file about to go). A nil Lock
// is unlocked already.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := os.Remove(l.name)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
