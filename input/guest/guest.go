// Package guest opens a virtual-disk image as the disk its guest sees:
// it detects the format by content (never by name), opens the reader of
// that format (package vdisk's qcow2, vmdk, vhdx, vhd) and the images it
// refers to (backing files, parents), and says "raw" for everything else.
//
// What ZFS stores when a VM disk is imported into a volume (qemu-img
// convert -O raw, qm importdisk, dd of the guest's device) is the guest's
// disk, not the image file: its clusters, grains, tables, compression and
// backing chain are the image format's, not ZFS's. The scan therefore reads
// the guest's bytes and treats what the image does not allocate as holes.
package guest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// MaxChain is the deepest backing chain Open follows (an image and its
// backing files, or a differencing disk and its parents): deeper ones, and
// loops, are refused.
const MaxChain = 64

// headSize is how much of a file detection looks at.
const headSize = 4096

// A format is one reader: how to recognize it and how to open it.
type format struct {
	name   string
	detect func(head, tail []byte) bool
	open   func(f *os.File, path string, open vdisk.Opener) (vdisk.Disk, error)
}

// refusals are image formats recognized by content and refused: reading
// them as raw would predict the container, not the guest.
var refusals = []struct {
	magic []byte
	at    int
	what  string
}{
	// A VDI's banner is free text (qemu writes "<<< QEMU VM Virtual Disk
	// Image >>>"); its signature, 0xbeda107f little-endian at byte 64,
	// is what identifies it.
	{[]byte("\x7f\x10\xda\xbe"), 64, "a VirtualBox VDI image (convert it: qemu-img convert -O raw)"},
	{[]byte("QED\x00"), 0, "a QED image (convert it: qemu-img convert -O raw)"},
	{[]byte("WithoutFreeSpace"), 0, "a Parallels image (convert it: qemu-img convert -O raw)"},
	{[]byte("WithouFreSpacExt"), 0, "a Parallels image (convert it: qemu-img convert -O raw)"},
}

// Detect names the image format of the file f of size bytes ("qcow2",
// "vmdk", "vhdx", "vhd"), or returns "raw". An image format this package
// recognizes but does not read gives an error wrapping
// vdisk.ErrUnsupported.
func Detect(f io.ReaderAt, size int64, path string) (string, error) {
	head, tail, err := readEnds(f, size)
	if err != nil {
		return "", fmt.Errorf("%s: reading the image header: %w", path, err)
	}
	for _, r := range refusals {
		if len(head) >= r.at+len(r.magic) && bytes.Equal(head[r.at:r.at+len(r.magic)], r.magic) {
			return "", vdisk.Unsupported(path, r.what)
		}
	}
	for _, fm := range formats {
		if fm.detect(head, tail) {
			return fm.name, nil
		}
	}
	return "raw", nil
}

// readEnds reads the first headSize bytes of f and its last 512 (fewer
// when the file is smaller).
func readEnds(f io.ReaderAt, size int64) (head, tail []byte, err error) {
	head = make([]byte, min(size, headSize))
	if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, nil, err
	}
	tail = make([]byte, min(size, 512))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return head, tail, nil
}

// Open returns the guest's disk of the image file f (its path names it in
// errors and locates relative backing files), or nil for a raw file, which
// is read as it is. On success with a Disk, the Disk owns f; otherwise the
// caller keeps it. Backing files and parents are opened read-only, their
// format detected by content, up to MaxChain deep; a loop, a missing or
// unreadable backing file is an error naming it and the image.
func Open(f *os.File, path string) (vdisk.Disk, error) {
	size, err := fileSize(f)
	if err != nil {
		return nil, err
	}
	c := &chain{seen: map[[2]uint64]bool{}}
	c.see(f)
	d, err := c.openFile(f, size, path)
	var ce *chainError
	if errors.As(err, &ce) {
		// Said once, not wrapped in every image of the chain.
		return nil, fmt.Errorf("%s: %w", path, ce)
	}
	return d, err
}

// chainError is a backing chain too deep or looping.
type chainError struct{ msg string }

func (e *chainError) Error() string { return e.msg }

// fileSize is the size of a regular file, or where a block device ends.
func fileSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if fi.Mode().IsRegular() {
		return fi.Size(), nil
	}
	return f.Seek(0, io.SeekEnd)
}

// chain opens the images of one backing chain.
type chain struct {
	seen  map[[2]uint64]bool // dev, ino of the files opened
	depth int
}

func (c *chain) see(f *os.File) bool {
	dev, ino, ok := vdisk.FileID(f)
	if !ok {
		return false
	}
	id := [2]uint64{dev, ino}
	if c.seen[id] {
		return true
	}
	c.seen[id] = true
	return false
}

// openFile detects f's format and opens it; nil for raw.
func (c *chain) openFile(f *os.File, size int64, path string) (vdisk.Disk, error) {
	name, err := Detect(f, size, path)
	if err != nil || name == "raw" {
		return nil, err
	}
	for _, fm := range formats {
		if fm.name == name {
			return fm.open(f, path, c.open)
		}
	}
	return nil, fmt.Errorf("%s: no reader for format %s", path, name)
}

// open is the vdisk.Opener of the chain: a backing file or parent.
func (c *chain) open(dir, name string) (vdisk.Disk, error) {
	p := vdisk.Join(dir, name)
	c.depth++
	if c.depth >= MaxChain {
		return nil, &chainError{fmt.Sprintf("backing chain deeper than %d images (at %s)", MaxChain, p)}
	}
	// Non-blocking, and only regular files and block devices: a
	// hostile name such as a FIFO or /dev/zero must not hang the scan or
	// read for ever.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once, here
		}
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if fi, err := f.Stat(); err != nil || !(fi.Mode().IsRegular() || fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0) {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file or a block device", p)
	}
	if c.see(f) {
		f.Close()
		return nil, &chainError{fmt.Sprintf("backing chain loops: %s is already in it", p)}
	}
	size, err := fileSize(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	d, err := c.openFile(f, size, p)
	if err != nil {
		f.Close()
		return nil, err
	}
	if d == nil {
		if d, err = vdisk.Raw(f); err != nil {
			f.Close()
		}
	}
	return d, err
}
