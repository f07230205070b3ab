// Package vmdk reads VMware virtual disks (VMDK), as VMware's "Virtual
// Disk Format 5.0" specifies them and qemu (block/vmdk.c) reads them:
//
//   - monolithicSparse: one hosted sparse extent (magic "KDMV") with its
//     descriptor embedded;
//   - streamOptimized: a hosted sparse extent of zlib-compressed grains
//     with markers, its grain directory in a footer (GD_AT_END) or in the
//     header (as qemu writes it); without a usable one, the markers are
//     indexed;
//   - descriptor files (monolithicFlat, twoGbMaxExtentFlat,
//     twoGbMaxExtentSparse, vmfs) naming FLAT, VMFS, SPARSE and ZERO
//     extents, relative to the descriptor's directory. RDONLY extents
//     read as RW ones and ZERO extents as zeros, as the spec says (qemu
//     skips both lines);
//   - delta (snapshot) disks of these kinds: the parentFileNameHint is
//     opened (relative to the delta's directory) and must be a VMDK whose
//     CID is the delta's parentCID; chains at most 16 deep, no loops.
//     Zero grains of a delta hide its parent's data.
//
// Refused with vdisk.ErrUnsupported: seSparse and vmfsSparse (COWD)
// extents, raw device maps, encrypted disks, delta disks that name no
// parent file, NOACCESS extents and unknown create types.
//
// Allocated matches qemu-img map: the allocated grains of sparse extents
// (zero grains and unallocated ones are not), all of a flat extent (qemu
// reports its file's holes as data too), the parent's allocation where a
// delta defines nothing.
//
// Bounds against hostile images: a descriptor of at most 1 MiB and 16384
// extents; a capacity of at most 2^63 bytes; grains of at most 1 MiB; a
// grain directory of at most 64 MiB and within the file; no more grain
// tables or grains than the file can hold. At most 1024 grain tables are
// cached per Disk (2 MiB with the usual 512-entry tables), and at most
// 8 MiB of decompressed grains (128 grains of 64 KiB), so that reading
// a compressed grain in pieces decompresses it once.
package vmdk

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"syscall"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// Detect reports whether header, the first bytes of a file (512 or more
// when the file has them), starts a VMDK: a sparse extent header (magic
// "KDMV", or "COWD" for ESX vmfsSparse, which Open refuses) or a text
// descriptor ("# Disk DescriptorFile", or "version=N" after comment and
// blank lines as qemu probes).
func Detect(header []byte) bool {
	if len(header) >= 4 && (string(header[:4]) == magicKDMV || string(header[:4]) == magicCOWD) {
		return true
	}
	return isDescriptorText(header)
}

type kind int

const (
	kindFlat kind = iota
	kindZero
	kindSparse
)

// extent is one extent of the disk: guest bytes [start, start+size).
type extent struct {
	kind  kind
	start uint64
	size  uint64
	name  string
	file  *os.File // flat
	off   uint64   // flat: byte offset of the extent in the file
	sp    *sparse
}

type disk struct {
	path   string
	format string
	size   uint64
	exts   []*extent
	alloc  []vdisk.Extent
	closer []io.Closer // f, then the extents' files
	gts    gtCache
	grains grainCache
	cid    string // the descriptor's CID
	// A delta disk reads the guest bytes it does not define (present)
	// from its parent.
	parent  vdisk.Disk
	present []vdisk.Extent
}

// maxChain bounds the depth of a chain of delta disks.
const maxChain = 16

// Open opens the VMDK in f, whose path is path (named in errors; a
// descriptor's relative extent names are resolved against its
// directory). On success the Disk owns f and the extent files it opens;
// on error the caller closes f. A damaged or hostile image is a
// *vdisk.FormatError; a variant not read is an error wrapping
// vdisk.ErrUnsupported.
func Open(f *os.File, path string) (vdisk.Disk, error) {
	return open(f, path, nil)
}

