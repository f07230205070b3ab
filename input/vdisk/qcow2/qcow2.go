// Package qcow2 reads QEMU copy-on-write images, versions 2 and 3, as a
// vdisk.Disk: read-only, without qemu. Section names in the comments
// ("spec: Header") refer to QEMU's docs/interop/qcow2.txt.
//
// Read: v2 and v3 headers, cluster sizes 512 B to 2 MiB (cluster_bits
// 9..21), L1/L2 tables, unallocated and zero clusters, compressed
// clusters (zlib or zstd), extended L2 entries (subclusters), external
// data files (raw or not), backing files (any format the Opener reads,
// chains, backing files smaller or larger than the image), dirty images
// (the dirty bit only says the refcounts may be stale, and a reader does
// not use refcounts; QEMU too reads such an image without repairing it
// when it opens it read-only).
//
// Refused, with an error wrapping vdisk.ErrUnsupported: encryption (AES,
// LUKS), unknown incompatible feature bits, compression types other than
// zlib and zstd, versions other than 2 and 3, clusters over 2 MiB (QEMU's
// own limit). Refused as a *vdisk.FormatError: images marked corrupt
// (incompatible bit 1), and every structure that is out of bounds,
// misaligned or contradictory. Internal snapshots and bitmaps are
// ignored: the active L1 table is the disk.
//
// Memory per open image: the L1 entries that map the virtual size (at
// most 32 MiB), the Allocated extents, and two caches: up to 16 MiB of L2
// tables and 8 MiB of decompressed clusters (see image).
package qcow2

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/klauspost/compress/zstd"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

const (
	magic = "QFI\xfb"

	// maxL1Bytes bounds the active L1 table (QEMU's limit, spec: Header,
	// "size").
	maxL1Bytes = 32 << 20
	// maxBackingName is the longest backing file name (spec: Header,
	// "backing_file_size").
	maxBackingName = 1023

	// Incompatible feature bits (spec: Header, bytes 72-79).
	incDirty       = 1 << 0
	incCorrupt     = 1 << 1
	incDataFile    = 1 << 2
	incCompression = 1 << 3
	incExtendedL2  = 1 << 4
	incKnown       = incDirty | incCorrupt | incDataFile | incCompression | incExtendedL2

	// Header extension types (spec: Header extensions).
	extEnd           = 0x00000000
	extBackingFormat = 0xe2792aca
	extFeatureNames  = 0x6803f857
	extDataFile      = 0x44415441

	// L1 and L2 entry bits (spec: Cluster mapping).
	offsetMask = 0x00fffffffffffe00 // bits 9-55: a host offset
	l2Copied   = 1 << 63            // refcount 1; with a data file, "allocated at 0"
	l2Compr    = 1 << 62            // compressed cluster descriptor
	l2Zero     = 1 << 0             // standard descriptor: reads as zeros (not with extended L2)

	// subclusters per cluster with extended L2 entries (spec: Extended L2
	// Entries).
	subclusters = 32

	// cacheBytes bounds the memory of the L2 table cache of one image
	// (at least cacheMinTables tables are kept).
	cacheBytes     = 16 << 20
	cacheMinTables = 8
	// decompressed clusters kept for partial reads
	clusterCacheBytes = 8 << 20
	clusterCacheMin   = 4
)

// Detect reports whether header, the first bytes of a file (512 or more
// are passed; 4 suffice), starts with the qcow magic "QFI\xfb" (spec:
// Header, bytes 0-3). Version 1 qcow images have it too; Open refuses
// them.
func Detect(header []byte) bool {
	return len(header) >= 4 && string(header[:4]) == magic
}

// kind is what a guest cluster (or subcluster) reads as.
type kind uint8

const (
	unallocated kind = iota // from the backing file, else zeros
	zero                    // zeros, whatever the backing file holds
	normal                  // from the data file (the image or an external one)
	compressed              // a compressed cluster in the image file
)

