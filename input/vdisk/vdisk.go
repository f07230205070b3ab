// Package vdisk is what every reader of a virtual-disk image format
// (qcow2, VMDK, VHDX, VHD) gives the scan: the disk as its guest sees it.
//
// A Disk reads guest bytes at guest offsets and says which guest ranges
// the image stores (Allocated). Everything outside those ranges reads as
// zeros: unallocated clusters and grains, qcow2 zero clusters, VHDX blocks
// not present. The scan treats those ranges as holes, so a thin 1 TiB
// image is read in the time its data takes.
//
// The readers are read-only, use no external tool, and report a damaged or
// hostile image as a *FormatError naming the file and the byte offset of
// the structure at fault; variants they do not read (encryption, unknown
// features) are refused with an error wrapping ErrUnsupported.
package vdisk

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Extent is a range of guest bytes, [Off, End).
type Extent struct{ Off, End uint64 }

// Disk is one virtual disk, opened. ReadAt may be called from several
// goroutines at once; it reads guest bytes (zeros where nothing is
// allocated) and, as io.ReaderAt, returns io.EOF for bytes at or past
// Size.
type Disk interface {
	io.ReaderAt
	// Size is the guest's disk size in bytes (the virtual size).
	Size() uint64
	// Format names the format and variant, such as "qcow2 v3",
	// "vmdk streamOptimized" or "vhdx dynamic".
	Format() string
	// Allocated returns the guest ranges holding data in this image or
	// in its backing chain (parent, extents), sorted, disjoint, adjacent
	// ranges merged, within [0, Size). Zero clusters are not allocated;
	// ranges outside read as zeros.
	Allocated() []Extent
	// Close closes the image's files (and those of its backing chain).
	Close() error
}

// Opener opens a disk that an image refers to by name: a qcow2 backing
// file, a VHDX parent. The name is resolved against dir, the directory
// of the referring image, when it is relative; the format is detected by
// content (raw when nothing else matches). Implementations bound the
// depth of a chain and refuse loops.
type Opener func(dir, name string) (Disk, error)

// FormatError is a damaged, truncated or hostile image: File is the
// image file's path, Off the byte offset in that file of the structure at
// fault (-1 when none applies).
type FormatError struct {
	File   string
	Off    int64
	Reason string
	Err    error // wrapped, may be nil
}

