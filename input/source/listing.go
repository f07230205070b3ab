package source

import (
	"bytes"
	"errors"
	"slices"
)

// listing is one directory's entries, sorted by name (byte-wise, as
// os.ReadDir sorts them), kept compactly: a directory of a million entries
// costs its names' bytes and 8 bytes more per entry, not a DirEntry (an
// interface, two strings and a FileInfo: about 100 bytes) per entry. The
// names lie back to back in one slab; each entry is one uint64 packing
// where its name starts in the slab (the high 40 bits: up to 1 TiB of
// names), its type as getdents gives it (8 bits, a DT_ constant;
// DT_UNKNOWN where the file system does not tell) and its name's length
// (the low 16 bits).
type listing struct {
	names []byte
	ents  []uint64
}

// maxListingName bounds a name's length in a listing (16 bits). Linux
// names are at most 255 bytes (NAME_MAX).
const maxListingName = 1<<16 - 1

// errListingTooLarge: a directory holding more than 1 TiB of names.
var errListingTooLarge = errors.New("directory too large to list (more than 1 TiB of names)")

// reset empties l, keeping its memory unless it is large (a listing of
// many entries is not kept for the next directory at its depth).
func (l *listing) reset() {
	const keep = 1 << 20
	if cap(l.names) > keep || cap(l.ents)*8 > keep {
		*l = listing{}
		return
	}
	l.names, l.ents = l.names[:0], l.ents[:0]
}

// len is the number of entries.
func (l *listing) len() int { return len(l.ents) }

// name is entry i's name.
func (l *listing) name(i int) string {
	e := l.ents[i]
	off := e >> 24
	return string(l.names[off : off+e&0xffff])
}

// nameBytes is entry i's name, in the slab (not to be kept).
func (l *listing) nameBytes(i int) []byte {
	e := l.ents[i]
	off := e >> 24
	return l.names[off : off+e&0xffff]
}

// typ is entry i's type, a DT_ constant (sys.DT_UNKNOWN when the file
// system did not say).
func (l *listing) typ(i int) uint8 { return uint8(l.ents[i] >> 16) }

// setTyp records entry i's type, once learned by a stat.
func (l *listing) setTyp(i int, t uint8) {
	l.ents[i] = l.ents[i]&^(0xff<<16) | uint64(t)<<16
}

// read lists the directory open as fd (from its current offset) into l,
// sorted, using buf for the system's directory reads (fill). On an error
// it returns what it read before, sorted, with the error.
func (l *listing) read(fd int, buf []byte) error {
	l.reset()
	err := l.fill(fd, buf)
	slices.SortFunc(l.ents, func(a, b uint64) int {
		return bytes.Compare(l.names[a>>24:a>>24+a&0xffff], l.names[b>>24:b>>24+b&0xffff])
	})
	return err
}

// add appends the entry name of type typ (a DT_ constant), but "." and
// "..".
func (l *listing) add(name []byte, typ uint8) error {
	if len(name) == 0 || string(name) == "." || string(name) == ".." {
		return nil
	}
	if len(name) > maxListingName {
		return errors.New("getdents: a name longer than 65535 bytes")
	}
	off := uint64(len(l.names))
	if off >= 1<<40 {
		return errListingTooLarge
	}
	l.names = append(l.names, name...)
	l.ents = append(l.ents, off<<24|uint64(typ)<<16|uint64(len(name)))
	return nil
}
