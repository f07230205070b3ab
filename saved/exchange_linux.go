package saved

import "golang.org/x/sys/unix"

// exchange swaps the directories tmp and path in one step
// (renameat2(2) RENAME_EXCHANGE, Linux 3.15+).
func exchange(tmp, path string) error {
	return unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
}
