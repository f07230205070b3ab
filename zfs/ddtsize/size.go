package ddtsize

// The size of the real dedup table a pool would build for the scanned data
// (zfs-semantics §2.4–§2.6): what `zdb -DD` prints per DDT object as dspace
// (on disk) and mspace (in core), and `zpool status -D` as their sum.
//
// A DDT is one ZAP object per class: DDT-sha256-zap-unique holds the
// entries referenced once, DDT-sha256-zap-duplicate those referenced more
// often (module/zfs/ddt.c: ddt_class_t; the ditto class is no longer
// written). Each is a fat ZAP (module/zfs/ddt_zap.c: ddt_zap_create() always
// passes flags, so zap_create_flags() upgrades it at once): block 0 is the
// header (zap_phys_t with the embedded pointer table in its second half,
// include/sys/zap_impl.h), every other block a leaf of 24-byte chunks
// (include/sys/zap_leaf.h). An entry takes one entry chunk, two array
// chunks for its 40-byte key (ddt_key_t: checksum + sizes, 21 bytes a chunk)
// and ceil(V/21) chunks for its value of V bytes: a version byte and the
// phys, ZLE-compressed when that fits (ddt_zap.c: ddt_zap_compress(), ddt.c:
// ddt_compress() before 2.3).
//
//   - legacy ("trad") entries carry 4 phys variants of 64 bytes (256); only
//     the one for the data's copies is set, so ZLE brings it to 15–21 bytes
//     with copies=1: 4 chunks, 96 bytes (5 chunks with copies 2 or 3);
//   - fast-dedup (FDT, 2.3+) entries carry one flat phys of 72 bytes, which
//     ZLE can never fit in 72 bytes (it needs 64 free bytes to start a
//     literal run), so V = 73: 7 chunks, 168 bytes.
//
// A leaf holds (blocksize − blocksize/16)/24 − 2 chunks (158 in 4 KiB
// leaves, 1278 in 32 KiB ones; ddt_zap.c uses 4 KiB until 2.1 and 32 KiB
// from 2.2), so at most 39 legacy or 182 FDT entries. ZAP leaves split in
// two by the next hash bit when full (zap.c: zap_expand_leaf(),
// zap_leaf.c: zap_leaf_split()), and DDT keys are pre-hashed checksums, so
// the number of leaves is that of extendible hashing over uniform keys: in
// the long run n / (capacity × ln 2), about 69% full, with a few percent of
// oscillation, and for small n a step function. The model takes its exact
// expectation over random keys (leafDP).
//
// mspace is the object's level-0 blocks × block size (doi_fill_count ×
// doi_data_block_size: the uncompressed ZAP as if wholly cached): header,
// leaves and, past 2^(blockshift−4) pointer-table entries, the pointer
// table's own blocks. dspace is the object's allocated bytes
// (doi_physical_blocks_512 × 512): every block compressed with the
// metadata compressor (what compression=on means: lz4 from 0.6.5),
// rounded like any block of the release and pool, in 3 copies (DDT ZAPs
// live in the MOS: dmu.c: dmu_write_policy(), copies + 1, at most 3),
// indirect blocks included. The model builds each block as ZFS lays it out
// (header, hash table, entry, key and value chunks, free chunks) with
// random keys and entries like the real ones, and runs the real compressor
// on it (package zio): how well a leaf compresses depends on its fill, so
// the expectation is taken per fill. What the entries hold matters to LZ4
// as much as the fill: real leaves of a pool written by one copy have the
// same birth txg and nearly the same creation time in every entry, and
// block sizes in whole sectors; the model draws them so (Params,
// BlockShape). Real leaves read back from real pools compress with the
// model's LZ4 to the PSIZE zdb lists, byte for byte
// (TestRealLeafCompression).
//
// On 2.3.0–2.3.3 pools some blocks are stored uncompressed: the dedup
// log's flush spreads over 8 sync passes, and a block rewritten in pass 8
// of a txg is not compressed (flush.go; from 2.3.4 the flush runs in pass
// 1 only). The model replays the flush on random keys
// and counts them (Basis.WholeLeaves): a fifth of the leaves of a
// table of a few thousand entries, a few dozen leaves of any big one.
//
// What it cannot know: the real checksums (ddtsim keys blocks by BLAKE3 of
// their logical bytes, not by the SHA-256 of their physical bytes that
// ZFS uses), so the leaf count is an expectation, exact only on average;
// the real DVA offsets, txgs and times that land in the entries, nor the
// spread of block sizes (assumed: a pool filled from empty by one copy, a
// txg per 256 MiB; see Params); data written before the table existed;
// and entries that changed class after they were flushed (a block first
// unique, referenced again in a later txg: its entry leaves a hole in the
// unique ZAP, whose leaves never merge).
// A 2.3 pool also keeps entries changed in the last txgs in the dedup log
// (ddt_log.c) before flushing them into the ZAPs: 144 bytes in memory per
// entry (DDT_LOG_ENTRY_FLAT_SIZE), bounded by zfs_dedup_log_mem_max (1% of
// RAM). zdb -DD on an exported pool shows the flushed ZAPs, which is what
// OnDisk and InCore model; `zpool status -D` right after a copy may still
// show the log (LogInCore).

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/ddtsim/ddtsim/zfs/compress/zle"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// On-disk constants of the ZAP and DDT (include/sys/zap_leaf.h,
// zap_impl.h, ddt.h, ddt_impl.h, zio.h, spa.h).
const (
	zapChunk      = 24 // ZAP_LEAF_CHUNKSIZE
	zapArrayBytes = 21 // ZAP_LEAF_ARRAY_BYTES
	zapLeafHeader = 48 // struct zap_leaf_header
	chunkArray    = 251
	chunkEntry    = 252
	chunkFree     = 253
	chainEnd      = 0xffff
	zbtLeaf       = 1 << 63
	zbtHeader     = 1<<63 + 1
	zapMagic      = 0x2F52AB2AB
	zapLeafMagic  = 0x2AB1EAF
	// zapFlags: ZAP_FLAG_HASH64 | ZAP_FLAG_UINT64_KEY |
	// ZAP_FLAG_PRE_HASHED_KEY (ddt_zap_create() with a dedup checksum).
	zapFlags = 7
	// zapHashLowBits: zap_hash() keeps 48 bits of a HASH64 key.
	zapHashLowBits = 16

	ddtKeyWords  = 5   // DDT_KEY_WORDS: checksum (4) and the size word
	ddtFlatPhys  = 72  // ddp_flat: 3 DVAs, refcnt, phys birth, class start
	ddtTradPhys  = 256 // ddp_trad[4]: 4 × (3 DVAs, refcnt, birth)
	ddtByteorder = 0x80
	compressOff  = 2  // ZIO_COMPRESS_OFF
	compressZLE  = 14 // ZIO_COMPRESS_ZLE
	compressLZ4  = 15 // ZIO_COMPRESS_LZ4

	mosCopies    = 3   // MOS blocks: os_copies + 1, capped at SPA_DVAS_PER_BP
	blkptrBytes  = 128 // sizeof (blkptr_t)
	dnodeBlkptrs = 3   // a DDT ZAP's dnode has no bonus buffer: 3 block pointers

	// LogEntryBytes is DDT_LOG_ENTRY_FLAT_SIZE: an FDT entry waiting in the
	// in-memory dedup log (key 40, AVL node 24, type and class 8, flat phys
	// 72; module/zfs/ddt_log.c).
	LogEntryBytes = 144
	// RuleOfThumbBytes is the classic estimate of DDT memory per entry
	// (Oracle and FreeBSD documentation, many forum answers).
	RuleOfThumbBytes = 320
)