// image is an open qcow2 image.
type image struct {
	path     string
	f        *os.File
	fileSize int64

	data     *os.File // holds the guest clusters: f or the external data file
	dataSize int64
	dataPath string // external data file's path, "" when none

	version  uint32
	size     uint64 // virtual size, bytes
	bits     uint   // cluster_bits
	csize    uint64 // cluster size, bytes
	extL2    bool   // extended L2 entries: 16-byte entries, 32 subclusters
	nsub     uint64 // subclusters per cluster: 32 with extended L2, else 1
	subBits  uint   // log2 of the subcluster size
	l2n      uint64 // entries per L2 table
	l1       []uint64
	l1Off    uint64
	zstd     bool
	cOffMask uint64 // compressed descriptor: host offset bits
	cSecBits uint   // compressed descriptor: where the sector count starts
	cSecMask uint64

	backing vdisk.Disk
	alloc   []vdisk.Extent

	// tables caches L2 tables by file offset: at most max(8, 16 MiB /
	// cluster size) tables, so 16 MiB for clusters up to 2 MiB.
	tables lru[[]uint64]
	// clusters caches decompressed clusters by compressed data offset,
	// for reads of parts of a cluster: at most max(4, 8 MiB / cluster
	// size), so 8 MiB.
	clusters lru[[]byte]
	pool     sync.Pool     // *decoder
	zd       *zstd.Decoder // zstd images: DecodeAll, safe for concurrent use
}

// Open opens the qcow2 image f, whose path is path (it names the file in
// errors and locates relative backing and data file names). On success
// the Disk owns f and closes it, with its data file and backing chain, on
// Close; on error the caller closes f.
//
// A backing file (spec: Header, backing_file_offset) is opened with
// open(vdisk.Dir(path), name); the backing format header extension,
// when present, must name the format the opened disk reports. open may
// be nil: then an image with a backing file is an error. An external data
// file (incompatible bit 2, spec: Header extensions, "External data file
// name string") is opened with os.Open, relative names against the
// image's directory.
//
// Open walks the active L1 and L2 tables once to build Allocated and to
// validate every entry, so that a damaged image fails here rather than
// in the middle of a scan. The work and memory are bounded by the file's
// size: the L1 table is at most 32 MiB and must lie in the file, each L2
// table is read once (two L1 entries naming the same table are refused)
// and must lie in the file.
//
// Errors: a *vdisk.FormatError for a damaged, truncated or hostile image
// (Off is the byte offset of the field or entry at fault) and for a
// backing or data file that cannot be opened; an error wrapping
// vdisk.ErrUnsupported for a variant this package does not read.
func Open(f *os.File, path string, open vdisk.Opener) (vdisk.Disk, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	d := &image{path: path, f: f, fileSize: fi.Size()}
	if err := d.open(open); err != nil {
		d.closeOthers()
		return nil, err
	}
	return d, nil
}

func (d *image) errAt(off int64, format string, args ...any) error {
	return &vdisk.FormatError{File: d.path, Off: off, Reason: fmt.Sprintf(format, args...)}
}

// header fields (spec: Header).
type header struct {
	version                      uint32
	backingOff                   uint64
	backingLen                   uint32
	bits                         uint32
	size                         uint64
	crypt                        uint32
	l1Size                       uint32
	l1Off                        uint64
	incompat, compat, autoclear  uint64
	headerLen                    uint32
	compressionType              uint8
	backingFormat, dataFile      string
	dataFileSeen, backingFmtSeen bool
	featureNames                 map[int]string // incompatible bit -> name
}

