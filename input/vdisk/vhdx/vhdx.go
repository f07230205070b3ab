// Package vhdx reads Hyper-V VHDX images ([MS-VHDX] 1.0): fixed, dynamic
// and differencing disks, read-only.
//
// Open reads the headers, the region table, the metadata and the whole
// block allocation table (BAT) once; ReadAt then only reads payload
// (and the parent's payload for a differencing disk) and is safe for
// concurrent use.
//
// Block states and what they read as:
//
//   - FULLY_PRESENT: the block's bytes in this file; allocated.
//   - PARTIALLY_PRESENT (differencing only): sector by sector, from this
//     file where the sector bitmap bit is 1 (allocated), from the parent
//     where it is 0.
//   - NOT_PRESENT: the parent's bytes in a differencing disk; zeros
//     otherwise.
//   - ZERO, UNDEFINED, UNMAPPED (and the 0.95 spec's UNMAPPED, 5): zeros,
//     not allocated. The spec lets a reader return zeros for all three;
//     qemu does the same.
//
// Allocated is this file's present blocks and sectors, plus the parent's
// allocated ranges where this file defers to the parent. qemu-img map
// cannot serve as the reference here: qemu's vhdx driver has no
// block-status callback, so qemu-img map reports every VHDX image as data
// from end to end.
//
// Refused with an error wrapping vdisk.ErrUnsupported: a log that holds
// entries to replay (an image not closed cleanly: Hyper-V or
// "qemu-img check -r all" replays it), a required region or metadata item
// this reader does not know, a parent locator of another type than VHDX, a
// parent that is not a VHDX image, a differencing disk opened with a nil
// Opener. Damage (checksums, truncation, offsets out of the file, absurd
// sizes, present blocks that do not fit in the file side by side) is a
// *vdisk.FormatError, and so is a parent that cannot be opened or whose
// DataWriteGuid is not the child's parent_linkage (wrapping the Opener's
// errors). The linkage check needs the parent as this package returns it:
// an Opener must not wrap the Disk it opens.
package vhdx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	tib = 1 << 40

	headerSection = 1 * mib
	header1Off    = 64 * kib
	header2Off    = 128 * kib
	headerSize    = 4 * kib
	region1Off    = 192 * kib
	region2Off    = 256 * kib
	regionSize    = 64 * kib
	metaTableSize = 64 * kib

	maxVirtualSize = 64 * tib
	minBlockSize   = 1 * mib
	maxBlockSize   = 256 * mib
	sectorsPerSB   = 1 << 23 // sectors described by one 1 MiB sector bitmap block
	maxEntries     = 2047    // region and metadata table entries
)