func (e *FormatError) Error() string {
	s := e.File + ": "
	if e.Off >= 0 {
		s += fmt.Sprintf("at byte %d: ", e.Off)
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// ErrUnsupported is wrapped by the errors refusing an image variant a
// reader does not read (encryption, an incompatible feature bit, an
// unknown subformat); the message says which.
var ErrUnsupported = errors.New("not supported")

// Unsupported returns the error refusing file's variant, wrapping
// ErrUnsupported: "FILE: encrypted qcow2 (aes): not supported".
func Unsupported(file, what string) error {
	return fmt.Errorf("%s: %s: %w", file, what, ErrUnsupported)
}

// The extent lists below are sorted, disjoint and merged (no two touch),
// as Allocated returns them; so are the lists these functions return.

// Merge sorts nothing: it appends e to list, merging it into the last
// extent when they touch or overlap (e.Off <= last.End). Readers that
// walk their tables in guest order build Allocated with it.
func Merge(list []Extent, e Extent) []Extent {
	if e.End <= e.Off {
		return list
	}
	if n := len(list); n > 0 && e.Off <= list[n-1].End {
		if e.End > list[n-1].End {
			list[n-1].End = e.End
		}
		return list
	}
	return append(list, e)
}

// Union returns the sorted union of two sorted, disjoint extent lists,
// adjacent ranges merged (an image's own allocation over its backing
// file's).
func Union(a, b []Extent) []Extent {
	out := make([]Extent, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var e Extent
		if j == len(b) || (i < len(a) && a[i].Off <= b[j].Off) {
			e, i = a[i], i+1
		} else {
			e, j = b[j], j+1
		}
		out = Merge(out, e)
	}
	return out
}

// Clip returns the part of list below size (a backing file larger than
// the image that uses it).
func Clip(list []Extent, size uint64) []Extent {
	out := list[:0:0]
	for _, e := range list {
		if e.Off >= size {
			break
		}
		e.End = min(e.End, size)
		out = append(out, e)
	}
	return out
}

// Intersect returns the ranges in both a and b (a parent's data where a
// differencing disk defers to it).
func Intersect(a, b []Extent) []Extent {
	var out []Extent
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].Off, b[j].Off), min(a[i].End, b[j].End)
		if lo < hi {
			out = Merge(out, Extent{Off: lo, End: hi})
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return out
}

// Minus returns the parts of a outside b (a backing file's data where
// the image has data or zeros of its own).
func Minus(a, b []Extent) []Extent {
	var out []Extent
	j := 0
	for _, e := range a {
		for j < len(b) && b[j].End <= e.Off {
			j++
		}
		off := e.Off
		for k := j; k < len(b) && b[k].Off < e.End; k++ {
			if b[k].Off > off {
				out = Merge(out, Extent{Off: off, End: b[k].Off})
			}
			off = max(off, b[k].End)
		}
		if off < e.End {
			out = Merge(out, Extent{Off: off, End: e.End})
		}
	}
	return out
}

// ReadFull reads len(q) bytes of the image file f at off, which the
// reader checked lie in the file when it opened it: a short read means
// the file shrank since, and is an error naming path (io.ErrUnexpectedEOF).
func ReadFull(f io.ReaderAt, path string, q []byte, off int64) error {
	n, err := f.ReadAt(q, off)
	if n == len(q) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: reading %d bytes at %d: %w", path, len(q), off, err)
}

// Dir returns the directory of an image's path, as text: path up to its
// last separator ("." when there is none), not cleaned. With Join it
// locates the files an image names (backing files, extents, parents, data
// files) as qemu does: a ".." in them then goes where the kernel takes it,
// also when a directory on the way is a symlink (filepath.Dir and Join
// clean "link/.." away lexically, and would look in the wrong place).
//
// The separators are the system's (os.IsPathSeparator): "/" on Unix, where
// a backslash is a character of a name, and both "\" and "/" on Windows,
// where a path's volume (filepath.VolumeName: "C:", "\\server\share")
// is kept: Dir(`C:\vms\a.vhdx`) is `C:\vms`, Dir(`C:\a.vhdx`) is `C:\`.
func Dir(path string) string {
	vol := filepath.VolumeName(path)
	rest := path[len(vol):]
	i := len(rest) - 1
	for i >= 0 && !os.IsPathSeparator(rest[i]) {
		i--
	}
	switch {
	case i < 0 && vol != "":
		return vol // "C:a.vhdx": the drive's current directory
	case i < 0:
		return "."
	case i == 0:
		return vol + rest[:1]
	}
	return vol + rest[:i]
}

// Join returns name when it is absolute, else dir, the system's separator
// and name, not cleaned (see Dir). On Windows the slashes of name are made
// backslashes (both separate there, but not after a `\\?\` prefix in dir),
// and a name rooted without a volume (`\vms\a.vhdx`) is taken on dir's
// volume, as Windows would for the image's own folder.
func Join(dir, name string) string {
	if filepath.IsAbs(name) || dir == "" {
		return name
	}
	name = filepath.FromSlash(name)
	if name != "" && os.IsPathSeparator(name[0]) {
		return filepath.VolumeName(dir) + name // Windows only: rooted on Unix is absolute
	}
	if last := dir[len(dir)-1]; os.IsPathSeparator(last) || len(dir) == len(filepath.VolumeName(dir)) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// Filer is implemented by the Disks of this package's readers: Files
// returns the files the disk reads, the image file first, then those it
// reads through (extents, an external data file, its backing file or
// parent and theirs), each once. A caller stats them to notice an image
// changed while it was read, or since a scan was saved.
type Filer interface{ Files() []*os.File }

// FilesOf returns d.Files() when d is a Filer, else nil.
func FilesOf(d Disk) []*os.File {
	if f, ok := d.(Filer); ok {
		return f.Files()
	}
	return nil
}

// ReadStruct reads len(p) bytes of a structure of the image file f (what
// names it: "BAT", "region table") at off. A short read is a
// *FormatError saying the structure lies past the end of the file, of
// fsize bytes; another failure is a *FormatError wrapping it.
func ReadStruct(f io.ReaderAt, path string, fsize int64, p []byte, off int64, what string) error {
	n, err := f.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		return &FormatError{File: path, Off: off, Reason: fmt.Sprintf("%s (%d bytes) past the end of the file (%d bytes)", what, len(p), fsize)}
	}
	return &FormatError{File: path, Off: off, Reason: "reading " + what, Err: err}
}

// ReadBlocks is ReadAt for a disk of size bytes kept in blocks of
// blockSize bytes: it reads p at guest offset off, the part of each block
// with read (q: the part of p, i: the block's number, in: q's offset in
// the block, g: its guest offset), and answers as an io.ReaderAt does:
// io.EOF for bytes at or past size, and the bytes read before an error.
func ReadBlocks(p []byte, off int64, size, blockSize uint64, read func(q []byte, i, in, g uint64) error) (int, error) {
	if off < 0 {
		return 0, os.ErrInvalid
	}
	if uint64(off) >= size {
		return 0, io.EOF
	}
	want := min(uint64(len(p)), size-uint64(off))
	for done := uint64(0); done < want; {
		g := uint64(off) + done
		i := g / blockSize
		in := g % blockSize
		q := p[done : done+min(blockSize-in, want-done)]
		if err := read(q, i, in, g); err != nil {
			return int(done), err
		}
		done += uint64(len(q))
	}
	if want < uint64(len(p)) {
		return int(want), io.EOF
	}
	return int(want), nil
}
