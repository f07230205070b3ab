// Package vhd reads Virtual PC / Hyper-V VHD images (the "vpc" format of
// qemu): fixed, dynamic and differencing disks, read-only.
//
// A fixed VHD is a raw disk followed by a 512-byte footer; a dynamic one
// starts with a copy of that footer, then a dynamic disk header, a block
// allocation table (BAT) and blocks, each a sector bitmap and the
// block's data. A differencing VHD is a dynamic one whose sectors not
// marked in a block's bitmap (and whose unallocated blocks) are its
// parent's.
//
// The guest's size is qemu's: the CHS geometry (cylinders x heads x
// sectors per track) of the footer, as Virtual PC reads it, except for
// images written by tools that use the footer's current size (creator
// "win ", "qem2", "d2v ", "CTXS", "tap\0") or whose geometry is the
// largest one (65535x16x255); at most 2040 GiB.
//
// Reads of a dynamic disk follow qemu: an allocated block reads whole
// from the file (the sector bitmap is not consulted, qemu sets it all
// when it allocates), an unallocated one as zeros. Allocated is what
// qemu-img map reports as data: the allocated blocks of a dynamic disk,
// all of a fixed one.
//
// A differencing disk reads, sector by sector, from this file where the
// block's bitmap bit is set (most significant bit first) and from the
// parent elsewhere; its Allocated is its own marked sectors and the
// parent's allocated ranges under the rest. qemu cannot serve as the
// reference here: it reads a differencing VHD as a dynamic one, without
// its parent. A nil Opener refuses a differencing disk (ErrUnsupported);
// a parent that cannot be opened or whose unique id is not the one the
// child names is a *vdisk.FormatError wrapping the Opener's errors. The
// id check needs the parent as this package returns it: an Opener must
// not wrap the Disk it opens.
package vhd