// Table formats.
const (
	FormatLegacy = "legacy" // ZAP of trad entries (DDT version 0): every release, and pools whose DDT predates fast dedup
	FormatFDT    = "FDT"    // fast dedup table (version 1): flat entries and a log (2.3.0+, new pools)
)

// Result is the modelled size of a DDT. Sizes are bytes.
type Result struct {
	Format  string `json:"format"` // FormatLegacy or FormatFDT
	Entries uint64 `json:"entries"`
	// OnDisk is Σ dspace: allocated bytes of the ZAP objects, every copy
	// and indirect block included, as zdb -DD prints them (2.3+; earlier
	// releases print them per entry).
	OnDisk uint64 `json:"on_disk"`
	// InCore is Σ mspace: level-0 ZAP blocks × block size, the table
	// uncompressed as if wholly cached, as zdb -DD and zpool status -D
	// print it.
	InCore uint64 `json:"in_core"`
	// LogInCore (FDT) is what entries take while they wait in the
	// in-memory dedup log: entries × LogEntryBytes. `zpool status -D` shows
	// this just after a copy, before the log is flushed into the ZAPs.
	LogInCore uint64 `json:"log_in_core,omitempty"`
	// RuleOfThumb is entries × RuleOfThumbBytes.
	RuleOfThumb uint64   `json:"rule_of_thumb"`
	Objects     []Object `json:"objects"`
	Basis       Basis    `json:"basis"`
}

// Object is one DDT ZAP object (one class).
type Object struct {
	Name    string  `json:"name"` // as zdb -DD names it, e.g. DDT-sha256-zap-unique
	Entries uint64  `json:"entries"`
	Leaves  float64 `json:"leaves"` // expected leaf blocks
	// Blocks is the expected level-0 blocks (doi_fill_count): header,
	// leaves and pointer-table blocks.
	Blocks   float64 `json:"blocks"`
	Indirect int     `json:"indirect_blocks"`
	OnDisk   uint64  `json:"on_disk"` // dspace
	InCore   uint64  `json:"in_core"` // mspace
}

// Basis holds the per-entry and per-block figures the model rests on.
type Basis struct {
	BlockSize    uint64  `json:"block_size"`    // ZAP leaf and indirect block size
	ValueBytes   int     `json:"value_bytes"`   // a stored value: version byte + phys, ZLE-compressed when that fits
	EntryChunks  int     `json:"entry_chunks"`  // 24-byte chunks per entry: entry, 2 key, value
	EntryBytes   int     `json:"entry_bytes"`   // EntryChunks × 24
	LeafCapacity int     `json:"leaf_capacity"` // entries a leaf holds at most
	LeafChunks   int     `json:"leaf_chunks"`   // chunks in a leaf
	Fill         float64 `json:"fill"`          // entries per leaf / capacity, over all objects
	Compression  string  `json:"compression"`   // the metadata compressor
	Copies       int     `json:"copies"`        // copies of every DDT block (MOS)
	// LeafOnDisk is the mean allocated size of a leaf, all copies, bytes.
	LeafOnDisk float64 `json:"leaf_on_disk"`
	// WholeLeaves (2.3.0–2.3.3) is the expected number of leaves stored
	// uncompressed because the dedup log's flush rewrote them in sync pass
	// 8 or later (flush.go); they are counted in LeafOnDisk.
	WholeLeaves float64 `json:"whole_leaves,omitempty"`
	// PerEntryOnDisk and PerEntryInCore are OnDisk and InCore per entry.
	PerEntryOnDisk float64 `json:"per_entry_on_disk"`
	PerEntryInCore float64 `json:"per_entry_in_core"`
}

