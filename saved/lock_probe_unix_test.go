//go:build unix

package saved

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// LockHolder's probe (a shared lock for a moment, by another ddtsim
// reading the scan) does not make a writer starting then refuse to save:
// TakeLock tries again. A lock held throughout is refused. Found by
// TestResumeRefusesCutCheckpoint, whose polling of the saved scan made
// the ddtsim it had just started refuse its --save, now and then.
func TestTakeLockWaitsForAProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scan")
	probe := func() *os.File {
		f, err := os.OpenFile(LockName(dir), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		return f
	}
	brief := probe()
	go func() { time.Sleep(30 * time.Millisecond); brief.Close() }()
	l, err := TakeLock(dir)
	if err != nil {
		t.Fatalf("a probe of 30 ms: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	held := probe()
	defer held.Close()
	_, err = TakeLock(dir)
	if le := (*LockedError)(nil); !errors.As(err, &le) {
		t.Fatalf("a lock held throughout: %v, want a LockedError", err)
	}
}