import (
	"encoding/binary"
	"os"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

const (
	footerSize  = 512
	dynHdrSize  = 1024
	sector      = 512
	maxSectors  = 0xff000000 // 2040 GiB
	maxGeometry = 65535 * 16 * 255
	unallocated = 0xffffffff

	typeFixed   = 2
	typeDynamic = 3
	typeDiff    = 4
)

// Detect reports whether a file is a VHD, from header, its first bytes
// (a dynamic or differencing VHD starts with a copy of its footer), and
// footer, its last 512 bytes (a fixed VHD has only that trailing footer).
// A trailing footer counts only with a good checksum and a known disk
// type, since a fixed VHD is otherwise a raw disk: the caller must read
// the file's last 512 bytes and try Detect before falling back to raw.
func Detect(header, footer []byte) bool {
	if len(header) >= 8 && string(header[:8]) == "conectix" {
		return true
	}
	if len(footer) != footerSize || string(footer[:8]) != "conectix" {
		return false
	}
	t := binary.BigEndian.Uint32(footer[60:])
	return footerChecksum(footer) == binary.BigEndian.Uint32(footer[64:]) && t >= typeFixed && t <= typeDiff
}

// checksum is the ones' complement of the sum of the bytes of a
// footer or dynamic header, its checksum field (at 64 or 36) left out.
func checksum(b []byte, field int) uint32 {
	var s uint32
	for i, c := range b {
		if i < field || i >= field+4 {
			s += uint32(c)
		}
	}
	return ^s
}

func footerChecksum(b []byte) uint32 { return checksum(b, 64) }

type disk struct {
	vdisk.File
	format    string
	size      uint64
	fixed     bool
	uniqueID  [16]byte // the footer's, a child's parent id
	blockSize uint64
	bitmap    uint64   // bytes of a block's sector bitmap
	bat       []uint32 // sector offsets of blocks, unallocated for none
	parent    vdisk.Disk
	alloc     []vdisk.Extent
}

// Open opens the VHD image in f, named path in errors; on success the
// Disk owns f (and the parent it opened), on error the caller closes it.
// open opens a differencing disk's parent: it is called as
// open(vdisk.Dir(path), name) for each name the parent locators give
// (see vdisk.ParentNames) until one opens; a nil open refuses a
// differencing disk. The parent must be a VHD whose footer's unique id
// is the one the child's header names.
func Open(f *os.File, path string, open vdisk.Opener) (vdisk.Disk, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	d := &disk{File: vdisk.File{F: f, Path: path, FileSize: fi.Size()}}
	if d.FileSize < footerSize {
		return nil, d.ErrAt(0, "file of %d bytes is shorter than a VHD footer", d.FileSize)
	}
	ft := make([]byte, footerSize)
	foff := int64(0)
	if err := d.ReadStruct(ft, 0, "footer"); err != nil {
		return nil, err
	}
	if string(ft[:8]) != "conectix" {
		foff = d.FileSize - footerSize
		if err := d.ReadStruct(ft, foff, "footer"); err != nil {
			return nil, err
		}
		if string(ft[:8]) != "conectix" {
			return nil, d.ErrAt(foff, "no conectix footer at the start or the end of the file")
		}
	}
	if c, want := footerChecksum(ft), binary.BigEndian.Uint32(ft[64:]); c != want {
		return nil, d.ErrAt(foff, "footer checksum %#08x, computed %#08x", want, c)
	}
	copy(d.uniqueID[:], ft[68:84])
	if err := d.setSize(ft, foff); err != nil {
		return nil, err
	}
	switch t := binary.BigEndian.Uint32(ft[60:]); t {
	case typeFixed:
		d.fixed, d.format = true, "vhd fixed"
		// The data is the file's first size bytes, before the footer.
		if d.size > uint64(d.FileSize-footerSize) {
			return nil, d.ErrAt(foff, "fixed disk of %d bytes in a file of %d bytes (with its footer)", d.size, d.FileSize)
		}
		if d.size > 0 {
			d.alloc = []vdisk.Extent{{Off: 0, End: d.size}}
		}
	case typeDynamic, typeDiff:
		if foff != 0 {
			return nil, d.ErrAt(foff, "dynamic disk without the copy of its footer at the start")
		}
		diff := t == typeDiff
		d.format = "vhd dynamic"
		if diff {
			d.format = "vhd differencing"
		}
		h, err := d.readDynamic(binary.BigEndian.Uint64(ft[16:]), diff)
		if err != nil {
			return nil, err
		}
		if diff {
			if err := d.openParent(h, open); err != nil {
				return nil, err
			}
			if err := d.diffAllocated(); err != nil {
				d.parent.Close()
				return nil, err
			}
		}
	default:
		return nil, d.ErrAt(foff+60, "disk type %d (2 fixed, 3 dynamic, 4 differencing)", t)
	}
	return d, nil
}

// setSize sets the guest size as qemu computes it (see the package
// comment).
func (d *disk) setSize(ft []byte, foff int64) error {
	cyls := uint64(binary.BigEndian.Uint16(ft[56:]))
	sectors := cyls * uint64(ft[58]) * uint64(ft[59])
	switch string(ft[28:32]) {
	case "win ", "qem2", "d2v ", "CTXS", "tap\x00":
		sectors = binary.BigEndian.Uint64(ft[48:]) / sector
	default:
		if sectors == maxGeometry {
			sectors = binary.BigEndian.Uint64(ft[48:]) / sector
		}
	}
	if sectors > maxSectors {
		return d.ErrAt(foff+48, "disk of %d sectors (at most %d, 2040 GiB)", sectors, uint64(maxSectors))
	}
	d.size = sectors * sector
	return nil
}

// header is a dynamic disk header and its file offset.
type header struct {
	b   []byte
	off int64
}

// readDynamic reads the dynamic disk header at off and the BAT. The
// blocks of a differencing disk must fit in the file side by side (a BAT
// whose entries share file space could make a small file describe
// sector bitmaps of terabytes, Allocated's extents).
func (d *disk) readDynamic(off uint64, diff bool) (header, error) {
	if off > uint64(d.FileSize) || uint64(d.FileSize)-off < dynHdrSize {
		return header{}, d.ErrAt(16, "dynamic disk header at %d past the end of the file (%d bytes)", off, d.FileSize)
	}
	h := make([]byte, dynHdrSize)
	if err := d.ReadStruct(h, int64(off), "dynamic disk header"); err != nil {
		return header{}, err
	}
	ho := int64(off)
	if string(h[:8]) != "cxsparse" {
		return header{}, d.ErrAt(ho, "no cxsparse dynamic disk header")
	}
	if c, want := checksum(h, 36), binary.BigEndian.Uint32(h[36:]); c != want {
		return header{}, d.ErrAt(ho, "dynamic disk header checksum %#08x, computed %#08x", want, c)
	}
	bs := uint64(binary.BigEndian.Uint32(h[32:]))
	if bs < sector || bs&(bs-1) != 0 {
		return header{}, d.ErrAt(ho+32, "block size %d is not a power of 2 of at least 512", bs)
	}
	d.blockSize = bs
	d.bitmap = (bs/sector/8 + sector - 1) / sector * sector
	entries := uint64(binary.BigEndian.Uint32(h[28:]))
	nb := (d.size + bs - 1) / bs
	if entries < nb {
		return header{}, d.ErrAt(ho+28, "BAT of %d entries for a disk of %d blocks", entries, nb)
	}
	bo := binary.BigEndian.Uint64(h[16:])
	if bo > uint64(d.FileSize) || nb*4 > uint64(d.FileSize)-bo {
		return header{}, d.ErrAt(ho+16, "BAT at %d, %d entries: past the end of the file (%d bytes)", bo, nb, d.FileSize)
	}
	raw := make([]byte, nb*4)
	if err := d.ReadStruct(raw, int64(bo), "BAT"); err != nil {
		return header{}, err
	}
	d.bat = make([]uint32, nb)
	var used uint64
	for i := range d.bat {
		e := binary.BigEndian.Uint32(raw[4*i:])
		d.bat[i] = e
		if e == unallocated {
			continue
		}
		// Whole blocks, even the last: qemu calls a file that ends
		// inside one truncated.
		lo := uint64(i) * bs
		start := uint64(e) * sector
		if start+d.bitmap+bs > uint64(d.FileSize) {
			return header{}, d.ErrAt(int64(bo)+4*int64(i), "block %d at file offset %d (%d bytes with its bitmap) past the end of the file (%d bytes)",
				i, start, d.bitmap+bs, d.FileSize)
		}
		if used += d.bitmap + bs; diff && used > uint64(d.FileSize) {
			return header{}, d.ErrAt(int64(bo)+4*int64(i), "blocks up to block %d need %d bytes, more than the file's %d (blocks share file space)",
				i, used, d.FileSize)
		}
		if !diff {
			d.alloc = vdisk.Merge(d.alloc, vdisk.Extent{Off: lo, End: min(lo+bs, d.size)})
		}
	}
	return header{h, ho}, nil
}

func (d *disk) ReadAt(p []byte, off int64) (int, error) {
	if d.fixed { // one block: the file's first size bytes
		return vdisk.ReadBlocks(p, off, d.size, d.size, func(q []byte, _, in, _ uint64) error {
			return d.ReadData(q, int64(in))
		})
	}
	return vdisk.ReadBlocks(p, off, d.size, d.blockSize, func(q []byte, i, in, g uint64) error {
		switch e := d.bat[i]; {
		case e == unallocated:
			return vdisk.ReadParent(d.parent, q, g)
		case d.parent != nil:
			return d.readPartial(q, i, in)
		default:
			return d.ReadData(q, int64(uint64(e)*sector+d.bitmap+in))
		}
	})
}

func (d *disk) Size() uint64              { return d.size }
func (d *disk) Format() string            { return d.format }
func (d *disk) Allocated() []vdisk.Extent { return d.alloc }

func (d *disk) Close() error {
	err := d.F.Close()
	if d.parent != nil {
		if perr := d.parent.Close(); err == nil {
			err = perr
		}
	}
	return err
}

// Files returns the image file and its parent's files (vdisk.Filer).
func (d *disk) Files() []*os.File {
	files := []*os.File{d.F}
	if d.parent != nil {
		files = append(files, vdisk.FilesOf(d.parent)...)
	}
	return files
}