// open opens f; chain lists the delta disks that lead to it (for
// loops and depth).
func open(f *os.File, path string, chain []string) (*disk, error) {
	var head [sector]byte
	n, err := f.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &disk{path: path}
	var desc *descriptor
	switch {
	case n >= 4 && string(head[:4]) == magicKDMV:
		desc, err = d.openMonolithic(f)
	case n >= 4 && string(head[:4]) == magicCOWD:
		return nil, vdisk.Unsupported(path, "VMDK vmfsSparse (COWD) extent")
	case isDescriptorText(head[:n]):
		desc, err = d.openDescriptor(f)
	default:
		return nil, &vdisk.FormatError{File: path, Off: 0, Reason: "not a VMDK (no sparse magic, no descriptor)"}
	}
	if err == nil {
		err = d.openParent(desc, append(chain, fileKey(f)))
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	d.closer = append([]io.Closer{f}, d.closer...)
	return d, nil
}

// openMonolithic opens a file that is one hosted sparse extent, and
// returns its embedded descriptor (nil when it has none).
func (d *disk) openMonolithic(f *os.File) (*descriptor, error) {
	sp, err := openSparse(f, d.path, &d.gts, &d.grains)
	if err != nil {
		return nil, err
	}
	d.format = "vmdk monolithicSparse"
	if sp.compress {
		d.format = "vmdk streamOptimized"
	}
	d.size = sp.size
	e := &extent{kind: kindSparse, size: sp.size, name: d.path, sp: sp}
	d.exts = []*extent{e}
	d.alloc = sp.alloc
	d.present = vdisk.Union(sp.alloc, sp.zeros)
	return sp.desc, nil
}

// openParent refuses encrypted disks and opens the parent of a delta
// disk (parentFileNameHint, relative to the delta's directory), a VMDK
// whose CID must be the delta's parentCID.
func (d *disk) openParent(desc *descriptor, chain []string) error {
	if desc == nil {
		return nil
	}
	d.cid = desc.cid
	if desc.encrypted {
		return vdisk.Unsupported(d.path, "encrypted VMDK")
	}
	if desc.parentHint == "" {
		if desc.parentCID != "" && desc.parentCID != "ffffffff" {
			return vdisk.Unsupported(d.path, "VMDK delta disk (parentCID "+desc.parentCID+") without parentFileNameHint")
		}
		return nil
	}
	p := vdisk.Join(vdisk.Dir(d.path), desc.parentHint)
	if len(chain) >= maxChain {
		return d.errorf(-1, "chain of delta disks deeper than %d at parent %q", maxChain, desc.parentHint)
	}
	f, err := openRegular(p)
	if err != nil {
		return &vdisk.FormatError{File: d.path, Off: -1, Reason: fmt.Sprintf("parent %q", desc.parentHint), Err: err}
	}
	for _, c := range chain {
		if c == fileKey(f) {
			f.Close()
			return d.errorf(-1, "parent %q: the chain of delta disks loops", desc.parentHint)
		}
	}
	pd, err := open(f, p, chain)
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: parent: %w", d.path, err)
	}
	if !sameCID(pd.cid, desc.parentCID) {
		pd.Close()
		return d.errorf(-1, "parentCID %s is not the CID %s of parent %s (the parent changed since the delta was made)", desc.parentCID, pd.cid, p)
	}
	d.parent = pd
	d.closer = append(d.closer, pd)
	d.alloc = vdisk.Union(d.alloc, vdisk.Minus(vdisk.Clip(pd.Allocated(), d.size), d.present))
	return nil
}

// sameCID compares two CIDs, 32-bit hexadecimal numbers.
func sameCID(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 16, 32)
	y, err2 := strconv.ParseUint(b, 16, 32)
	return err1 == nil && err2 == nil && x == y
}

func (d *disk) errorf(off int64, format string, args ...any) error {
	return &vdisk.FormatError{File: d.path, Off: off, Reason: fmt.Sprintf(format, args...)}
}