func (d *image) open(open vdisk.Opener) error {
	be := binary.BigEndian
	const v2Len, v3Len = 72, 104
	if d.fileSize < v2Len {
		return d.errAt(0, "truncated: %d bytes, less than a qcow2 header (%d)", d.fileSize, v2Len)
	}
	var fixed [v3Len]byte
	n, err := d.f.ReadAt(fixed[:], 0)
	if n < v2Len {
		return &vdisk.FormatError{File: d.path, Off: 0, Reason: "reading the header", Err: err}
	}
	b := fixed[:n]
	if !Detect(b) {
		return d.errAt(0, "not a qcow2 image (no QFI\\xfb magic)")
	}
	var h header
	h.version = be.Uint32(b[4:])
	switch h.version {
	case 2, 3:
	case 1:
		return vdisk.Unsupported(d.path, "qcow version 1 (the original qcow, not qcow2)")
	default:
		return vdisk.Unsupported(d.path, fmt.Sprintf("qcow2 version %d", h.version))
	}
	h.backingOff = be.Uint64(b[8:])
	h.backingLen = be.Uint32(b[16:])
	h.bits = be.Uint32(b[20:])
	h.size = be.Uint64(b[24:])
	h.crypt = be.Uint32(b[32:])
	h.l1Size = be.Uint32(b[36:])
	h.l1Off = be.Uint64(b[40:])
	h.headerLen = v2Len
	if h.bits < 9 {
		return d.errAt(20, "cluster_bits %d, less than 9", h.bits)
	}
	if h.bits > 21 {
		return vdisk.Unsupported(d.path, fmt.Sprintf("qcow2 cluster size 2^%d (over 2 MiB, QEMU's limit too)", h.bits))
	}
	csize := uint64(1) << h.bits
	if h.version == 3 {
		if n < v3Len {
			return d.errAt(0, "truncated: %d bytes, less than a qcow2 v3 header (%d)", d.fileSize, v3Len)
		}
		h.incompat = be.Uint64(b[72:])
		h.compat = be.Uint64(b[80:])
		h.autoclear = be.Uint64(b[88:])
		h.headerLen = be.Uint32(b[100:])
		if h.headerLen < v3Len || h.headerLen%8 != 0 || uint64(h.headerLen) > csize {
			return d.errAt(100, "header_length %d: not a multiple of 8 in [%d, cluster size %d]", h.headerLen, v3Len, csize)
		}
	}
	switch h.crypt {
	case 0:
	case 1:
		return vdisk.Unsupported(d.path, "encrypted qcow2 (aes)")
	case 2:
		return vdisk.Unsupported(d.path, "encrypted qcow2 (luks)")
	default:
		return vdisk.Unsupported(d.path, fmt.Sprintf("encrypted qcow2 (crypt_method %d)", h.crypt))
	}

	// The first cluster holds the header, its extensions and the backing
	// file name (spec: Header extensions).
	first := make([]byte, min(csize, uint64(d.fileSize)))
	if _, err := d.f.ReadAt(first, 0); err != nil {
		return &vdisk.FormatError{File: d.path, Off: 0, Reason: "reading the first cluster", Err: err}
	}
	if uint64(h.headerLen) > uint64(len(first)) {
		return d.errAt(100, "truncated: header_length %d, file of %d bytes", h.headerLen, d.fileSize)
	}
	if h.headerLen > v3Len {
		h.compressionType = first[v3Len]
	}
	if err := d.extensions(&h, first, csize); err != nil {
		return err
	}

	// Feature bits (spec: Header, bytes 72-95).
	if unknown := h.incompat &^ incKnown; unknown != 0 {
		var names []string
		for i := 0; i < 64; i++ {
			if unknown&(1<<i) != 0 {
				s := fmt.Sprintf("bit %d", i)
				if name := h.featureNames[i]; name != "" {
					s += fmt.Sprintf(" %q", name)
				}
				names = append(names, s)
			}
		}
		return vdisk.Unsupported(d.path, "qcow2 incompatible feature "+strings.Join(names, ", "))
	}
	if h.incompat&incCorrupt != 0 {
		return d.errAt(72, "image marked corrupt (incompatible feature bit 1; qemu-img check -r all may repair it)")
	}
	switch {
	case h.incompat&incCompression != 0 && h.headerLen <= v3Len:
		return d.errAt(72, "compression type bit set but the header (%d bytes) has no compression_type field", h.headerLen)
	case h.incompat&incCompression != 0 && h.compressionType == 0:
		return d.errAt(104, "compression type bit set but compression_type is 0 (zlib)")
	case h.incompat&incCompression == 0 && h.compressionType != 0:
		return d.errAt(104, "compression_type %d without the compression type bit", h.compressionType)
	case h.compressionType > 1:
		return vdisk.Unsupported(d.path, fmt.Sprintf("qcow2 compression type %d", h.compressionType))
	}
	d.version = h.version
	d.bits = uint(h.bits)
	d.csize = csize
	d.zstd = h.compressionType == 1
	d.extL2 = h.incompat&incExtendedL2 != 0
	d.nsub, d.subBits, d.l2n = 1, d.bits, csize/8
	if d.extL2 {
		if h.bits < 14 {
			return d.errAt(20, "extended L2 entries need clusters of 16 KiB or more, cluster_bits is %d", h.bits)
		}
		d.nsub, d.subBits, d.l2n = subclusters, d.bits-5, csize/16
	}
	// Compressed cluster descriptor (spec: Cluster mapping): x = 62 -
	// (cluster_bits - 8) offset bits, then the count of additional
	// 512-byte sectors up to bit 61.
	d.cSecBits = 62 - (d.bits - 8)
	d.cOffMask = 1<<d.cSecBits - 1
	d.cSecMask = 1<<(d.bits-8) - 1

	// Virtual size and the L1 table.
	if h.size > math.MaxInt64 {
		return d.errAt(24, "virtual size %d over 2^63-1", h.size)
	}
	// qemu's block layer counts whole 512-byte sectors: a size that is
	// not a multiple (only a hand-edited header has one) is cut down.
	d.size = h.size &^ 511
	if uint64(h.l1Size)*8 > maxL1Bytes {
		return d.errAt(36, "L1 table of %d entries over 32 MiB", h.l1Size)
	}
	span := csize * d.l2n // guest bytes per L1 entry
	need := (d.size + span - 1) / span
	if uint64(h.l1Size) < need {
		return d.errAt(36, "L1 table of %d entries, the virtual size %d needs %d", h.l1Size, d.size, need)
	}
	if h.l1Size > 0 {
		if h.l1Off%csize != 0 {
			return d.errAt(40, "L1 table offset %d not aligned to the cluster size %d", h.l1Off, csize)
		}
		if h.l1Off > uint64(d.fileSize) || uint64(h.l1Size)*8 > uint64(d.fileSize)-h.l1Off {
			return d.errAt(40, "L1 table [%d, +%d) past the end of the file (%d bytes)", h.l1Off, uint64(h.l1Size)*8, d.fileSize)
		}
	}
	d.l1Off = h.l1Off
	raw := make([]byte, need*8) // only the entries that map the virtual size
	if _, err := d.f.ReadAt(raw, int64(h.l1Off)); err != nil {
		return &vdisk.FormatError{File: d.path, Off: int64(h.l1Off), Reason: "reading the L1 table", Err: err}
	}
	d.l1 = make([]uint64, need)
	for i := range d.l1 {
		d.l1[i] = be.Uint64(raw[8*i:])
	}

	// External data file (incompatible bit 2).
	d.data, d.dataSize = d.f, d.fileSize
	if h.incompat&incDataFile != 0 {
		if h.dataFile == "" {
			return d.errAt(72, "external data file bit set but the image names no data file")
		}
		p := vdisk.Join(vdisk.Dir(d.path), h.dataFile)
		// O_NONBLOCK: a FIFO named by a hostile image must not block
		// Open; only a regular file is accepted.
		df, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return &vdisk.FormatError{File: d.path, Off: -1, Reason: fmt.Sprintf("external data file %q", h.dataFile), Err: err}
		}
		d.data, d.dataPath = df, p
		fi, err := df.Stat()
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return d.errAt(-1, "external data file %q is not a regular file (%v)", h.dataFile, fi.Mode().Type())
		}
		d.dataSize = fi.Size()
	}

	// Backing file.
	if h.backingOff != 0 && h.backingLen > 0 {
		if h.backingLen > maxBackingName || h.backingOff > uint64(len(first)) || uint64(h.backingLen) > uint64(len(first))-h.backingOff {
			return d.errAt(8, "backing file name [%d, +%d) not within the first cluster, or over %d bytes", h.backingOff, h.backingLen, maxBackingName)
		}
		name := string(first[h.backingOff : h.backingOff+uint64(h.backingLen)])
		if open == nil {
			return fmt.Errorf("%s: backing file %q: no Opener given to open it", d.path, name)
		}
		bd, err := open(vdisk.Dir(d.path), name)
		if err != nil {
			return &vdisk.FormatError{File: d.path, Off: int64(h.backingOff), Reason: fmt.Sprintf("backing file %q", name), Err: err}
		}
		d.backing = bd
		if h.backingFmtSeen && h.backingFormat != "" {
			got, _, _ := strings.Cut(bd.Format(), " ")
			if got != h.backingFormat {
				return d.errAt(-1, "backing file %q is %s, the header says %s", name, bd.Format(), h.backingFormat)
			}
		}
	}

	d.tables.init(max(cacheMinTables, cacheBytes/int(csize)))
	d.clusters.init(max(clusterCacheMin, clusterCacheBytes/int(csize)))
	d.pool.New = func() any { return d.newDecoder() }
	if d.zstd {
		// Output bounded to 2 MiB or 2 clusters (more is refused after
		// decoding), the window to 8 MiB, zstd's default: QEMU's frames
		// hold one cluster, and encoders may declare a larger window.
		zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(4),
			zstd.WithDecoderMaxMemory(max(2*csize, 2<<20)), zstd.WithDecoderMaxWindow(8<<20))
		if err != nil {
			return err
		}
		d.zd = zd
	}
	return d.walk()
}

