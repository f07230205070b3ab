package saved

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ddtsim/ddtsim/text/escape"
)

// A saved scan being written is locked, so that two runs saving to the
// same directory (two ddtsim --save DIR, or a resume and a scan) do not
// replace each other's scan unnoticed: the second is refused, naming the
// first. The lock is a file beside the directory, LockName, locked with
// flock(2) (on Windows LockFileEx, exclusive, on one byte past its
// content) by the writer for as long as it runs: the kernel releases it
// when the writer ends, killed included. The file holds the writer's
// process ID (decimal, a newline), for the message of the one refused. A
// writer that ends removes it; one killed leaves it, unlocked, for the
// next writer to take (and for ddtsim resume to tell that a scan was
// saving there). It lies beside the directory, not in it, because saving
// replaces the directory as a whole (Write).

// TakeLock tries again for a moment (probeTries × probeWait) a lock held
// by another process: LockHolder, which another ddtsim reading the saved
// scan calls (merge, report, resume of a scan not written yet), holds a
// shared lock on the file for a moment to tell whether it is held. Found
// by a test polling a saved scan while a ddtsim started saving there:
// "another ddtsim process is saving a scan there", the poller being the
// other process.
const (
	probeTries = 20
	probeWait  = 10 * time.Millisecond
)

// LockName is the name of the lock file of the saved scan at path:
// .NAME.ddtsim-lock in its parent directory.
func LockName(path string) string {
	dir, base := filepath.Split(filepath.Clean(path))
	return filepath.Join(dir, "."+base+".ddtsim-lock")
}

// LockedError is the refusal to lock a saved scan that another process is
// writing.
type LockedError struct {
	Path string // the saved scan, as given to Lock
	PID  int    // the process writing it; 0 when its lock file did not say yet
}

func (e *LockedError) Error() string {
	who := "another ddtsim process"
	if e.PID > 0 {
		who += " (PID " + strconv.Itoa(e.PID) + ")"
	}
	return fmt.Sprintf("%s: %s is saving a scan there: wait for it to end, or save elsewhere", escape.Path(e.Path), who)
}

// LockHolder returns the process ID the lock file of the saved scan at
// path names (0: none), and whether that process holds the lock now. A
// lock file that is not held is what a writer killed left: its PID is the
// last writer's.
func LockHolder(path string) (pid int, held bool) {
	return lockHolder(path)
}

// parsePID reads a lock file's content: a decimal PID and a newline.
func parsePID(b []byte) int {
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