// openDescriptor opens a descriptor file and its extents.
func (d *disk) openDescriptor(f *os.File) (*descriptor, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxDescriptor {
		return nil, d.errorf(-1, "descriptor file of %d bytes (more than %d)", fi.Size(), maxDescriptor)
	}
	text := make([]byte, fi.Size())
	n, err := f.ReadAt(text, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", d.path, err)
	}
	desc, err := parseDescriptor(text[:n])
	if err != nil {
		return nil, &vdisk.FormatError{File: d.path, Off: -1, Reason: "descriptor", Err: err}
	}
	switch desc.createType {
	case "monolithicFlat", "twoGbMaxExtentFlat", "twoGbMaxExtentSparse", "vmfs":
	case "vmfsSparse", "seSparse", "vmfsRaw", "vmfsRawDeviceMap", "vmfsPassthroughRawDeviceMap",
		"fullDevice", "partitionedDevice", "monolithicSparse", "streamOptimized":
		return nil, vdisk.Unsupported(d.path, fmt.Sprintf("VMDK descriptor of createType %q", desc.createType))
	default:
		return nil, vdisk.Unsupported(d.path, fmt.Sprintf("VMDK of unknown createType %q", desc.createType))
	}
	if len(desc.extents) == 0 {
		return nil, d.errorf(-1, "descriptor lists no extents")
	}
	d.format = "vmdk " + desc.createType
	dir := vdisk.Dir(d.path)
	for _, l := range desc.extents {
		if l.access == "NOACCESS" {
			return nil, vdisk.Unsupported(d.path, fmt.Sprintf("VMDK NOACCESS extent (line %d)", l.line))
		}
		if l.sectors > maxCapacity-d.size/sector {
			return nil, d.errorf(-1, "extents (line %d) add up to more than 2^63 bytes", l.line)
		}
		e := &extent{start: d.size, size: l.sectors * sector, name: l.file}
		switch l.typ {
		case "ZERO":
			e.kind = kindZero
		case "FLAT", "VMFS":
			e.kind = kindFlat
			if l.offset > maxCapacity {
				return nil, d.errorf(-1, "extent %q (line %d): offset %d sectors is absurd", l.file, l.line, l.offset)
			}
			e.off = l.offset * sector
			f, err := d.openExtent(l)
			if err != nil {
				return nil, err
			}
			d.closer = append(d.closer, f)
			e.file = f
			fi, err := f.Stat()
			if err != nil {
				return nil, fmt.Errorf("%s: extent %q: %w", d.path, l.file, err)
			}
			if n := uint64(fi.Size()); n < e.off || n-e.off < e.size {
				return nil, d.errorf(-1, "extent %q (line %d) is %d bytes, the descriptor needs %d from byte %d", l.file, l.line, n, e.size, e.off)
			}
		case "SPARSE":
			e.kind = kindSparse
			f, err := d.openExtent(l)
			if err != nil {
				return nil, err
			}
			d.closer = append(d.closer, f)
			var magic [4]byte
			if n, _ := f.ReadAt(magic[:], 0); n == 4 && string(magic[:]) == magicCOWD {
				return nil, vdisk.Unsupported(e.path(dir), "VMDK vmfsSparse (COWD) extent")
			}
			sp, err := openSparse(f, e.path(dir), &d.gts, &d.grains)
			if err != nil {
				return nil, err
			}
			if sp.size != e.size {
				return nil, d.errorf(-1, "extent %q (line %d): %d sectors in the descriptor, %d in its header", l.file, l.line, l.sectors, sp.size/sector)
			}
			e.sp = sp
		case "VMFSSPARSE", "SESPARSE", "VMFSRDM", "VMFSRAW":
			return nil, vdisk.Unsupported(d.path, fmt.Sprintf("VMDK extent type %s (line %d)", l.typ, l.line))
		default:
			return nil, vdisk.Unsupported(d.path, fmt.Sprintf("VMDK extent type %q (line %d)", l.typ, l.line))
		}
		d.exts = append(d.exts, e)
		d.size += e.size
		d.alloc = appendAlloc(d.alloc, e)
		d.present = appendPresent(d.present, e)
	}
	return desc, nil
}

func (e *extent) path(dir string) string {
	return vdisk.Join(dir, e.name)
}

// openExtent opens the file of extent line l, a regular file (a FIFO
// or device named by a hostile descriptor is refused, not waited on).
func (d *disk) openExtent(l extentLine) (*os.File, error) {
	p := vdisk.Join(vdisk.Dir(d.path), l.file)
	f, err := openRegular(p)
	if err != nil {
		return nil, &vdisk.FormatError{File: d.path, Off: -1, Reason: fmt.Sprintf("extent %q (line %d)", l.file, l.line), Err: err}
	}
	return f, nil
}

