package vmdk

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// The hosted sparse extent ("Virtual Disk Format 5.0", "Hosted Sparse
// Extent Header"): a 512-byte header, an optional embedded descriptor, a
// grain directory (GD) of 32-bit sector offsets of grain tables (GT),
// each GT numGTEsPerGT 32-bit sector offsets of grains. All numbers are
// little-endian; offsets and sizes in the header are in 512-byte
// sectors.
const (
	sector = 512

	magicKDMV = "KDMV"
	magicCOWD = "COWD" // ESX vmfsSparse

	flagNLDetect  = 1 << 0  // the line-ending check bytes are valid
	flagRGD       = 1 << 1  // a redundant GD exists (ignored here)
	flagZeroGrain = 1 << 2  // GTE 1 is a grain of zeros
	flagCompress  = 1 << 16 // grains are compressed
	flagMarkers   = 1 << 17 // grains and metadata carry markers

	compressNone    = 0
	compressDeflate = 1 // RFC 1950 zlib streams, as qemu and VMware write

	gdAtEnd = 0xffffffffffffffff // streamOptimized: the GD is in the footer

	// Marker types (streamOptimized), in a marker whose size is 0.
	markerEOS    = 0
	markerGT     = 1
	markerGD     = 2
	markerFooter = 3

	// Bounds on hostile headers.
	maxCapacity  = 1 << 54 // sectors: 2^63 bytes
	maxGrain     = 2048    // sectors: 1 MiB (VMware writes 64 KiB)
	maxGTEs      = 512     // entries per GT, as the spec fixes and qemu checks
	maxGDBytes   = 64 << 20
	markerHeader = 12 // lba uint64, size uint32 before a grain's data
)

// header is the hosted sparse extent header; sector units.
type header struct {
	version      uint32
	flags        uint32
	capacity     uint64
	grain        uint64
	descOffset   uint64
	descSize     uint64
	numGTEs      uint32
	rgdOffset    uint64
	gdOffset     uint64
	overhead     uint64
	checkBytes   [4]byte
	compressAlgo uint16
}

func parseHeader(b []byte) header {
	le := binary.LittleEndian
	var h header
	h.version = le.Uint32(b[4:])
	h.flags = le.Uint32(b[8:])
	h.capacity = le.Uint64(b[12:])
	h.grain = le.Uint64(b[20:])
	h.descOffset = le.Uint64(b[28:])
	h.descSize = le.Uint64(b[36:])
	h.numGTEs = le.Uint32(b[44:])
	h.rgdOffset = le.Uint64(b[48:])
	h.gdOffset = le.Uint64(b[56:])
	h.overhead = le.Uint64(b[64:])
	copy(h.checkBytes[:], b[73:77])
	h.compressAlgo = le.Uint16(b[77:])
	return h
}

// sparse is one hosted sparse extent, monolithicSparse or
// streamOptimized, opened.
type sparse struct {
	f        *os.File
	name     string
	fileSize int64
	size     uint64 // extent bytes (capacity)
	grain    uint64 // bytes
	numGTEs  uint64
	gd       []uint32 // nil when index is used
	gdOff    int64
	zeroGTE  bool // GTE 1 means zeros
	compress bool
	markers  bool
	// index is the streamOptimized grain index built by scanning the
	// markers when the image has no usable GD: sorted by grain.
	index []indexEntry
	alloc []vdisk.Extent // extent-relative, merged
	zeros []vdisk.Extent // zero grains (GTE 1), extent-relative, merged
	gts   *gtCache
	// grains caches decompressed grains for reads of parts of a grain
	// (shared by the Disk's extents).
	grains *grainCache
	bufs   sync.Pool // *inflater
	// inflated counts grain decompressions (for tests).
	inflated atomic.Uint64
	// descriptor embedded in the extent, nil when none.
	desc *descriptor
}

type indexEntry struct {
	grain  uint64
	sector uint64
}