// extensions reads the header extensions after the header, up to the
// backing file name or the end of the first cluster (spec: Header
// extensions).
func (d *image) extensions(h *header, first []byte, csize uint64) error {
	be := binary.BigEndian
	end := csize
	if h.backingOff != 0 && h.backingOff < end {
		end = h.backingOff
	}
	seen := map[uint32]bool{}
	for off := uint64(h.headerLen); off < end; {
		if off+8 > end {
			return d.errAt(int64(off), "header extension header crosses the end of the extension area (%d)", end)
		}
		if off+8 > uint64(len(first)) {
			return d.errAt(int64(off), "truncated in the header extensions")
		}
		typ := be.Uint32(first[off:])
		n := uint64(be.Uint32(first[off+4:]))
		if typ == extEnd {
			break
		}
		data := off + 8
		if n > end-data {
			return d.errAt(int64(off), "header extension 0x%08x of %d bytes past the extension area (%d)", typ, n, end)
		}
		if data+n > uint64(len(first)) {
			return d.errAt(int64(off), "truncated in the header extensions")
		}
		body := first[data : data+n]
		if seen[typ] && (typ == extBackingFormat || typ == extDataFile) {
			return d.errAt(int64(off), "header extension 0x%08x twice", typ)
		}
		seen[typ] = true
		switch typ {
		case extBackingFormat:
			h.backingFormat, h.backingFmtSeen = string(body), true
		case extDataFile:
			h.dataFile, h.dataFileSeen = string(body), true
		case extFeatureNames:
			// 48-byte entries: type, bit, name (spec: Feature name table).
			h.featureNames = map[int]string{}
			for e := body; len(e) >= 48; e = e[48:] {
				if e[0] == 0 && e[1] < 64 {
					h.featureNames[int(e[1])] = string(bytes.TrimRight(e[2:48], "\x00"))
				}
			}
		}
		off = data + (n+7)&^7
	}
	return nil
}