// Params is what the DDT's size depends on besides its entries.
type Params struct {
	Release *zio.Release
	// Vdev is the pool layout: the rounding of the DDT blocks' PSIZE and
	// their DSIZE follow it as for any block.
	Vdev zio.Vdev
	// Copies is the data's copies property: a legacy entry holds one DVA per
	// copy in the phys variant of that many copies.
	Copies int
	// DataBytes is the space the deduplicated data takes (allocated
	// DSIZE). It bounds what the entries hold, and so how well the leaves
	// compress: block offsets lie within about that much space (a pool
	// filled from empty), and the births and creation times of the entries
	// span the copy (assumed: a txg per 256 MiB, 100 MB/s); on a 2.3 pool
	// it also sets how the dedup log is flushed (flush.go). 0 means 1 TiB.
	DataBytes uint64
	// Unique and Duplicate are the mean sizes of the data blocks each class
	// of entries points to; zero means 128K blocks compressed to half.
	Unique, Duplicate BlockShape
}

// BlockShape is the mean size of the data blocks a class of DDT entries
// points to, in bytes per entry: a histogram's allocated LSIZE and PSIZE
// over its blocks. The sizes land in the entries (key and DVAs), and how
// much they vary from entry to entry is part of what the leaves' LZ4 has
// to store: the model draws each entry's PSIZE in whole allocation units
// around the mean (shapeModel).
type BlockShape struct {
	LSize uint64 `json:"lsize"`
	PSize uint64 `json:"psize"`
}

// Classes returns the allocated side of the refcnt-1 row of h (the keys a
// DDT keeps in its unique class, DDT-…-zap-unique) and of all other rows
// summed (its duplicate class; module/zfs/ddt.c: ddt_class_t).
func Classes(h *ddt.Histogram) (unique, duplicate ddt.Stat) {
	unique = h[0].Allocated
	for _, b := range h[1:] {
		duplicate.Add(b.Allocated)
	}
	return unique, duplicate
}

// ShapeOf is the block shape of the keys counted in s (allocated side of
// one or more histogram rows): LSIZE and PSIZE per block. No blocks gives
// the zero shape (the model's default).
func ShapeOf(s ddt.Stat) BlockShape {
	if s.Blocks == 0 {
		return BlockShape{}
	}
	return BlockShape{LSize: s.LSize / s.Blocks, PSize: s.PSize / s.Blocks}
}

// shapeModel draws the LSIZE and PSIZE of an entry's block: LSIZE the
// class's mean; PSIZE either LSIZE (stored whole) with probability q, or
// 1…k allocation units, uniformly, q and k set so that the mean is the
// class's. (An assumption: the histogram gives means, not the spread.)
type shapeModel struct {
	lsize, unit uint64
	q           float64
	k           uint64
}

func newShapeModel(b BlockShape, unit uint64) shapeModel {
	if b.LSize == 0 {
		b = BlockShape{LSize: 128 << 10, PSize: 64 << 10}
	}
	lsize := max(512, (b.LSize+256)>>9<<9)
	sm := shapeModel{lsize: lsize, unit: unit, q: 1}
	n := lsize / unit // whole units in a block
	if n < 2 {
		return sm
	}
	r := min(1, float64(b.PSize)/float64(lsize))
	c := float64(n) / 2 * float64(unit) / float64(lsize) // mean of 1…n−1 units
	if r >= c {
		sm.k = n - 1
		sm.q = (r - c) / (1 - c)
		return sm
	}
	sm.q = 0
	sm.k = min(n-1, max(1, uint64(math.Round(2*r*float64(lsize)/float64(unit)-1))))
	return sm
}

// draw returns an entry's LSIZE and PSIZE, bytes.
func (sm shapeModel) draw(rng *rand.Rand) (lsize, psize uint64) {
	if sm.q >= 1 || rng.Float64() < sm.q {
		return sm.lsize, sm.lsize
	}
	return sm.lsize, sm.unit * (1 + rng.Uint64N(sm.k))
}

// shapeKey quantizes a shape for the model cache: LSIZE in sectors, the
// PSIZE/LSIZE ratio in 64ths.
func shapeKey(b BlockShape) [2]uint64 {
	if b.LSize == 0 {
		return [2]uint64{}
	}
	return [2]uint64{(b.LSize + 256) >> 9, uint64(math.Round(64 * float64(b.PSize) / float64(b.LSize)))}
}

