//go:build darwin || windows

package source

import (
	"io"
	"io/fs"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// listBatch is how many entries fill asks of ReadDir at a time: its
// DirEntries (about 100 bytes each) live one batch long.
const listBatch = 1024

// fill appends the entries of the directory open as fd, read through
// os.File.ReadDir a batch at a time: on macOS, whose getdirentries is
// private (x/sys's emulation restarts the listing at each call), and on
// Windows (FindFirstFile's successor over the directory's handle). buf is
// not used.
func (l *listing) fill(fd int, buf []byte) error {
	f, err := openDirFile(fd)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(listBatch)
		for _, e := range ents {
			if err := l.add([]byte(e.Name()), dtOfMode(e.Type())); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// dtOfMode is the DT_ constant of an fs.FileMode's type.
func dtOfMode(m fs.FileMode) uint8 {
	switch {
	case m&fs.ModeSymlink != 0:
		return sys.DT_LNK
	case m.IsDir():
		return sys.DT_DIR
	case m.IsRegular():
		return sys.DT_REG
	case m&fs.ModeNamedPipe != 0:
		return sys.DT_FIFO
	case m&fs.ModeSocket != 0:
		return sys.DT_SOCK
	case m&fs.ModeCharDevice != 0:
		return sys.DT_CHR
	case m&fs.ModeDevice != 0:
		return sys.DT_BLK
	}
	return sys.DT_UNKNOWN
}