// entry is one L2 entry, decoded and validated (spec: Cluster mapping,
// Extended L2 Entries): a compressed cluster, or a standard cluster whose
// subclusters (one without extended L2 entries) are allocated (alloc
// bit), read as zeros (zero bit) or neither (unallocated).
type entry struct {
	compressed  bool
	host        uint64 // data cluster offset in the data file; compressed data offset
	csize       uint64 // compressed: bytes of compressed data from host
	alloc, zero uint32 // subcluster bitmaps (bit 0 only without extended L2)
}

func (e entry) kind(sub uint) kind {
	switch {
	case e.compressed:
		return compressed
	case e.alloc&(1<<sub) != 0:
		return normal
	case e.zero&(1<<sub) != 0:
		return zero
	}
	return unallocated
}

// decode decodes entry i of the L2 table at file offset l2Off.
func (d *image) decode(t []uint64, l2Off, i uint64) (entry, error) {
	var e entry
	stride := uint64(1)
	if d.extL2 {
		stride = 2
	}
	at := int64(l2Off + i*stride*8) // the entry's file offset, for errors
	w := t[i*stride]
	if w&l2Compr != 0 {
		if d.dataPath != "" {
			return e, d.errAt(at, "compressed cluster in an image with an external data file")
		}
		e.compressed = true
		e.host = w & d.cOffMask
		sectors := (w>>d.cSecBits)&d.cSecMask + 1
		e.csize = sectors*512 - e.host%512
		if e.host >= uint64(d.fileSize) {
			return e, d.errAt(at, "compressed cluster at %d past the end of the file (%d bytes)", e.host, d.fileSize)
		}
		return e, nil
	}
	e.host = w & offsetMask
	hasHost := e.host != 0 || (d.dataPath != "" && w&l2Copied != 0)
	if d.extL2 {
		bm := t[i*stride+1]
		e.alloc, e.zero = uint32(bm), uint32(bm>>32)
		if e.alloc&e.zero != 0 {
			return e, d.errAt(at+8, "subcluster bitmap 0x%016x: subclusters both allocated and zero", bm)
		}
		if !hasHost && e.alloc != 0 {
			return e, d.errAt(at+8, "subclusters allocated in a cluster without a host offset")
		}
	} else if w&l2Zero != 0 {
		e.zero = 1
	} else if hasHost {
		e.alloc = 1
	}
	if e.alloc != 0 {
		if e.host%d.csize != 0 {
			return e, d.errAt(at, "data cluster offset %d not aligned to the cluster size %d", e.host, d.csize)
		}
		if e.host >= uint64(d.dataSize) {
			file := "the file"
			if d.dataPath != "" {
				file = "the data file " + d.dataPath
			}
			return e, d.errAt(at, "data cluster at %d past the end of %s (%d bytes)", e.host, file, d.dataSize)
		}
	}
	return e, nil
}