// Estimate models the DDT of a pool holding unique entries referenced
// once and duplicate entries referenced more than once (the refcnt-1 row
// of the histogram and the others). A class without entries has no object.
func Estimate(unique, duplicate uint64, sp Params) Result {
	m := modelFor(sp)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Result{Format: m.format, Entries: unique + duplicate, RuleOfThumb: (unique + duplicate) * RuleOfThumbBytes, Objects: []Object{}}
	var leaves, entries, whole float64
	var leafDisk float64
	var fe flushEffect
	if sp.Release.DDTLogPasses {
		data := sp.DataBytes
		if data == 0 {
			data = 1 << 40
		}
		fe = cachedFlush(unique, duplicate, data, m.capacity)
	}
	for _, c := range []struct {
		name  string
		n     uint64
		class int
	}{{"duplicate", duplicate, 1}, {"unique", unique, 0}} {
		if c.n == 0 {
			continue
		}
		o, ld := m.object(c.n, c.class, fe.leaves[c.class], fe.header[c.class])
		whole += min(fe.leaves[c.class], o.Leaves)
		o.Name = "DDT-sha256-zap-" + c.name
		s.Objects = append(s.Objects, o)
		s.OnDisk += o.OnDisk
		s.InCore += o.InCore
		leaves += o.Leaves
		leafDisk += ld
		entries += float64(c.n)
	}
	if m.format == FormatFDT {
		s.LogInCore = s.Entries * LogEntryBytes
	}
	s.Basis = Basis{
		BlockSize: uint64(m.bs), ValueBytes: m.valueBytes, EntryChunks: m.entryChunks, EntryBytes: m.entryChunks * zapChunk,
		LeafCapacity: m.capacity, LeafChunks: m.nchunks, Compression: m.meta.p.Compression.String(), Copies: mosCopies,
	}
	if leaves > 0 {
		s.Basis.Fill = entries / leaves / float64(m.capacity)
		s.Basis.LeafOnDisk = leafDisk / leaves
		s.Basis.PerEntryOnDisk = float64(s.OnDisk) / entries
		s.Basis.PerEntryInCore = float64(s.InCore) / entries
		s.Basis.WholeLeaves = whole
	}
	return s
}

// sizeModel is the ZAP geometry and the per-fill leaf sizes of one
// (release, pool, copies) combination.
type sizeModel struct {
	format  string
	shift   uint // ZAP block shift: 12 or 15
	bs      int
	hashN   int // leaf hash table entries: bs/32
	nchunks int // leaf chunks
	copies  int // data copies (DVAs in an entry)
	// The ranges entries' values are drawn from: block offsets (sectors),
	// birth txgs, creation times (seconds); see Params.DataBytes.
	sectors, txgs, seconds uint64
	shapes                 [2]shapeModel // unique, duplicate
	vdev                   zio.Vdev
	align                  uint64 // block offsets are multiples of this many sectors
	valueBytes             int    // typical stored value
	entryChunks            int
	capacity               int // entries per leaf
	meta                   *metaWriter
	// dp[class] holds, for the unique (0) and duplicate (1) class, the
	// allocated size of a leaf by its fill and the expectations over leaf
	// trees; built on first use.
	dp  [2]*leafDP
	rng *rand.Rand
	// logSizes caches the allocated size of a dedup log block by its
	// records (log.go), written through logMeta (128 KiB blocks).
	logSizes map[int]uint64
	logMeta  *metaWriter
	mu       sync.Mutex // guards the model while Estimate uses it
}

// leafSamples is how many fills the compressed leaf size is measured at;
// it is linear in the fill between them (interpolated before rounding).
const leafSamples = 24

var (
	modelsMu sync.Mutex
	models   = map[modelKey]*sizeModel{}
)

type modelKey struct {
	rel    *zio.Release
	vdev   string
	alloc  [3]uint64 // min alloc, gcd alloc, deflate ratio
	copies int
	data   uint64 // DataBytes, rounded to a power of two
	shapes [2][2]uint64
}

// modelFor returns the (cached) model for sp.
func modelFor(sp Params) *sizeModel {
	copies := min(max(sp.Copies, 1), 3)
	data := sp.DataBytes
	if data == 0 {
		data = 1 << 40
	}
	data = 1 << bits.Len64(max(data, 16<<20)-1) // a few models cover every size
	key := modelKey{sp.Release, sp.Vdev.String(), [3]uint64{sp.Vdev.MinAlloc(), zio.GCDAlloc(sp.Vdev), sp.Vdev.DeflateRatio()}, copies, data,
		[2][2]uint64{shapeKey(sp.Unique), shapeKey(sp.Duplicate)}}
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if m, ok := models[key]; ok {
		return m
	}
	unit := sp.Vdev.MinAlloc()
	m := &sizeModel{format: FormatLegacy, shift: 12, copies: copies, vdev: sp.Vdev,
		align:   max(1, (unit&-unit)>>9),
		shapes:  [2]shapeModel{newShapeModel(sp.Unique, unit), newShapeModel(sp.Duplicate, unit)},
		sectors: data >> 9, txgs: max(1, data>>28), seconds: max(2, data/100_000_000)}
	if sp.Release.FastDedup {
		m.format = FormatFDT
	}
	if sp.Release.DDTLeaf32K {
		m.shift = 15
	}
	m.bs = 1 << m.shift
	m.hashN = m.bs >> 5                                  // ZAP_LEAF_HASH_NUMENTRIES
	m.nchunks = (m.bs-2*m.hashN)/zapChunk - 2            // ZAP_LEAF_NUMCHUNKS
	m.meta = newMetaWriter(sp.Release, sp.Vdev, m.bs)    // MOS metadata policy
	m.rng = rand.New(rand.NewPCG(0xdd7, uint64(copies))) // fixed: the model is deterministic
	m.valueBytes = len(m.value(m.rng, 1, 256))
	m.entryChunks = 1 + arrayChunks(8*ddtKeyWords) + arrayChunks(m.valueBytes)
	m.capacity = m.nchunks / m.entryChunks
	models[key] = m
	return m
}

