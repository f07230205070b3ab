package ddt

import "math/bits"

// Key identifies a unique block: the 256-bit BLAKE3 digest of the block's
// logical content (LSIZE bytes, zero-padded). Within one scan the write
// policy is fixed, so equal logical content implies equal LSIZE, PSIZE,
// compression and physical bytes, i.e. an equal ZFS DDT key
// (module/zfs/ddt.c: ddt_key_fill()).
type Key [32]byte

// Entry is the public view of what the table keeps per unique block (see
// table.go for how it is stored).
//
// All references of one key have the same sizes within a scan, so the
// per-reference sizes are stored once and referenced sums are refcnt times
// them.
type Entry struct {
	Refcnt uint64 // references (blocks) seen with this content
	LSize  uint32 // logical size of one reference, bytes
	PSize  uint32 // physical size of one reference, bytes (0 while pending)
	DSize  uint64 // deflated allocated size of one reference over all copies, bytes (computed from PSize)
}

// Summary counts the entries of a table.
type Summary struct {
	Entries         uint64 // unique stored contents (DDT entries)
	Refs            uint64 // stored blocks, all references
	EmbeddedEntries uint64 // unique contents stored as embedded block pointers
	EmbeddedRefs    uint64 // embedded blocks, all references
	EmbeddedLSize   uint64 // their logical size, bytes, all references
}

// Add adds o's counts to s (the summaries of two tables of disjoint keys).
func (s *Summary) Add(o Summary) {
	s.Entries += o.Entries
	s.Refs += o.Refs
	s.EmbeddedEntries += o.EmbeddedEntries
	s.EmbeddedRefs += o.EmbeddedRefs
	s.EmbeddedLSize += o.EmbeddedLSize
}

// Stat is one cell group of the histogram: block count and size sums in bytes
// (include/sys/ddt.h: ddt_stat_t, fields dds_blocks, dds_lsize, dds_psize,
// dds_dsize).
type Stat struct {
	Blocks uint64 `json:"blocks"`
	LSize  uint64 `json:"lsize"`
	PSize  uint64 `json:"psize"`
	DSize  uint64 `json:"dsize"`
}

// Times returns s with every count and size multiplied by n.
func (s Stat) Times(n uint64) Stat {
	return Stat{Blocks: s.Blocks * n, LSize: s.LSize * n, PSize: s.PSize * n, DSize: s.DSize * n}
}

// Add adds o's counts and sizes to s.
func (s *Stat) Add(o Stat) {
	s.Blocks += o.Blocks
	s.LSize += o.LSize
	s.PSize += o.PSize
	s.DSize += o.DSize
}

// Bucket is one histogram row: Allocated counts each unique key once,
// Referenced counts every reference.
type Bucket struct {
	Allocated  Stat `json:"allocated"`
	Referenced Stat `json:"referenced"`
}

// Histogram is the DDT histogram: bucket h holds the keys with
// floor(log2(refcnt)) = h (include/sys/ddt.h: ddt_histogram_t, 64 buckets).
type Histogram [64]Bucket

// Add accounts one key that has refcnt references, each of lsize, psize and
// dsize bytes (the same per reference), as zdb's dump_simulated_ddt() does:
// allocated gets the per-reference sizes, referenced gets refcnt times them.
// refcnt 0 is ignored.
func (h *Histogram) Add(refcnt, lsize, psize, dsize uint64) {
	if refcnt == 0 {
		return
	}
	b := &h[bits.Len64(refcnt)-1]
	b.Allocated.Add(Stat{1, lsize, psize, dsize})
	b.Referenced.Add(Stat{refcnt, refcnt * lsize, refcnt * psize, refcnt * dsize})
}

// Merge adds every bucket of o into h.
func (h *Histogram) Merge(o *Histogram) {
	for i := range h {
		h[i].Allocated.Add(o[i].Allocated)
		h[i].Referenced.Add(o[i].Referenced)
	}
}

// Total is the field-wise sum of all buckets (module/zfs/ddt.c:
// ddt_histogram_total()).
func (h *Histogram) Total() Bucket {
	var t Bucket
	for i := range h {
		t.Allocated.Add(h[i].Allocated)
		t.Referenced.Add(h[i].Referenced)
	}
	return t
}

// Ratios are the four figures of zdb's ratio line.
type Ratios struct {
	Dedup    float64 `json:"dedup"`    // referenced DSIZE / allocated DSIZE
	Compress float64 `json:"compress"` // referenced LSIZE / referenced PSIZE
	Copies   float64 `json:"copies"`   // referenced DSIZE / referenced PSIZE
	Combined float64 `json:"combined"` // dedup * compress / copies
}

// RatiosOf computes the ratio line from a Total row exactly as
// cmd/zdb/zdb.c: dump_dedup_ratio() does, in double precision and in the same
// order. With no allocated blocks (zdb prints no ratio line) it returns ok =
// false.
func RatiosOf(total Bucket) (r Ratios, ok bool) {
	if total.Allocated.Blocks == 0 {
		return Ratios{}, false
	}
	rL := float64(total.Referenced.LSize)
	rP := float64(total.Referenced.PSize)
	rD := float64(total.Referenced.DSize)
	D := float64(total.Allocated.DSize)
	r.Dedup = rD / D
	r.Compress = rL / rP
	r.Copies = rD / rP
	r.Combined = r.Dedup * r.Compress / r.Copies
	return r, true
}
