//go:build unix

package outpath

import "syscall"

// devOf is the device of the file at path (stat(2), following links).
func devOf(path string) (uint64, bool) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0, false
	}
	return uint64(st.Dev), true
}