// leafTable returns the leaf figures of a class (0 unique, 1 duplicate):
// the allocated size of a leaf of each fill 0…capacity, from synthetic
// leaves compressed at leafSamples fills. The caller holds m.mu.
func (m *sizeModel) leafTable(class int) *leafDP {
	if m.dp[class] == nil {
		comp := make([]float64, m.capacity+1)
		step := max(1, m.capacity/leafSamples)
		var prevK int
		var prevC float64
		for k := 0; ; k = min(k+step, m.capacity) {
			c, _ := m.meta.compress(m.leaf(m.rng, k, class))
			cf := float64(c)
			comp[k] = cf
			for j := prevK + 1; j < k; j++ {
				comp[j] = prevC + (cf-prevC)*float64(j-prevK)/float64(k-prevK)
			}
			prevK, prevC = k, cf
			if k == m.capacity {
				break
			}
		}
		disk := make([]float64, m.capacity+1)
		for k, c := range comp {
			disk[k] = float64(m.meta.level0Size(uint64(m.bs), uint64(math.Ceil(c))))
		}
		m.dp[class] = newLeafDP(m.capacity, disk)
	}
	return m.dp[class]
}

// arrayChunks is ZAP_LEAF_ARRAY_NCHUNKS: chunks for an array of n bytes.
func arrayChunks(n int) int { return (n + zapArrayBytes - 1) / zapArrayBytes }

// object models one ZAP object of n entries; it also returns the expected
// allocated bytes of its leaves.
//
// whole is the expected number of its leaves, and hdrWhole the chance
// that its header and indirect blocks, stored uncompressed by the flush
// of the dedup log (FDT; flush.go).
func (m *sizeModel) object(n uint64, class int, whole, hdrWhole float64) (Object, float64) {
	leaves, leafDisk := m.leafTable(class).expect(n)
	full := float64(m.meta.level0Size(uint64(m.bs), uint64(m.bs))) // a block stored whole, all copies
	if whole = min(whole, leaves); whole > 0 {
		leafDisk += whole * (full - leafDisk/leaves)
	}
	rng := rand.New(rand.NewPCG(n, 0x2ab))
	o := Object{Entries: n, Leaves: leaves}
	// The pointer table needs 2^depth entries, depth being the deepest
	// leaf's prefix length; past the 2^(shift−4) entries embedded in the
	// header it lives in blocks of its own (zap.c: zap_grow_ptrtbl()).
	depth := maxDepth(n, m.capacity)
	embedded := int(m.shift) - 4
	var ptrBlocks float64
	var ptrDisk uint64
	if depth > embedded {
		ptrBlocks = math.Ldexp(1, depth+3-int(m.shift))
		ptrDisk = m.meta.level0(m.ptrtblBlock(rng, leaves, depth))
	}
	L := max(1, int(math.Round(leaves)))
	hdrDisk := float64(m.meta.level0(m.header(rng, L, n, min(depth, embedded))))
	hdrDisk += hdrWhole * (full - hdrDisk)
	o.Blocks = 1 + leaves + ptrBlocks
	o.InCore = uint64(math.Round(o.Blocks * float64(m.bs)))
	disk := hdrDisk + leafDisk + ptrBlocks*float64(ptrDisk)
	// Indirect blocks: one block pointer per level-0 block, bs/128 per
	// indirect block, levels until the top fits in the dnode's 3.
	per := m.bs / blkptrBytes
	for count := int(math.Round(o.Blocks)); count > dnodeBlkptrs; {
		next := (count + per - 1) / per
		nfull := count / per
		o.Indirect += next
		ind := float64(m.meta.indirect(m.indirectBlock(rng, per)))
		disk += float64(nfull) * (ind + hdrWhole*(full-ind))
		if rest := count - nfull*per; rest > 0 {
			ind := float64(m.meta.indirect(m.indirectBlock(rng, rest)))
			disk += ind + hdrWhole*(full-ind)
		}
		count = next
	}
	// doi_physical_blocks_512 rounds the object's bytes to 512
	// (dmu.c: __dmu_object_info_from_dnode()).
	o.OnDisk = (uint64(math.Round(disk)) + 256) >> 9 << 9
	return o, leafDisk
}

// value returns a stored ZAP value: the version byte and the phys of an
// entry referenced refcnt times whose block takes asec sectors on its vdev
// (the DVA's ASIZE), ZLE-compressed when that fits
// (ddt_zap_compress(): ZLE with the phys size as capacity; on failure the
// phys is stored as is).
func (m *sizeModel) value(rng *rand.Rand, refcnt, asec uint64) []byte {
	le := binary.LittleEndian
	var phys []byte
	var at int // offset of the variant
	if m.format == FormatFDT {
		phys = make([]byte, ddtFlatPhys)
	} else {
		phys = make([]byte, ddtTradPhys)
		at = 64 * m.copies // ddp_trad[copies]: DDT_PHYS_SINGLE … TRIPLE
	}
	for i := 0; i < m.copies; i++ {
		dva := phys[at+16*i:]
		// DVA word 0: ASIZE in sectors (bits 0–23), grid, vdev (32–63);
		// word 1: offset in sectors (past the labels, aligned).
		le.PutUint64(dva, asec)
		le.PutUint64(dva[8:], (8192+rng.Uint64N(m.sectors))/m.align*m.align)
	}
	le.PutUint64(phys[at+48:], refcnt)
	le.PutUint64(phys[at+56:], 4+rng.Uint64N(m.txgs)) // birth txg
	if m.format == FormatFDT {
		le.PutUint64(phys[at+64:], 1_750_000_000+rng.Uint64N(m.seconds)) // class start, seconds
	}
	out := make([]byte, 1+len(phys))
	c, err := zle.Compress(out[1:len(phys)+1], phys)
	if err != nil {
		out[0] = compressOff | ddtByteorder
		copy(out[1:], phys)
		return out
	}
	out[0] = compressZLE | ddtByteorder
	return out[:1+c]
}

