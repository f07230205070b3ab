package saved

import "golang.org/x/sys/unix"

// exchange swaps the directories tmp and path in one step (renamex_np(2)
// RENAME_SWAP, macOS 10.12+).
func exchange(tmp, path string) error {
	return unix.RenamexNp(tmp, path, unix.RENAME_SWAP)
}
