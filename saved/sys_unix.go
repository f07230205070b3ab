//go:build unix

package saved

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// syncOpenFlag is how syncFiles opens a file to fsync it: for reading
// (fsync(2) needs no right to write).
const syncOpenFlag = os.O_RDONLY

// umask is the process's file mode creation mask (read once: reading it
// means setting it).
var umask = func() os.FileMode {
	m := unix.Umask(0)
	unix.Umask(m)
	return os.FileMode(m)
}()

// isMountPoint reports whether the directory path is the root of a mount
// (its device differs from its parent's).
func isMountPoint(path string) bool {
	var a, b unix.Stat_t
	return unix.Stat(path, &a) == nil && unix.Stat(filepath.Dir(filepath.Clean(path)), &b) == nil && a.Dev != b.Dev
}

// gone reports whether no process pid runs (kill(pid, 0) fails with
// ESRCH).
func gone(pid int) bool { return unix.Kill(pid, 0) == unix.ESRCH }