// leaf lays out a leaf holding k entries as zap_leaf.c does in a fresh leaf
// (zap_leaf_init(), zap_entry_create(): entry chunk, key array, value
// array, taken in order from the free list; the rest free chunks chained in
// order) with random keys, and returns its bytes.
func (m *sizeModel) leaf(rng *rand.Rand, k int, class int) []byte {
	le, be := binary.LittleEndian, binary.BigEndian
	b := make([]byte, m.bs)
	hash := b[zapLeafHeader : zapLeafHeader+2*m.hashN]
	for i := range hash {
		hash[i] = 0xff
	}
	chunk := func(i int) []byte { return b[zapLeafHeader+2*m.hashN+zapChunk*i:][:zapChunk] }
	prefixLen := 1 + rng.IntN(8)
	hashShift := int(m.shift) - 5
	next := 0 // first free chunk
	used := 0
	for e := 0; e < k; e++ {
		refcnt := uint64(1)
		if class == 1 {
			refcnt = 2 + rng.Uint64N(3)
		}
		lsize, psize := m.shapes[class].draw(rng)
		comp := uint64(compressLZ4)
		if psize == lsize {
			comp = compressOff
		}
		val := m.value(rng, refcnt, m.vdev.ASize(psize)>>9)
		need := 1 + arrayChunks(8*ddtKeyWords) + arrayChunks(len(val))
		if next+need > m.nchunks {
			break
		}
		var key [8 * ddtKeyWords]byte
		w0 := rng.Uint64()
		be.PutUint64(key[0:], w0) // zap_leaf_array_create(): integers stored MSB first
		be.PutUint64(key[8:], rng.Uint64())
		be.PutUint64(key[16:], rng.Uint64())
		be.PutUint64(key[24:], rng.Uint64())
		// ddk_prop: LSIZE and PSIZE in sectors − 1, compression.
		be.PutUint64(key[32:], (lsize>>9-1)|(psize>>9-1)<<16|comp<<32)
		h := w0 &^ (1<<zapHashLowBits - 1)
		ent := next
		next++
		nameAt := next
		next = m.array(chunk, next, key[:])
		valueAt := next
		next = m.array(chunk, next, val)
		c := chunk(ent)
		c[0], c[1] = chunkEntry, 1
		le.PutUint16(c[2:], chainEnd)
		le.PutUint16(c[4:], uint16(nameAt))
		le.PutUint16(c[6:], ddtKeyWords)
		le.PutUint16(c[8:], uint16(valueAt))
		le.PutUint16(c[10:], uint16(len(val)))
		le.PutUint64(c[16:], h)
		// Link into the hash chain (appended: every cd is 0).
		slot := int(h>>(64-hashShift-prefixLen)) & (m.hashN - 1)
		p := hash[2*slot:]
		for le.Uint16(p) != chainEnd {
			p = chunk(int(le.Uint16(p)))[2:]
		}
		le.PutUint16(p, uint16(ent))
		used++
	}
	for i := next; i < m.nchunks; i++ {
		c := chunk(i)
		c[0] = chunkFree
		nx := uint16(i + 1)
		if i == m.nchunks-1 {
			nx = chainEnd
		}
		le.PutUint16(c[22:], nx)
	}
	le.PutUint64(b[0:], zbtLeaf)
	le.PutUint64(b[16:], rng.Uint64N(1<<prefixLen)) // lh_prefix
	le.PutUint32(b[24:], zapLeafMagic)
	le.PutUint16(b[28:], uint16(m.nchunks-next)) // lh_nfree
	le.PutUint16(b[30:], uint16(used))           // lh_nentries
	le.PutUint16(b[32:], uint16(prefixLen))
	free := uint16(next)
	if next == m.nchunks {
		free = chainEnd
	}
	le.PutUint16(b[34:], free) // lh_freelist
	return b
}

// array writes data as a chain of array chunks from chunk i on and returns
// the next free chunk (zap_leaf_array_create()).
func (m *sizeModel) array(chunk func(int) []byte, i int, data []byte) int {
	for len(data) > 0 {
		c := chunk(i)
		c[0] = chunkArray
		n := copy(c[1:1+zapArrayBytes], data)
		data = data[n:]
		nx := uint16(i + 1)
		if len(data) == 0 {
			nx = chainEnd
		}
		binary.LittleEndian.PutUint16(c[22:], nx)
		i++
	}
	return i
}

// header lays out the ZAP header block (zap.c: fzap_upgrade()) of a ZAP of
// n entries in L leaves, whose embedded pointer table maps 2^depth
// prefixes (depth ≤ the embedded table's shift) to the leaves.
func (m *sizeModel) header(rng *rand.Rand, L int, n uint64, depth int) []byte {
	le := binary.LittleEndian
	b := make([]byte, m.bs)
	le.PutUint64(b[0:], zbtHeader)
	le.PutUint64(b[8:], zapMagic)
	shift := int(m.shift) - 4 // ZAP_EMBEDDED_PTRTBL_SHIFT
	le.PutUint64(b[32:], uint64(max(shift, depth)))
	le.PutUint64(b[56:], uint64(L+1)) // zap_freeblk
	le.PutUint64(b[64:], uint64(L))   // zap_num_leafs
	le.PutUint64(b[72:], n)           // zap_num_entries
	le.PutUint64(b[80:], rng.Uint64()|1)
	le.PutUint64(b[96:], zapFlags)
	m.fillPtrtbl(rng, b[m.bs/2:], min(L, 1<<shift), shift)
	return b
}