// openRegular opens p, a regular file. It stats first: opening a device
// can have effects (a tape rewinds, a watchdog arms); O_NONBLOCK keeps a
// FIFO swapped in from blocking.
func openRegular(p string) (*os.File, error) {
	if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", p)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// appendAlloc appends extent e's allocated ranges, in guest offsets.
func appendAlloc(list []vdisk.Extent, e *extent) []vdisk.Extent {
	switch e.kind {
	case kindFlat:
		// qemu-img map reports a flat extent as data throughout, holes
		// in its file included.
		list = vdisk.Merge(list, vdisk.Extent{Off: e.start, End: e.start + e.size})
	case kindSparse:
		for _, r := range e.sp.alloc {
			list = vdisk.Merge(list, vdisk.Extent{Off: e.start + r.Off, End: e.start + r.End})
		}
	}
	return list
}

// appendPresent appends the guest ranges extent e defines: all of a flat
// or ZERO extent, the data and zero grains of a sparse one.
func appendPresent(list []vdisk.Extent, e *extent) []vdisk.Extent {
	if e.kind != kindSparse {
		return vdisk.Merge(list, vdisk.Extent{Off: e.start, End: e.start + e.size})
	}
	for _, r := range vdisk.Union(e.sp.alloc, e.sp.zeros) {
		list = vdisk.Merge(list, vdisk.Extent{Off: e.start + r.Off, End: e.start + r.End})
	}
	return list
}

// ReadAt reads guest bytes; it is safe for concurrent use.
func (d *disk) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", d.path, off)
	}
	if uint64(off) >= d.size {
		return 0, io.EOF
	}
	want := p
	if rest := d.size - uint64(off); uint64(len(want)) > rest {
		want = want[:rest]
	}
	pos := uint64(off)
	i := sort.Search(len(d.exts), func(i int) bool { return d.exts[i].start+d.exts[i].size > pos })
	done := 0
	for done < len(want) && i < len(d.exts) {
		e := d.exts[i]
		rel := pos - e.start
		n := min(uint64(len(want)-done), e.size-rel)
		b := want[done : done+int(n)]
		switch e.kind {
		case kindZero:
			clear(b)
		case kindFlat:
			m, err := e.file.ReadAt(b, int64(e.off+rel))
			if m != len(b) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return done, fmt.Errorf("%s: extent %q: %w", d.path, e.name, err)
			}
		case kindSparse:
			if err := e.sp.readAt(b, rel); err != nil {
				return done, err
			}
		}
		done += int(n)
		pos += n
		i++
	}
	if d.parent != nil {
		if err := d.readParent(want, uint64(off)); err != nil {
			return 0, err
		}
	}
	if len(want) < len(p) {
		return done, io.EOF
	}
	return done, nil
}

// readParent reads into b, guest bytes from off, the ranges this delta
// does not define from its parent (zeros past the parent's end).
func (d *disk) readParent(b []byte, off uint64) error {
	end := off + uint64(len(b))
	i := sort.Search(len(d.present), func(i int) bool { return d.present[i].End > off })
	for pos := off; pos < end; {
		if i < len(d.present) && d.present[i].Off <= pos {
			pos = d.present[i].End
			i++
			continue
		}
		next := end // the end of the gap at pos
		if i < len(d.present) {
			next = min(end, d.present[i].Off)
		}
		lo, hi := pos, min(next, d.parent.Size())
		if lo < hi {
			n, err := d.parent.ReadAt(b[lo-off:hi-off], int64(lo))
			if n != int(hi-lo) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("%s: parent: %w", d.path, err)
			}
		}
		pos = next
	}
	return nil
}

func (d *disk) Size() uint64              { return d.size }
func (d *disk) Format() string            { return d.format }
func (d *disk) Allocated() []vdisk.Extent { return d.alloc }

// Close closes the descriptor or sparse file and every extent file.
func (d *disk) Close() error {
	var first error
	for _, c := range d.closer {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	d.closer = nil
	return first
}

// fileKey identifies an open file by device and inode (a chain of delta
// disks loops when a parent is a file already in it, whatever its name).
func fileKey(f *os.File) string {
	dev, ino, ok := vdisk.FileID(f)
	if !ok {
		return f.Name() // cannot tell: the name, as given
	}
	return fmt.Sprintf("%d:%d", dev, ino)
}

// Files returns the VMDK file (descriptor or sparse extent), the extent
// files and the parent's files (vdisk.Filer).
func (d *disk) Files() []*os.File {
	var files []*os.File
	for _, c := range d.closer {
		switch c := c.(type) {
		case *os.File:
			files = append(files, c)
		case vdisk.Disk:
			files = append(files, vdisk.FilesOf(c)...)
		}
	}
	return files
}
