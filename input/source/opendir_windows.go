package source

import (
	"os"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// openDirFile opens the directory open as the handle fd again, by the
// path it was opened by, as an *os.File to list.
func openDirFile(fd int) (*os.File, error) {
	p, ok := sys.Path(fd)
	if !ok {
		return nil, sys.EBADF
	}
	return os.Open(p)
}
