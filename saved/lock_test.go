//go:build unix

package saved

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLock: a second TakeLock of the same saved scan is refused with a
// *LockedError naming the holder's PID (flock conflicts between two opens
// in one process too), LockHolder says who holds it, and Unlock removes
// the lock file and lets the next writer lock it.
func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scan")
	a, err := TakeLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if pid, held := LockHolder(path); pid != os.Getpid() || !held {
		t.Errorf("LockHolder: %d, %v; want %d, held", pid, held, os.Getpid())
	}
	_, err = TakeLock(path)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || le.Path != path {
		t.Fatalf("second lock: %v; want a LockedError naming PID %d", err, os.Getpid())
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(LockName(path)); err == nil {
		t.Errorf("%s left after Unlock", LockName(path))
	}
	if pid, held := LockHolder(path); pid != 0 || held {
		t.Errorf("LockHolder after Unlock: %d, %v", pid, held)
	}
	b, err := TakeLock(path)
	if err != nil {
		t.Fatalf("lock after Unlock: %v", err)
	}
	b.Unlock()
}