// ptrtblBlock lays out one block of an external pointer table of 2^depth
// entries mapping to about `leaves` leaves.
func (m *sizeModel) ptrtblBlock(rng *rand.Rand, leaves float64, depth int) []byte {
	b := make([]byte, m.bs)
	ents := m.bs / 8
	// The block covers ents of the 2^depth prefixes: its share of the
	// leaves.
	share := max(1, int(math.Round(leaves*float64(ents)/math.Ldexp(1, depth))))
	m.fillPtrtbl(rng, b, min(share, ents), int(m.shift)-3)
	return b
}

// fillPtrtbl writes a pointer table of 2^shift little-endian entries into b
// mapping to L leaves of a nearly balanced trie (depths ⌊log2 L⌋ and one
// more), leaf block ids in random order.
func (m *sizeModel) fillPtrtbl(rng *rand.Rand, b []byte, L, shift int) {
	if L < 1 {
		L = 1
	}
	lo := 0
	for 1<<(lo+1) <= L {
		lo++
	}
	deep := 2 * (L - 1<<lo) // leaves at depth lo+1
	ids := rng.Perm(L)
	pos := 0
	for i := 0; i < L; i++ {
		d := lo
		if i < deep {
			d = lo + 1
		}
		run := 1
		if shift > d {
			run = 1 << (shift - d)
		}
		for j := 0; j < run && pos < 1<<shift; j++ {
			binary.LittleEndian.PutUint64(b[8*pos:], uint64(ids[i]+1))
			pos++
		}
	}
}

// indirectBlock lays out an indirect block of the ZAPs (m.bs bytes)
// holding k ≤ m.bs/128 block pointers of their blocks.
func (m *sizeModel) indirectBlock(rng *rand.Rand, k int) []byte {
	return m.indirectBlockOf(rng, k, m.bs, m.bs)
}

// indirectBlockOf lays out an indirect block of bs bytes holding k ≤
// bs/128 block pointers of MOS blocks of child bytes (3 DVAs each,
// fletcher4 checksums), the rest zero. (Found by a new user: the dedup
// log's indirect blocks, of 128 KiB, were laid out in the ZAPs' 4 or 32
// KiB with up to 1024 pointers: a panic past 256 log blocks.)
func (m *sizeModel) indirectBlockOf(rng *rand.Rand, k, bs, child int) []byte {
	le := binary.LittleEndian
	b := make([]byte, bs)
	k = min(k, bs/blkptrBytes)
	lsec := uint64(child>>9) - 1
	for i := 0; i < k; i++ {
		bp := b[blkptrBytes*i:]
		psec := 1 + rng.Uint64N(lsec+1)
		for d := 0; d < mosCopies; d++ {
			le.PutUint64(bp[16*d:], psec<<0) // ASIZE, vdev 0
			le.PutUint64(bp[16*d+8:], 8192+rng.Uint64N(m.sectors))
		}
		// blk_prop: LSIZE, PSIZE, lz4, fletcher4 (7), DMU_OT_DDT_ZAP, level 0,
		// little-endian.
		le.PutUint64(bp[48:], lsec|(psec-1)<<16|compressLZ4<<32|7<<40|47<<48|1<<63)
		// blk_pad[2], blk_phys_birth (0: the same as the birth) stay zero.
		le.PutUint64(bp[80:], 4+rng.Uint64N(m.txgs)) // blk_birth
		le.PutUint64(bp[88:], 1)                     // blk_fill
		for w := 0; w < 4; w++ {
			le.PutUint64(bp[96+8*w:], rng.Uint64()) // blk_cksum
		}
	}
	return b
}

// maxDepth estimates the prefix length of the deepest leaf of a ZAP of n
// uniform keys with leaves of capacity c: one more than the deepest level d
// where a node is expected to overflow (2^d × P(Poisson(n/2^d) > c) ≥ ½).
func maxDepth(n uint64, c int) int {
	depth := 0
	for d := 0; d < 62; d++ {
		lambda := float64(n) / math.Ldexp(1, d)
		if lambda < float64(c)/8 {
			break
		}
		if math.Ldexp(poissonTail(lambda, c), d) >= 0.5 {
			depth = d + 1
		}
	}
	return depth
}

// poissonTail is P(X > c) for X ~ Poisson(lambda).
func poissonTail(lambda float64, c int) float64 {
	// Sum P(X ≤ c) in log space.
	sum := 0.0
	for i := 0; i <= c; i++ {
		lg, _ := math.Lgamma(float64(i + 1))
		sum += math.Exp(float64(i)*math.Log(lambda) - lambda - lg)
	}
	return max(0, 1-sum)
}

// leafDP holds the expectation, over uniform hashes, of the number of
// leaves and of Σ f(fill) over the leaves of a ZAP of n entries whose
// leaves hold at most c: both are 1 and f(n) for n ≤ c; otherwise the
// root splits by a fair bit, k keys going left with probability
// C(n,k)/2^n, and each side is a ZAP of its own (a split leaves an empty
// leaf when all keys go one way). Exact up to n = dpMax, filled as far as
// asked; beyond, the tables are scaled: X(n) = 2^j X(n/2^j), which holds to
// O(1/n) (a ZAP of n keys is two of about n/2).
type leafDP struct {
	c        int
	fOf      []float64 // f(fill), fill 0…c
	count, f []float64 // filled so far
}

// dpMax bounds the exact tables (about 6M multiply-adds to fill).
const dpMax = 1 << 13