// gtCache holds grain tables read from the file, at most maxCachedGTs of
// them per Disk (2 MiB with 512-entry tables); a full cache drops an
// arbitrary table.
type gtCache struct {
	mu sync.Mutex
	m  map[gtKey][]uint32
}

type gtKey struct {
	s  *sparse
	gd uint64
}

const maxCachedGTs = 1024

func (c *gtCache) get(k gtKey) []uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

func (c *gtCache) put(k gtKey, gt []uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[gtKey][]uint32)
	}
	if len(c.m) >= maxCachedGTs {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = gt
}

func (s *sparse) errorf(off int64, format string, args ...any) error {
	return &vdisk.FormatError{File: s.name, Off: off, Reason: fmt.Sprintf(format, args...)}
}

// openSparse opens the hosted sparse extent in f (named name), checks its
// header, reads its GD (from the footer when the header says GD_AT_END)
// or indexes its markers, and walks its grain tables for Allocated.
func openSparse(f *os.File, name string, cache *gtCache, grains *grainCache) (*sparse, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	s := &sparse{f: f, name: name, fileSize: fi.Size(), gts: cache, grains: grains}
	var hb [sector]byte
	if err := s.readFull(hb[:], 0, "header"); err != nil {
		return nil, err
	}
	if string(hb[:4]) != magicKDMV {
		return nil, s.errorf(0, "not a hosted sparse extent (magic %q)", hb[:4])
	}
	h := parseHeader(hb[:])
	if err := s.checkHeader(h, 0); err != nil {
		return nil, err
	}
	if h.descOffset != 0 && h.descSize != 0 {
		if h.descSize > maxDescriptor/sector || h.descOffset > uint64(s.fileSize)/sector {
			return nil, s.errorf(28, "embedded descriptor (%d sectors at sector %d) past the end of the file or larger than %d bytes", h.descSize, h.descOffset, maxDescriptor)
		}
		off := int64(h.descOffset) * sector
		n := min(int64(h.descSize)*sector, s.fileSize-off)
		b := make([]byte, n)
		if err := s.readFull(b, off, "embedded descriptor"); err != nil {
			return nil, err
		}
		// An extent of a twoGbMaxExtentSparse disk has room for a
		// descriptor but none written: all NULs, no createType.
		if i := bytes.IndexByte(b, 0); i != 0 {
			s.desc = parseEmbedded(b)
		}
	}
	if h.capacity == 0 {
		return nil, vdisk.Unsupported(name, "VMDK sparse header with capacity 0 (a descriptor wrapped in a sparse header)")
	}
	s.zeroGTE = h.flags&flagZeroGrain != 0
	s.compress = h.compressAlgo == compressDeflate
	s.markers = h.flags&flagMarkers != 0
	if h.gdOffset == gdAtEnd {
		fh, ok, err := s.footer()
		if err != nil {
			return nil, err
		}
		if ok && fh.gdOffset != gdAtEnd && fh.gdOffset != 0 {
			foot := s.fileSize - 2*sector
			if err := s.checkHeader(fh, foot); err != nil {
				return nil, err
			}
			if fh.capacity != h.capacity || fh.grain != h.grain || fh.numGTEs != h.numGTEs {
				return nil, s.errorf(foot, "footer disagrees with the header on capacity, grain or grain-table size")
			}
			h = fh
			s.zeroGTE = h.flags&flagZeroGrain != 0
			s.compress = h.compressAlgo == compressDeflate
			s.markers = h.flags&flagMarkers != 0
		} else {
			if !s.compress || !s.markers {
				return nil, s.errorf(56, "grain directory at the end, but no valid footer")
			}
			if err := s.scanMarkers(h); err != nil {
				return nil, err
			}
			return s, nil
		}
	}
	if s.compress && s.markers {
		if err := s.checkStreamSize(); err != nil {
			return nil, err
		}
	}
	if err := s.readGD(h); err != nil {
		return nil, err
	}
	if err := s.walk(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkHeader checks the fields of h (read at off) that this reader
// depends on, and sets the geometry.
func (s *sparse) checkHeader(h header, off int64) error {
	if h.version < 1 || h.version > 3 {
		return vdisk.Unsupported(s.name, fmt.Sprintf("VMDK sparse extent version %d", h.version))
	}
	if h.flags&flagNLDetect != 0 && string(h.checkBytes[:]) != "\n \r\n" {
		return s.errorf(off+73, "line-ending check bytes damaged (%q; copied in text mode?)", h.checkBytes[:])
	}
	if h.compressAlgo != compressNone && h.compressAlgo != compressDeflate {
		return vdisk.Unsupported(s.name, fmt.Sprintf("VMDK compression algorithm %d", h.compressAlgo))
	}
	if h.capacity > maxCapacity {
		return s.errorf(off+12, "capacity %d sectors is more than 2^63 bytes", h.capacity)
	}
	if h.grain == 0 || h.grain&(h.grain-1) != 0 {
		return s.errorf(off+20, "grain size %d sectors is not a power of two", h.grain)
	}
	if h.grain > maxGrain {
		return s.errorf(off+20, "grain size %d sectors is larger than %d", h.grain, maxGrain)
	}
	if h.numGTEs == 0 || h.numGTEs > maxGTEs {
		return s.errorf(off+44, "%d entries per grain table (want 1 to %d)", h.numGTEs, maxGTEs)
	}
	s.size = h.capacity * sector
	s.grain = h.grain * sector
	s.numGTEs = uint64(h.numGTEs)
	return nil
}

// footer reads the streamOptimized footer: the last three sectors are a
// footer marker, a copy of the header (with the real gdOffset) and the
// end-of-stream marker. ok is false when they are not there.
func (s *sparse) footer() (h header, ok bool, err error) {
	if s.fileSize < 4*sector {
		return h, false, nil
	}
	var b [3 * sector]byte
	if err := s.readFull(b[:], s.fileSize-3*sector, "footer"); err != nil {
		return h, false, err
	}
	le := binary.LittleEndian
	fm, ft, eos := b[:sector], b[sector:2*sector], b[2*sector:]
	if le.Uint32(fm[8:]) != 0 || le.Uint32(fm[12:]) != markerFooter || string(ft[:4]) != magicKDMV ||
		le.Uint64(eos) != 0 || le.Uint32(eos[8:]) != 0 || le.Uint32(eos[12:]) != markerEOS {
		return h, false, nil
	}
	return parseHeader(ft), true, nil
}

// checkStreamSize checks that a stream is a whole number of sectors, as
// VMware and qemu write it. (qemu 7.2 does not always end a stream with
// an end-of-stream marker, so that is not required.)
func (s *sparse) checkStreamSize() error {
	if s.fileSize%sector != 0 {
		return s.errorf(-1, "stream of %d bytes, not a whole number of sectors (truncated?)", s.fileSize)
	}
	return nil
}

// readGD reads the grain directory at h.gdOffset.
func (s *sparse) readGD(h header) error {
	span := s.grain * s.numGTEs
	n := s.size/span + min(1, s.size%span)
	if n*4 > maxGDBytes {
		return s.errorf(12, "grain directory of %d entries is larger than %d MiB", n, maxGDBytes>>20)
	}
	if h.gdOffset == 0 || h.gdOffset > uint64(s.fileSize)/sector || int64(h.gdOffset)*sector+int64(n)*4 > s.fileSize {
		return s.errorf(56, "grain directory (%d entries at sector %d) past the end of the file (%d bytes)", n, h.gdOffset, s.fileSize)
	}
	s.gdOff = int64(h.gdOffset) * sector
	b := make([]byte, n*4)
	if err := s.readFull(b, s.gdOff, "grain directory"); err != nil {
		return err
	}
	s.gd = make([]uint32, n)
	for i := range s.gd {
		s.gd[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return nil
}

// walk reads every grain table once, checks its entries and builds
// alloc. The work is bounded by the file: no more grain tables than the
// file can hold, no more grains than it can hold.
func (s *sparse) walk() error {
	gtBytes := int64(s.numGTEs) * 4
	maxGTs := s.fileSize/gtBytes + 1
	foot := int64(s.grain) // bytes of file per grain
	if s.compress {
		foot = sector
	}
	maxGrains := s.fileSize/foot + 1
	var tables, grains int64
	for i, g := range s.gd {
		if g == 0 {
			continue
		}
		if tables++; tables > maxGTs {
			return s.errorf(s.gdOff+4*int64(i), "more grain tables than the file can hold")
		}
		gt, err := s.readGT(uint64(i))
		if err != nil {
			return err
		}
		for j, e := range gt {
			gi := uint64(i)*s.numGTEs + uint64(j)
			start := gi * s.grain
			if start >= s.size || e == 0 {
				continue
			}
			if e == 1 && s.zeroGTE {
				// At most 256 extents (4 KiB) per grain table
				// (2 KiB of file) in the worst case.
				s.zeros = vdisk.Merge(s.zeros, vdisk.Extent{Off: start, End: min(start+s.grain, s.size)})
				continue
			}
			if grains++; grains > maxGrains {
				return s.errorf(int64(g)*sector+4*int64(j), "more grains than the file can hold")
			}
			end := min(start+s.grain, s.size)
			need := int64(end - start)
			if s.compress {
				need = markerHeader
				if !s.markers {
					need = 1
				}
			}
			if int64(e) > s.fileSize/sector || int64(e)*sector+need > s.fileSize {
				return s.errorf(int64(g)*sector+4*int64(j), "grain %d at sector %d past the end of the file (%d bytes)", gi, e, s.fileSize)
			}
			s.alloc = vdisk.Merge(s.alloc, vdisk.Extent{Off: start, End: end})
		}
	}
	return nil
}

// readGT returns grain table i of the GD, from the cache or the file.
func (s *sparse) readGT(i uint64) ([]uint32, error) {
	k := gtKey{s, i}
	if gt := s.gts.get(k); gt != nil {
		return gt, nil
	}
	g := s.gd[i]
	n := int64(s.numGTEs) * 4
	off := int64(g) * sector
	if int64(g) > s.fileSize/sector || off+n > s.fileSize {
		return nil, s.errorf(s.gdOff+4*int64(i), "grain table %d at sector %d past the end of the file (%d bytes)", i, g, s.fileSize)
	}
	b := make([]byte, n)
	if err := s.readFull(b, off, "grain table"); err != nil {
		return nil, err
	}
	gt := make([]uint32, s.numGTEs)
	for j := range gt {
		gt[j] = binary.LittleEndian.Uint32(b[4*j:])
	}
	s.gts.put(k, gt)
	return gt, nil
}

// scanMarkers indexes a streamOptimized extent that has no usable grain
// directory by walking its markers from the first grain to the
// end-of-stream marker: one index entry (16 bytes) per grain, at most
// one per 512 bytes of file.
func (s *sparse) scanMarkers(h header) error {
	le := binary.LittleEndian
	off := int64(h.overhead) * sector
	if h.overhead > uint64(s.fileSize)/sector {
		return s.errorf(64, "first grain at sector %d past the end of the file", h.overhead)
	}
	var b [sector]byte
	sorted := true
	for {
		if off+sector > s.fileSize {
			return s.errorf(off, "stream ends without an end-of-stream marker (truncated?)")
		}
		if err := s.readFull(b[:], off, "marker"); err != nil {
			return err
		}
		val, size := le.Uint64(b[:]), le.Uint32(b[8:])
		if size == 0 {
			typ := le.Uint32(b[12:])
			switch typ {
			case markerEOS:
				goto done
			case markerGT, markerGD, markerFooter:
			default:
				return s.errorf(off, "bad marker type %d", typ)
			}
			if val > uint64(s.fileSize-off)/sector {
				return s.errorf(off, "metadata marker of %d sectors past the end of the file", val)
			}
			off += sector + int64(val)*sector
			continue
		}
		if val%(s.grain/sector) != 0 || val >= s.size/sector+min(1, s.size%sector) {
			return s.errorf(off, "grain marker for sector %d: not a grain of the disk", val)
		}
		if uint64(size) > 2*s.grain || off+markerHeader+int64(size) > s.fileSize {
			return s.errorf(off, "grain marker of %d bytes too large or past the end of the file", size)
		}
		g := val / (s.grain / sector)
		if n := len(s.index); n > 0 && s.index[n-1].grain >= g {
			sorted = false
		}
		s.index = append(s.index, indexEntry{grain: g, sector: uint64(off / sector)})
		off = (off + markerHeader + int64(size) + sector - 1) &^ (sector - 1)
	}
done:
	if !sorted {
		slices.SortStableFunc(s.index, func(a, b indexEntry) int {
			switch {
			case a.grain < b.grain:
				return -1
			case a.grain > b.grain:
				return 1
			}
			return 0
		})
		for i := 1; i < len(s.index); i++ {
			if s.index[i].grain == s.index[i-1].grain {
				return s.errorf(int64(s.index[i].sector)*sector, "two grains for guest sector %d", s.index[i].grain*(s.grain/sector))
			}
		}
	}
	for _, e := range s.index {
		start := e.grain * s.grain
		s.alloc = vdisk.Merge(s.alloc, vdisk.Extent{Off: start, End: min(start+s.grain, s.size)})
	}
	return nil
}

// Grain states.
const (
	grainUnalloc = iota
	grainZero
	grainData
)

// lookup returns grain gi's state and, for data, its sector in the file.
func (s *sparse) lookup(gi uint64) (int, uint64, error) {
	if s.gd == nil {
		i, ok := slices.BinarySearchFunc(s.index, gi, func(e indexEntry, g uint64) int {
			switch {
			case e.grain < g:
				return -1
			case e.grain > g:
				return 1
			}
			return 0
		})
		if !ok {
			return grainUnalloc, 0, nil
		}
		return grainData, s.index[i].sector, nil
	}
	i := gi / s.numGTEs
	if i >= uint64(len(s.gd)) {
		return 0, 0, s.errorf(-1, "grain %d past the grain directory", gi)
	}
	if s.gd[i] == 0 {
		return grainUnalloc, 0, nil
	}
	gt, err := s.readGT(i)
	if err != nil {
		return 0, 0, err
	}
	e := gt[gi%s.numGTEs]
	switch {
	case e == 0:
		return grainUnalloc, 0, nil
	case e == 1 && s.zeroGTE:
		return grainZero, 0, nil
	}
	return grainData, uint64(e), nil
}

// readAt reads extent bytes [off, off+len(p)), within s.size.
func (s *sparse) readAt(p []byte, off uint64) error {
	for len(p) > 0 {
		gi := off / s.grain
		in := off % s.grain
		n := min(uint64(len(p)), s.grain-in)
		state, sec, err := s.lookup(gi)
		if err != nil {
			return err
		}
		switch {
		case state != grainData:
			clear(p[:n])
		case s.compress:
			if err := s.readCompressed(p[:n], gi, sec, in); err != nil {
				return err
			}
		default:
			at := int64(sec)*sector + int64(in)
			if err := s.readFull(p[:n], at, "grain"); err != nil {
				return err
			}
		}
		p = p[n:]
		off += n
	}
	return nil
}

// inflater is a reusable zlib reader and its buffers, pooled per extent.
type inflater struct {
	zr   io.ReadCloser
	src  bytes.Reader
	comp []byte
	one  [1]byte // the byte past a grain, which must not be there
}

// readCompressed reads p from grain gi, compressed at sector sec, from
// byte in of the grain.
//
// A read of a whole grain decompresses into p; a read of part of one
// goes through the Disk's cache of decompressed grains, so that reading
// a grain in small pieces (a scan's 8 KiB records of a 64 KiB grain)
// decompresses it once.
func (s *sparse) readCompressed(p []byte, gi, sec, in uint64) error {
	k := grainKey{s, gi}
	if g := s.grains.get(k); g != nil {
		copy(p, g[in:])
		return nil
	}
	whole := in == 0 && uint64(len(p)) == s.grain
	out := p
	if !whole {
		out = make([]byte, s.grain) // kept by the cache
	}
	if err := s.inflate(out, gi, sec); err != nil {
		return err
	}
	if !whole {
		copy(p, out[in:])
		s.grains.put(k, out)
	}
	return nil
}

// inflate decompresses grain gi, compressed at sector sec, into out, a
// grain long. The stream may hold less than a grain (the last grain of
// the extent), not less than the extent's bytes in that grain; the
// bytes of out past its end are left as they are.
func (s *sparse) inflate(out []byte, gi, sec uint64) error {
	s.inflated.Add(1)
	z, _ := s.bufs.Get().(*inflater)
	if z == nil {
		z = &inflater{comp: make([]byte, 2*s.grain+markerHeader)}
	}
	defer s.bufs.Put(z)
	at := int64(sec) * sector
	var comp []byte
	if s.markers {
		m := z.comp[:markerHeader] // a pooled buffer: no allocation
		if err := s.readFull(m, at, "grain marker"); err != nil {
			return err
		}
		lba, size := binary.LittleEndian.Uint64(m[:]), binary.LittleEndian.Uint32(m[8:])
		if lba != gi*(s.grain/sector) {
			return s.errorf(at, "grain marker for sector %d where grain %d (sector %d) was expected", lba, gi, gi*(s.grain/sector))
		}
		if size == 0 || uint64(size) > 2*s.grain {
			return s.errorf(at, "grain marker of %d compressed bytes (grain is %d)", size, s.grain)
		}
		comp = z.comp[:size]
		if err := s.readFull(comp, at+markerHeader, "compressed grain"); err != nil {
			return err
		}
	} else {
		if at >= s.fileSize {
			return s.errorf(at, "compressed grain %d past the end of the file", gi)
		}
		n := min(int64(2*s.grain), s.fileSize-at)
		comp = z.comp[:n]
		if err := s.readFull(comp, at, "compressed grain"); err != nil {
			return err
		}
	}
	z.src.Reset(comp)
	var err error
	if z.zr == nil {
		z.zr, err = zlib.NewReader(&z.src)
	} else {
		err = z.zr.(zlib.Resetter).Reset(&z.src, nil)
	}
	var got int
	if err == nil {
		// The zlib reader checks the stream's checksum when it
		// reaches its end: after a whole grain, read on to it.
		got, err = io.ReadFull(z.zr, out)
		switch err {
		case io.ErrUnexpectedEOF, io.EOF:
			err = nil
		case nil:
			if n, e := io.ReadFull(z.zr, z.one[:]); n > 0 {
				err = errors.New("more than a grain of data")
			} else if e != io.EOF {
				err = e
			}
		}
	}
	if err != nil {
		return &vdisk.FormatError{File: s.name, Off: at, Reason: fmt.Sprintf("grain %d: decompression failed", gi), Err: err}
	}
	want := min(s.grain, s.size-gi*s.grain)
	if uint64(got) < want {
		return s.errorf(at, "grain %d decompresses to %d bytes, want %d", gi, got, want)
	}
	return nil
}

// readFull reads len(b) bytes at off, a truncated file being a
// FormatError naming what was read.
func (s *sparse) readFull(b []byte, off int64, what string) error {
	n, err := s.f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		return s.errorf(off, "%s: %d bytes past the end of the file (%d bytes; truncated?)", what, len(b)-n, s.fileSize)
	}
	return fmt.Errorf("%s: reading %s at byte %d: %w", s.name, what, off, err)
}
