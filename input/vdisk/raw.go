package vdisk

import (
	"io"
	"os"
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
// reports a raw file (DataExtents); all of it when the file system
// cannot tell.
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