// l2Table checks the L1 entry l1i and returns the offset of its L2 table,
// 0 when it has none.
func (d *image) l2Offset(l1i uint64) (uint64, error) {
	off := d.l1[l1i] & offsetMask
	if off == 0 {
		return 0, nil
	}
	at := int64(d.l1Off + 8*l1i)
	if off%d.csize != 0 {
		return 0, d.errAt(at, "L2 table offset %d not aligned to the cluster size %d", off, d.csize)
	}
	if off > uint64(d.fileSize) || d.csize > uint64(d.fileSize)-off {
		return 0, d.errAt(at, "L2 table at %d past the end of the file (%d bytes)", off, d.fileSize)
	}
	return off, nil
}

// readL2 reads the L2 table at off (one cluster).
func (d *image) readL2(off uint64) ([]uint64, error) {
	buf := make([]byte, d.csize)
	if _, err := d.f.ReadAt(buf, int64(off)); err != nil {
		return nil, &vdisk.FormatError{File: d.path, Off: int64(off), Reason: "reading an L2 table", Err: err}
	}
	t := make([]uint64, d.csize/8)
	for i := range t {
		t[i] = binary.BigEndian.Uint64(buf[8*i:])
	}
	return t, nil
}

// table returns the L2 table of L1 entry l1i (nil when none) and its
// offset, through the cache.
func (d *image) table(l1i uint64) ([]uint64, uint64, error) {
	off, err := d.l2Offset(l1i)
	if err != nil || off == 0 {
		return nil, 0, err
	}
	if t, ok := d.tables.get(off); ok {
		return t, off, nil
	}
	t, err := d.readL2(off)
	if err != nil {
		return nil, 0, err
	}
	d.tables.put(off, t)
	return t, off, nil
}

// walk reads every L2 table once, validating its entries, and sets
// d.alloc: this image's data (normal and compressed clusters, allocated
// subclusters), and the backing disk's where this image has neither data
// nor zeros.
func (d *image) walk() error {
	var data, own []vdisk.Extent // own: data or zero
	seen := make(map[uint64]uint64)
	span := d.csize * d.l2n
	sub := uint64(1) << d.subBits
	for l1i := range uint64(len(d.l1)) {
		off, err := d.l2Offset(l1i)
		if err != nil {
			return err
		}
		if off == 0 {
			continue
		}
		if j, dup := seen[off]; dup {
			return d.errAt(int64(d.l1Off+8*l1i), "L2 table at %d used by L1 entries %d and %d", off, j, l1i)
		}
		seen[off] = l1i
		t, err := d.readL2(off)
		if err != nil {
			return err
		}
		for i := range d.l2n {
			g := l1i*span + i*d.csize
			if g >= d.size {
				break
			}
			e, err := d.decode(t, off, i)
			if err != nil {
				return err
			}
			for s := range d.nsub {
				so := g + s*sub
				if so >= d.size {
					break
				}
				x := vdisk.Extent{Off: so, End: min(so+sub, d.size)}
				switch e.kind(uint(s)) {
				case normal, compressed:
					data = vdisk.Merge(data, x)
					own = vdisk.Merge(own, x)
				case zero:
					own = vdisk.Merge(own, x)
				}
			}
		}
	}
	d.alloc = data
	if d.backing != nil {
		b := vdisk.Minus(vdisk.Clip(d.backing.Allocated(), d.size), own)
		d.alloc = vdisk.Union(data, b)
	}
	return nil
}