// Payload block states (the low 3 bits of a BAT entry).
const (
	stNotPresent   = 0
	stUndefined    = 1
	stZero         = 2
	stUnmapped     = 3
	stUnmapped095  = 5 // UNMAPPED in the 0.95 draft, still read by qemu
	stFullyPresent = 6
	stPartially    = 7
	sbPresent      = 6 // sector bitmap block present
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// guid is a GUID as stored on disk (Microsoft layout: the first three
// fields little-endian).
type guid [16]byte

func mustGUID(s string) guid {
	var g guid
	var d1 uint32
	var d2, d3 uint16
	var d4 [8]byte
	n, err := fmt.Sscanf(s, "%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x",
		&d1, &d2, &d3, &d4[0], &d4[1], &d4[2], &d4[3], &d4[4], &d4[5], &d4[6], &d4[7])
	if err != nil || n != 11 {
		panic("bad guid " + s)
	}
	binary.LittleEndian.PutUint32(g[0:], d1)
	binary.LittleEndian.PutUint16(g[4:], d2)
	binary.LittleEndian.PutUint16(g[6:], d3)
	copy(g[8:], d4[:])
	return g
}

// String formats g as the parent locator's parent_linkage does:
// "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}".
func (g guid) String() string {
	return fmt.Sprintf("{%08x-%04x-%04x-%x-%x}",
		binary.LittleEndian.Uint32(g[0:]), binary.LittleEndian.Uint16(g[4:]),
		binary.LittleEndian.Uint16(g[6:]), g[8:10], g[10:16])
}

var (
	batGUID          = mustGUID("2dc27766-f623-4200-9d64-115e9bfd4a08")
	metadataGUID     = mustGUID("8b7ca206-4790-4b9a-b8fe-575f050f886e")
	fileParamsGUID   = mustGUID("caa16737-fa36-4d43-b3b6-33f0aa44e76b")
	virtualSizeGUID  = mustGUID("2fa54224-cd1b-4876-b211-5dbed83bf4b8")
	page83GUID       = mustGUID("beca12ab-b2e6-4523-93ef-c309e000c746")
	logicalSectGUID  = mustGUID("8141bf1d-a96f-4709-ba47-f233a8faab5f")
	physicalSectGUID = mustGUID("cda348c7-445d-4471-9cc9-e9885251c556")
	parentLocGUID    = mustGUID("a8d35f2d-b30b-454d-abf7-d3d84834ab0c")
	parentTypeVHDX   = mustGUID("b04aefb7-d19e-4a81-b789-25b8e9445913")
)

// Detect reports whether header, the first bytes of a file, starts with
// the VHDX file type identifier "vhdxfile".
func Detect(header []byte) bool {
	return len(header) >= 8 && string(header[:8]) == "vhdxfile"
}

// disk is an open VHDX image.
type disk struct {
	vdisk.File
	format string

	size       uint64 // virtual size
	blockSize  uint64
	sectorSize uint64 // logical
	chunkRatio uint64
	hasParent  bool
	dataWrite  guid // DataWriteGuid of the current header

	// bat holds one entry per payload block (sector bitmap entries
	// dropped), state in the low 3 bits, file offset in the high 44.
	bat []uint64
	// sbOff is the file offset of each chunk's sector bitmap block (0 when
	// not present): bit i (LSB first) of a block's part of it is set when
	// sector i of the block is in this file. Read when needed, not kept.
	sbOff []int64

	parent vdisk.Disk
	alloc  []vdisk.Extent
}

// Open opens the VHDX image in f, named path in errors. On success the
// Disk owns f (and the parent it opened); on error the caller closes f.
// open opens a differencing disk's parent: it is called as
// open(vdisk.Dir(path), name) for each name the parent locator gives
// (vdisk.ParentNames): relative_path, volume_path, absolute_win32_path
// as [MS-VHDX] 2.6.2.6.3 orders them (the absolute ones where they are
// absolute), then their base names, until one opens; a nil open refuses a differencing disk. The parent must be a
// VHDX image whose DataWriteGuid is the locator's parent_linkage (or
// parent_linkage2).
func Open(f *os.File, path string, open vdisk.Opener) (vdisk.Disk, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	d := &disk{File: vdisk.File{F: f, Path: path, FileSize: fi.Size()}}
	var sig [8]byte
	if err := d.ReadStruct(sig[:], 0, "file type identifier"); err != nil {
		return nil, err
	}
	if !Detect(sig[:]) {
		return nil, d.ErrAt(0, "no vhdxfile signature")
	}
	if d.FileSize < headerSection {
		return nil, d.ErrAt(0, "file of %d bytes is shorter than the 1 MiB header section", d.FileSize)
	}
	h, err := d.readHeaders()
	if err != nil {
		return nil, err
	}
	d.dataWrite = h.dataWrite
	if err := d.checkLog(h); err != nil {
		return nil, err
	}
	batRegion, metaRegion, err := d.readRegions()
	if err != nil {
		return nil, err
	}
	loc, err := d.readMetadata(metaRegion)
	if err != nil {
		return nil, err
	}
	switch {
	case d.hasParent:
		d.format = "vhdx differencing"
	case d.format == "":
		d.format = "vhdx dynamic"
	}
	if err := d.readBAT(batRegion); err != nil {
		return nil, err
	}
	if d.hasParent {
		if err := d.openParent(loc, open); err != nil {
			return nil, err
		}
	}
	if err := d.buildAllocated(); err != nil {
		closeIf(d.parent)
		return nil, err
	}
	return d, nil
}

type header struct {
	off        int64
	seq        uint64
	dataWrite  guid
	logGUID    guid
	logLength  uint32
	logOffset  uint64
	logVersion uint16
}

// readHeaders returns the current header: of the two whose checksum,
// signature and version are good, the one with the larger sequence number.
func (d *disk) readHeaders() (header, error) {
	var hs []header
	var why []string
	buf := make([]byte, headerSize)
	for _, off := range []int64{header1Off, header2Off} {
		if err := d.ReadStruct(buf, off, "header"); err != nil {
			return header{}, err
		}
		if r := checkCRC(buf, 4); r != "" {
			why = append(why, fmt.Sprintf("header at %d: %s", off, r))
			continue
		}
		if string(buf[:4]) != "head" {
			why = append(why, fmt.Sprintf("header at %d: no head signature", off))
			continue
		}
		if v := binary.LittleEndian.Uint16(buf[66:]); v != 1 {
			why = append(why, fmt.Sprintf("header at %d: version %d, not 1", off, v))
			continue
		}
		h := header{
			off:       off,
			seq:       binary.LittleEndian.Uint64(buf[8:]),
			logLength: binary.LittleEndian.Uint32(buf[68:]),
			logOffset: binary.LittleEndian.Uint64(buf[72:]),
		}
		copy(h.dataWrite[:], buf[32:48])
		copy(h.logGUID[:], buf[48:64])
		h.logVersion = binary.LittleEndian.Uint16(buf[64:])
		hs = append(hs, h)
	}
	var h header
	switch {
	case len(hs) == 0:
		return header{}, d.ErrAt(header1Off, "no valid header (%s; %s)", why[0], why[1])
	case len(hs) == 1:
		h = hs[0]
	case hs[0].seq > hs[1].seq:
		h = hs[0]
	case hs[1].seq > hs[0].seq:
		h = hs[1]
	default:
		// Equal sequence numbers: only harmless when the headers say
		// the same thing (Disk2VHD writes two identical headers).
		a, b := hs[0], hs[1]
		a.off, b.off = 0, 0
		if a != b {
			return header{}, d.ErrAt(header1Off, "both headers have sequence number %d but differ", hs[0].seq)
		}
		h = hs[0]
	}
	if h.logVersion != 0 {
		return header{}, vdisk.Unsupported(d.Path, fmt.Sprintf("vhdx log version %d", h.logVersion))
	}
	return h, nil
}

// checkCRC checks the CRC-32C of buf, whose checksum field is the 4
// bytes at off (taken as zero in the sum); "" when it matches.
func checkCRC(buf []byte, off int) string {
	want := binary.LittleEndian.Uint32(buf[off:])
	c := crc32.Update(0, castagnoli, buf[:off])
	c = crc32.Update(c, castagnoli, []byte{0, 0, 0, 0})
	c = crc32.Update(c, castagnoli, buf[off+4:])
	if c != want {
		return fmt.Sprintf("checksum %#08x, computed %#08x", want, c)
	}
	return ""
}

type region struct {
	entryOff int64 // file offset of the region table entry
	off      uint64
	length   uint64
}

// readRegions reads the region table (the second copy when the first is
// damaged) and returns the BAT and metadata regions.
func (d *disk) readRegions() (bat, meta region, err error) {
	buf := make([]byte, regionSize)
	var first error
	for _, off := range []int64{region1Off, region2Off} {
		bat, meta, err = d.readRegionTable(buf, off)
		if err == nil || errors.Is(err, vdisk.ErrUnsupported) {
			return bat, meta, err
		}
		if first == nil {
			first = err
		}
	}
	return bat, meta, first
}

func (d *disk) readRegionTable(buf []byte, off int64) (bat, meta region, err error) {
	if err := d.ReadStruct(buf, off, "region table"); err != nil {
		return bat, meta, err
	}
	if r := checkCRC(buf, 4); r != "" {
		return bat, meta, d.ErrAt(off, "region table: %s", r)
	}
	if string(buf[:4]) != "regi" {
		return bat, meta, d.ErrAt(off, "region table: no regi signature")
	}
	n := binary.LittleEndian.Uint32(buf[8:])
	if n > maxEntries {
		return bat, meta, d.ErrAt(off+8, "region table: %d entries (at most %d)", n, maxEntries)
	}
	var haveBAT, haveMeta bool
	for i := range int(n) {
		e := buf[16+32*i : 16+32*(i+1)]
		eoff := off + 16 + 32*int64(i)
		var g guid
		copy(g[:], e[:16])
		r := region{
			entryOff: eoff,
			off:      binary.LittleEndian.Uint64(e[16:]),
			length:   uint64(binary.LittleEndian.Uint32(e[24:])),
		}
		required := binary.LittleEndian.Uint32(e[28:])&1 != 0
		switch g {
		case batGUID, metadataGUID:
		default:
			if required {
				return bat, meta, vdisk.Unsupported(d.Path, "required vhdx region "+g.String())
			}
			continue
		}
		if r.off%mib != 0 || r.off < headerSection || r.length%mib != 0 || r.length == 0 ||
			r.off > uint64(d.FileSize) || r.length > uint64(d.FileSize)-r.off {
			return bat, meta, d.ErrAt(eoff, "region %s at %d, %d bytes: not 1 MiB aligned past the header section within the file (%d bytes)",
				g, r.off, r.length, d.FileSize)
		}
		if g == batGUID {
			if haveBAT {
				return bat, meta, d.ErrAt(eoff, "second BAT region")
			}
			bat, haveBAT = r, true
		} else {
			if haveMeta {
				return bat, meta, d.ErrAt(eoff, "second metadata region")
			}
			meta, haveMeta = r, true
		}
	}
	if !haveBAT || !haveMeta {
		return bat, meta, d.ErrAt(off, "region table without a BAT or metadata region")
	}
	return bat, meta, nil
}

// metaItem is a metadata item's place in the file.
type metaItem struct {
	entryOff int64 // file offset of its table entry
	off      int64 // file offset of its data
	length   uint32
}

// readMetadata reads the metadata table and items into d; it returns the
// parent locator item (length 0 when there is none).
func (d *disk) readMetadata(r region) (metaItem, error) {
	var loc metaItem
	if r.length < metaTableSize {
		return loc, d.ErrAt(r.entryOff, "metadata region of %d bytes is smaller than its table", r.length)
	}
	base := int64(r.off)
	buf := make([]byte, metaTableSize)
	if err := d.ReadStruct(buf, base, "metadata table"); err != nil {
		return loc, err
	}
	if string(buf[:8]) != "metadata" {
		return loc, d.ErrAt(base, "metadata table: no metadata signature")
	}
	n := int(binary.LittleEndian.Uint16(buf[10:]))
	if n > maxEntries {
		return loc, d.ErrAt(base+10, "metadata table: %d entries (at most %d)", n, maxEntries)
	}
	items := map[guid]metaItem{}
	for i := range n {
		e := buf[32+32*i : 32+32*(i+1)]
		eoff := base + 32 + 32*int64(i)
		var g guid
		copy(g[:], e[:16])
		it := metaItem{
			entryOff: eoff,
			off:      int64(binary.LittleEndian.Uint32(e[16:])),
			length:   binary.LittleEndian.Uint32(e[20:]),
		}
		required := binary.LittleEndian.Uint32(e[24:])&4 != 0
		switch g {
		case fileParamsGUID, virtualSizeGUID, page83GUID, logicalSectGUID, physicalSectGUID, parentLocGUID:
		default:
			if required {
				return loc, vdisk.Unsupported(d.Path, "required vhdx metadata item "+g.String())
			}
			continue
		}
		if _, dup := items[g]; dup {
			return loc, d.ErrAt(eoff, "metadata item %s twice", g)
		}
		if it.length > 0 && (it.off < metaTableSize || uint64(it.off)+uint64(it.length) > r.length) {
			return loc, d.ErrAt(eoff, "metadata item %s at %d, %d bytes: outside the metadata region (%d bytes)",
				g, it.off, it.length, r.length)
		}
		it.off += base
		items[g] = it
	}
	// item reads the fixed-size item g into a new buffer.
	item := func(g guid, name string, size uint32) ([]byte, error) {
		it, ok := items[g]
		if !ok {
			return nil, d.ErrAt(base, "no %s metadata item", name)
		}
		if it.length < size {
			return nil, d.ErrAt(it.entryOff, "%s metadata item of %d bytes (want %d)", name, it.length, size)
		}
		p := make([]byte, size)
		return p, d.ReadStruct(p, it.off, name+" metadata item")
	}
	p, err := item(fileParamsGUID, "file parameters", 8)
	if err != nil {
		return loc, err
	}
	d.blockSize = uint64(binary.LittleEndian.Uint32(p))
	bits := binary.LittleEndian.Uint32(p[4:])
	d.hasParent = bits&2 != 0
	if bits&1 != 0 {
		d.format = "vhdx fixed"
	}
	if d.blockSize < minBlockSize || d.blockSize > maxBlockSize || d.blockSize&(d.blockSize-1) != 0 {
		return loc, d.ErrAt(items[fileParamsGUID].off, "block size %d is not a power of 2 from 1 MiB to 256 MiB", d.blockSize)
	}
	if p, err = item(logicalSectGUID, "logical sector size", 4); err != nil {
		return loc, err
	}
	d.sectorSize = uint64(binary.LittleEndian.Uint32(p))
	if d.sectorSize != 512 && d.sectorSize != 4096 {
		return loc, d.ErrAt(items[logicalSectGUID].off, "logical sector size %d (512 or 4096)", d.sectorSize)
	}
	if p, err = item(virtualSizeGUID, "virtual disk size", 8); err != nil {
		return loc, err
	}
	d.size = binary.LittleEndian.Uint64(p)
	if d.size > maxVirtualSize || d.size%d.sectorSize != 0 {
		return loc, d.ErrAt(items[virtualSizeGUID].off, "virtual size %d is not a multiple of the %d-byte sector up to 64 TiB",
			d.size, d.sectorSize)
	}
	// Physical sector size and page 83 data are required by the spec but
	// mean nothing to a reader: checked when present, not demanded.
	if _, ok := items[physicalSectGUID]; ok {
		if p, err = item(physicalSectGUID, "physical sector size", 4); err != nil {
			return loc, err
		}
		if ps := binary.LittleEndian.Uint32(p); ps != 512 && ps != 4096 {
			return loc, d.ErrAt(items[physicalSectGUID].off, "physical sector size %d (512 or 4096)", ps)
		}
	}
	if _, ok := items[page83GUID]; ok {
		if _, err = item(page83GUID, "page 83 data", 16); err != nil {
			return loc, err
		}
	}
	d.chunkRatio = sectorsPerSB * d.sectorSize / d.blockSize
	if d.hasParent {
		it, ok := items[parentLocGUID]
		if !ok {
			return loc, d.ErrAt(base, "differencing disk without a parent locator")
		}
		loc = it
	}
	return loc, nil
}

func (d *disk) Size() uint64              { return d.size }
func (d *disk) Format() string            { return d.format }
func (d *disk) Allocated() []vdisk.Extent { return d.alloc }

func closeIf(p vdisk.Disk) {
	if p != nil {
		p.Close()
	}
}

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