func newLeafDP(c int, f []float64) *leafDP {
	d := &leafDP{c: c, fOf: f}
	for n := 0; n <= c; n++ {
		d.count = append(d.count, 1)
		d.f = append(d.f, f[n])
	}
	return d
}

// extend fills the tables up to n (≤ dpMax).
func (d *leafDP) extend(n int) {
	for m := len(d.count); m <= n; m++ {
		// The window n/2 ± 5σ (σ = √n/2) holds all but 1e-6 of the
		// weight; it is renormalised.
		w := 2.5 * math.Sqrt(float64(m))
		lo := max(1, int(float64(m)/2-w))
		hi := min(m-1, int(float64(m)/2+w)+1)
		lgm, _ := math.Lgamma(float64(m + 1))
		lgk, _ := math.Lgamma(float64(lo + 1))
		lgr, _ := math.Lgamma(float64(m - lo + 1))
		p := math.Exp(lgm - lgk - lgr - float64(m)*math.Ln2)
		var sc, sf, wsum float64
		for k := lo; k <= hi; k++ {
			wsum += p
			sc += p * (d.count[k] + d.count[m-k])
			sf += p * (d.f[k] + d.f[m-k])
			p *= float64(m-k) / float64(k+1)
		}
		// X = S + edge·(X + X(0)): the terms k = 0 and k = m hold X itself.
		edge := math.Ldexp(2, -m)
		norm := (1 - edge) / wsum
		d.count = append(d.count, (sc*norm+edge*d.count[0])/(1-edge))
		d.f = append(d.f, (sf*norm+edge*d.f[0])/(1-edge))
	}
}

// expect returns the expected number of leaves and Σ f over them for n
// entries.
func (d *leafDP) expect(n uint64) (count, f float64) {
	if n <= uint64(d.c) {
		return 1, d.fOf[n]
	}
	scale := 1.0
	x := float64(n)
	for x > dpMax {
		x /= 2
		scale *= 2
	}
	i := int(x)
	d.extend(min(i+1, dpMax))
	frac := x - float64(i)
	at := func(t []float64) float64 {
		if i >= dpMax {
			return t[dpMax]
		}
		return t[i] + frac*(t[i+1]-t[i])
	}
	return scale * at(d.count), scale * at(d.f)
}

// metaWriter writes MOS metadata blocks of one size: compressed with what
// compression=on means for the release, rounded like every block of the
// pool, in 3 copies.
type metaWriter struct {
	p    *zio.Policy
	comp zio.Compressor
	out  []byte
}

func newMetaWriter(rel *zio.Release, v zio.Vdev, bs int) *metaWriter {
	p := &zio.Policy{Release: rel, RecordSize: uint32(bs), Compression: rel.OnMeans, Copies: mosCopies, Vdev: v}
	comp, err := zio.NewCompressor(p.Compression, 0)
	if err != nil {
		panic(fmt.Sprintf("ddtsize: metadata compressor: %v", err))
	}
	mw := &metaWriter{p: p, comp: comp}
	if _, ok := comp.(zio.Sizer); !ok {
		mw.out = make([]byte, bs)
	}
	return mw
}

// compress returns the compressed size of a block and whether it fits the
// release's capacity (zio.c: zio_write_compress()).
func (mw *metaWriter) compress(data []byte) (uint64, bool) {
	lsize := uint64(len(data))
	d := mw.p.MaxCompressedSize(lsize)
	if d == 0 {
		return lsize, false
	}
	if sz, ok := mw.comp.(zio.Sizer); ok { // lz4, lzjb: the length only
		c, fits := sz.Size(data, int(d))
		return uint64(c), fits && uint64(c) <= d
	}
	c, err := mw.comp.Compress(mw.out[:d], data)
	return uint64(c), err == nil && uint64(c) <= d
}

// MetadataPSize returns the PSIZE in bytes that a release gives a MOS
// metadata block (a DDT ZAP block, for one) on the pool: compressed with
// what compression=on means there, rounded as any block (zio.c:
// zio_write_compress(); dmu.c: dmu_write_policy()).
func MetadataPSize(rel *zio.Release, v zio.Vdev, block []byte) uint64 {
	mw := newMetaWriter(rel, v, len(block))
	c, fits := mw.compress(block)
	return mw.p.Outcome(uint64(len(block)), c, fits).PSize
}

// level0Size returns the allocated bytes (DSIZE, all copies) of a level-0
// block of lsize bytes that compresses to c: 0 when it is embedded in its
// block pointer.
func (mw *metaWriter) level0Size(lsize, c uint64) uint64 {
	d := mw.p.MaxCompressedSize(lsize)
	b := mw.p.Outcome(lsize, c, d > 0 && c <= d)
	if b.Kind != zio.Stored {
		return 0
	}
	return mw.p.DSize(b.PSize)
}

// level0 returns the allocated bytes (DSIZE, all copies) of a level-0 block:
// 0 when it is embedded in its block pointer.
func (mw *metaWriter) level0(data []byte) uint64 {
	c, fits := mw.compress(data)
	b := mw.p.Outcome(uint64(len(data)), c, fits)
	if b.Kind != zio.Stored {
		return 0
	}
	return mw.p.DSize(b.PSize)
}

// indirect returns the allocated bytes of an indirect block: compressed
// and rounded as level 0, but never embedded.
func (mw *metaWriter) indirect(data []byte) uint64 {
	lsize := uint64(len(data))
	psize := lsize
	if c, fits := mw.compress(data); fits {
		if r := mw.p.RoundPSize(c); r < lsize {
			psize = r
		}
	}
	return mw.p.DSize(psize)
}
