package saved

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// syncOpenFlag is how syncFiles opens a file to sync it: for writing,
// as FlushFileBuffers needs GENERIC_WRITE (ERROR_ACCESS_DENIED on a
// handle opened only to read).
const syncOpenFlag = os.O_WRONLY

// umask: Windows has none (a new directory's mode is 0777; only its
// read-only bit means anything there).
var umask os.FileMode

// isMountPoint reports whether the directory path is the root of a
// volume (a drive, or a volume mounted on a folder): the volume path
// GetVolumePathName finds for it is itself.
func isMountPoint(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	p, err := windows.UTF16PtrFromString(abs)
	if err != nil {
		return false
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	if windows.GetVolumePathName(p, &buf[0], uint32(len(buf))) != nil {
		return false
	}
	vol := strings.TrimSuffix(windows.UTF16ToString(buf), `\`)
	return strings.EqualFold(vol, strings.TrimSuffix(abs, `\`))
}

// gone reports whether no process pid runs: it cannot be opened
// (ERROR_INVALID_PARAMETER), or it has exited.
func gone(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return err == windows.ERROR_INVALID_PARAMETER
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code != 259 // STILL_ACTIVE
}
