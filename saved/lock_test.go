package saved

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// TestLock: a second TakeLock of the same saved scan is refused with a
// *LockedError naming the holder's PID (flock conflicts between two opens
// in one process too), and so is a Read of it before its first
// checkpoint; LockHolder says who holds it, and Unlock removes
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
	// Read (merge, report) of a scan being saved that has no checkpoint
	// yet says who is saving it (found by a new user: "stat ...: no such
	// file or directory").
	if _, err := Read(path, DecodeOptions{}); !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Errorf("Read of a scan being saved: %v; want a LockedError naming PID %d", err, os.Getpid())
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

// TestLockOtherProcess: a lock held by another process refuses this one,
// naming that process; when that process ends without unlocking (killed),
// the system releases its lock, the lock file stays with its PID, and the
// next writer takes it.
func TestLockOtherProcess(t *testing.T) {
	if p := os.Getenv("DDTSIM_LOCK_CHILD"); p != "" { // the other process
		if _, err := TakeLock(p); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin) // hold it until killed
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "scan")
	cmd := testkit.SelfCommand("-test.run=^TestLockOtherProcess$")
	cmd.Env = append(os.Environ(), "DDTSIM_LOCK_CHILD="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q, %v", line, err)
	}
	child := cmd.Process.Pid
	_, err = TakeLock(path)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != child {
		t.Errorf("lock held by process %d: %v; want a LockedError naming it", child, err)
	}
	if pid, held := LockHolder(path); pid != child || !held {
		t.Errorf("LockHolder: %d, %v; want %d, held", pid, held, child)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if pid, held := LockHolder(path); pid != child || held {
		t.Errorf("LockHolder after the holder was killed: %d, %v; want %d, not held", pid, held, child)
	}
	l, err := TakeLock(path)
	if err != nil {
		t.Fatalf("lock after the holder was killed: %v", err)
	}
	if pid, held := LockHolder(path); pid != os.Getpid() || !held {
		t.Errorf("LockHolder: %d, %v; want %d, held", pid, held, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Error(err)
	}
}