func (d *image) Size() uint64 { return d.size }

func (d *image) Format() string { return fmt.Sprintf("qcow2 v%d", d.version) }

// Allocated returns the guest ranges with data, in this image (standard
// and compressed clusters, allocated subclusters) or, where this image
// has neither data nor zeros, in its backing chain, within the virtual
// size. Zero clusters and subclusters are not allocated and hide the
// backing file's data (as qemu-img map reports them: data false).
func (d *image) Allocated() []vdisk.Extent { return d.alloc }

// Close closes the image file, its external data file and its backing
// chain.
func (d *image) Close() error {
	err := d.closeOthers()
	if e := d.f.Close(); err == nil {
		err = e
	}
	return err
}

// closeOthers closes what Open opened: the data file and the backing
// chain.
func (d *image) closeOthers() error {
	var err error
	if d.zd != nil {
		d.zd.Close()
		d.zd = nil
	}
	if d.data != nil && d.data != d.f {
		err = d.data.Close()
		d.data = nil
	}
	if d.backing != nil {
		if e := d.backing.Close(); err == nil {
			err = e
		}
		d.backing = nil
	}
	return err
}

// errNegative is ReadAt's error for a negative offset.
var errNegative = errors.New("qcow2: negative offset")

// lru keeps the most recently used values of at most max keys. Values
// are never modified once put, so one evicted while a reader uses it
// stays valid.
type lru[V any] struct {
	mu  sync.Mutex
	max int
	m   map[uint64]*list.Element
	l   list.List // of *cached[V], most recent first
}

type cached[V any] struct {
	key uint64
	v   V
}

func (c *lru[V]) init(max int) {
	c.max = max
	c.m = make(map[uint64]*list.Element)
}

func (c *lru[V]) get(key uint64) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.l.MoveToFront(el)
		return el.Value.(*cached[V]).v, true
	}
	var zero V
	return zero, false
}

func (c *lru[V]) put(key uint64, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.l.MoveToFront(el)
		return
	}
	c.m[key] = c.l.PushFront(&cached[V]{key, v})
	for c.l.Len() > c.max {
		el := c.l.Back()
		c.l.Remove(el)
		delete(c.m, el.Value.(*cached[V]).key)
	}
}

var _ io.ReaderAt = (*image)(nil)

// Files returns the image file, its external data file and the backing
// chain's files (vdisk.Filer).
func (d *image) Files() []*os.File {
	files := []*os.File{d.f}
	if d.data != nil && d.data != d.f {
		files = append(files, d.data)
	}
	if d.backing != nil {
		files = append(files, vdisk.FilesOf(d.backing)...)
	}
	return files
}

// DataFile returns the external data file a qcow2 v3 image names in its
// header extensions ("data file name", spec: Header extensions), read from
// head, the first bytes of the file (4 KiB cover the extensions of the
// images qemu-img makes). ok is false when head is not such an image or
// the name lies beyond head. A walk that meets an image and its data file
// reads the data through the image only (package guest).
func DataFile(head []byte) (name string, ok bool) {
	be := binary.BigEndian
	if len(head) < 104 || !Detect(head) || be.Uint32(head[4:]) != 3 {
		return "", false
	}
	bits := be.Uint32(head[20:])
	if bits < 9 || bits > 21 {
		return "", false
	}
	end := min(uint64(len(head)), uint64(1)<<bits)
	if bo := be.Uint64(head[8:]); bo != 0 && bo < end {
		end = bo
	}
	for off := uint64(be.Uint32(head[100:])); off >= 104 && off+8 <= end; {
		typ, n := be.Uint32(head[off:]), uint64(be.Uint32(head[off+4:]))
		if typ == extEnd || n > end-off-8 {
			return "", false
		}
		if typ == extDataFile {
			return string(head[off+8 : off+8+n]), n > 0
		}
		off += 8 + (n+7)&^7
	}
	return "", false
}
