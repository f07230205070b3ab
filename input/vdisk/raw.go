package vdisk

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// raw is a raw image file: guest bytes are file bytes.
type raw struct {
	f     *os.File
	size  uint64
	alloc []Extent
}

// OpenRaw opens the raw image file at path (a backing file, an extent of
// another format, a parent). Allocated is the file's data extents as
// lseek(SEEK_DATA/SEEK_HOLE) reports them, which is how qemu-img map
// reports a raw file; all of it when the file system cannot tell.
func OpenRaw(path string) (Disk, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	d, err := Raw(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return d, nil
}

// Raw is OpenRaw of a file already open; the Disk owns f (Close closes
// it).
func Raw(f *os.File) (Disk, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := uint64(fi.Size())
	alloc, ok := DataExtents(int(f.Fd()), size)
	if !ok {
		alloc = []Extent{{Off: 0, End: size}}
	}
	return &raw{f: f, size: size, alloc: alloc}, nil
}

// DataExtents maps the data of the file open as fd, of size bytes, with
// lseek(SEEK_DATA/SEEK_HOLE): its data ranges, sorted and merged, within
// [0, size); none for a file all holes. ok is false when the file system
// cannot tell (the caller then takes it all as data). It is the one
// place the project asks a file system where its holes are.
func DataExtents(fd int, size uint64) (list []Extent, ok bool) {
	for off := int64(0); uint64(off) < size; {
		d, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err != nil {
			if err == unix.ENXIO { // no data after off
				break
			}
			return nil, false
		}
		if uint64(d) >= size {
			break // data appended since size was taken
		}
		h, err := unix.Seek(fd, d, unix.SEEK_HOLE)
		if err != nil || h <= d {
			return nil, false
		}
		list = Merge(list, Extent{Off: uint64(d), End: min(uint64(h), size)})
		off = h
	}
	return list, true
}

func (r *raw) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, os.ErrInvalid
	}
	if uint64(off) >= r.size {
		return 0, io.EOF
	}
	want := len(p)
	if rest := r.size - uint64(off); uint64(want) > rest {
		want = int(rest)
	}
	n, err := r.f.ReadAt(p[:want], off)
	if n == want && want < len(p) {
		return n, io.EOF
	}
	return n, err
}

func (r *raw) Size() uint64        { return r.size }
func (r *raw) Format() string      { return "raw" }
func (r *raw) Allocated() []Extent { return r.alloc }
func (r *raw) Close() error        { return r.f.Close() }

// Files is the raw file (Filer).
func (r *raw) Files() []*os.File { return []*os.File{r.f} }
