package ddt

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The in-memory table.
//
// A Go map[Key]Entry of the same entries costs 134 bytes per unique block;
// this table keeps 24 bytes per entry plus 4 bytes of index per slot, the
// index being 7/16 to 7/8 full: 28.6 to 33.1 bytes per entry over a
// doubling, 30.6 on average over table sizes, plus the unfilled part of
// each shard's last chunk (at most 12 KiB a shard). Measured
// (BenchmarkTable1M, BenchmarkTable10M): 33.6 bytes per entry at 1 M
// entries (the index has just doubled: 3906 entries per shard in 8192
// slots), 31.2 at 10 M.
//
//   - Keys are kept as their first 128 bits (prefix). Two different
//     contents are confused only when their BLAKE3 digests agree on 128
//     bits: with n unique blocks the probability that any pair does is
//     about n²/2^129, below 10^-20 for a billion blocks. Range therefore
//     yields keys whose last 16 bytes are zero.
//   - The refcnt is a uint32; the few entries reaching 2^32 − 1 (the zero
//     block of a huge sparse file copied with --sparse never) keep it in a
//     per-shard side map.
//   - LSIZE and PSIZE are uint16 counts of 512-byte sectors: ZFS block
//     sizes are whole sectors (SPA_MINBLOCKSIZE) up to 16 MiB = 32768
//     sectors, and PSIZE is rounded to 512, to spa_min_alloc or to
//     spa_gcd_alloc (zio.Policy.RoundPSize), all multiples of 512, on
//     raidz and dRAID too. Any other size (only a caller outside ddtsim
//     could give one) is kept exactly in a per-shard side map.
//   - DSIZE is not stored: it is a function of PSIZE for the scan's
//     policy (zio.Policy.DSize), given to NewTable and applied when the
//     entries are read.
//
// Entries live in fixed chunks of 1024 (the last one grows by doubling),
// so growing never copies them; an open-addressing index of uint32 slots
// (linear probing, at most 7/8 full, doubled when full) points into them.
// A slot holds the entry number in its low bits and a tag of hash bits in
// the others, so a probe rarely touches an entry that is not the one
// sought. Keys are spread over 256 shards by a hash of the prefix's first
// 64 bits (not by its first byte, which a sampled scan keeps small:
// ddt.InSample), each behind its own mutex.

const (
	shardBits   = 8
	nShards     = 1 << shardBits
	chunkShift  = 10
	chunkSize   = 1 << chunkShift // entries per full storage chunk
	firstChunk  = 8               // entries of a shard's first allocation
	minIndex    = 16              // slots of a shard's first index
	slotBytes   = int64(unsafe.Sizeof(slot{}))
	sideBytes   = 64 // estimated bytes per side-map entry (key, value, map overhead)
	refBig      = math.MaxUint32
	psecPending = math.MaxUint16
	maxSectors  = math.MaxUint16 - 1
	sectorShift = 9
)

// slot is one stored entry, 24 bytes.
type slot struct {
	k0, k1 uint64 // key bytes 0–7 and 8–15, big-endian: numeric order is key order
	ref    uint32 // refcnt; refBig: the refcnt is in shard.big
	lsec   uint16 // LSIZE in 512-byte sectors; 0: both sizes are in shard.odd
	psec   uint16 // PSIZE in sectors; 0: embedded; psecPending: waiting for Set (lsec 0: only these two meanings)
}

type prefix struct{ k0, k1 uint64 }

type sizes struct{ lsize, psize uint32 }

// rec is an entry with its sizes resolved: what runs store and merges
// combine.
type rec struct {
	k0, k1       uint64
	ref          uint64
	lsize, psize uint32
	pending      bool // PSIZE not known yet (Set not called)
}

func (r *rec) less(o *rec) bool {
	return r.k0 < o.k0 || (r.k0 == o.k0 && r.k1 < o.k1)
}

// combine adds o, an entry of the same key, into r.
func (r *rec) combine(o *rec) {
	r.ref += o.ref
	if r.pending && !o.pending {
		r.psize, r.pending = o.psize, false
	}
}

// Table is a concurrent dedup table (see the comment at the top of this
// file for its layout). With Spill it keeps at most about a given number
// of bytes in memory and writes the rest to disk as sorted runs.
type Table struct {
	shards [nShards]shard
	dsize  func(psize uint64) uint64

	bytes atomic.Int64 // bytes allocated by all shards
	peak  atomic.Int64 // largest value bytes had

	spill *spiller // nil unless Spill was called
}

type shard struct {
	mu      sync.Mutex
	index   []uint32 // 0: empty; else tag<<… | entry number + 1
	shift   uint     // 64 − log2(len(index))
	chunks  [][]slot
	n       int // entries
	pending int // entries waiting for Set
	big     map[prefix]uint64
	odd     map[prefix]sizes
	bytes   int64    // allocated, as accounted in Table.bytes
	_       [64]byte // keep the shards' locks on separate cache lines
}

// NewTable returns an empty table. dsize gives the deflated allocated size
// of one reference of a block of psize bytes, summed over its copies
// (zio.Policy.DSize); nil means DSIZE = PSIZE.
func NewTable(dsize func(psize uint64) uint64) *Table {
	if dsize == nil {
		dsize = func(p uint64) uint64 { return p }
	}
	return &Table{dsize: dsize}
}

// hashKey returns the key's 128-bit prefix and a 64-bit mix of it: its low
// 8 bits choose the shard, its top bits the index position, bits from 8 up
// the tag. BLAKE3 digests are uniform already; the mix keeps keys that are
// not (tests, other callers) from piling up. The shard depends on the
// first 64 bits alone, so that the keys sharing them (a content's groups
// in a group plan's table, GroupKey) are in one shard (RangeGrouped).
func hashKey(k *Key) (k0, k1, h uint64) {
	k0 = binary.BigEndian.Uint64(k[0:8])
	k1 = binary.BigEndian.Uint64(k[8:16])
	return k0, k1, mix(k0, k1)&^0xff | mix(k0, 0)&0xff
}

// mix is splitmix64's finalizer over both halves of the prefix.
func mix(k0, k1 uint64) uint64 {
	h := k0 ^ k1*0x9e3779b97f4a7c15
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func (s *shard) at(i int) *slot { return &s.chunks[i>>chunkShift][i&(chunkSize-1)] }

// find looks (k0, k1) up: it returns the entry number, or −1 and the index
// position where it would be inserted.
func (s *shard) find(k0, k1, h uint64) (i int, pos uint) {
	mask := uint(len(s.index) - 1)
	c := 64 - s.shift
	low := uint32(mask)
	tag := uint32(h>>8) << c
	pos = uint(h >> s.shift)
	for {
		v := s.index[pos]
		if v == 0 {
			return -1, pos
		}
		if v&^low == tag {
			i := int(v&low) - 1
			if e := s.at(i); e.k0 == k0 && e.k1 == k1 {
				return i, pos
			}
		}
		pos = (pos + 1) & mask
	}
}

// account adds d allocated bytes to the shard and the table.
func (t *Table) account(s *shard, d int64) {
	s.bytes += d
	b := t.bytes.Add(d)
	for {
		p := t.peak.Load()
		if b <= p || t.peak.CompareAndSwap(p, b) {
			return
		}
	}
}

// setIndex builds an index of n slots (a power of two) over the entries.
func (t *Table) setIndex(s *shard, n int) {
	if n > 1<<32 {
		panic("ddt: more than 3.7e9 entries in one shard")
	}
	old := len(s.index)
	s.index = make([]uint32, n)
	s.shift = uint(64 - bits.TrailingZeros(uint(n)))
	t.account(s, 4*int64(n-old))
	mask := uint(n - 1)
	c := 64 - s.shift
	for i := 0; i < s.n; i++ {
		e := s.at(i)
		h := mix(e.k0, e.k1)
		pos := uint(h >> s.shift)
		for s.index[pos] != 0 {
			pos = (pos + 1) & mask
		}
		s.index[pos] = uint32(h>>8)<<c | uint32(i+1)
	}
}

func keyOf(k0, k1 uint64) (k Key) {
	binary.BigEndian.PutUint64(k[0:8], k0)
	binary.BigEndian.PutUint64(k[8:16], k1)
	return k
}

// insert appends a new entry (its key not in the shard) and returns its
// number. It reports whether memory was allocated.
func (t *Table) insert(s *shard, e slot, h uint64) (int, bool) {
	grew := false
	if s.index == nil {
		t.setIndex(s, minIndex)
		grew = true
	} else if (s.n+1)*8 > len(s.index)*7 {
		t.setIndex(s, 2*len(s.index))
		grew = true
	}
	i := s.n
	c := i >> chunkShift
	if c == len(s.chunks) {
		if c == cap(s.chunks) {
			nc := make([][]slot, c, max(4, 2*c))
			copy(nc, s.chunks)
			t.account(s, int64(cap(nc)-cap(s.chunks))*int64(unsafe.Sizeof([]slot{})))
			s.chunks = nc
		}
		n := firstChunk
		if c > 0 {
			n = chunkSize
		}
		s.chunks = append(s.chunks, make([]slot, 0, n))
		t.account(s, int64(n)*slotBytes)
		grew = true
	}
	ch := s.chunks[c]
	if len(ch) == cap(ch) {
		nc := make([]slot, len(ch), min(2*cap(ch), chunkSize))
		copy(nc, ch)
		t.account(s, int64(cap(nc)-cap(ch))*slotBytes)
		ch = nc
		grew = true
	}
	s.chunks[c] = append(ch, e)
	s.n++
	mask := uint(len(s.index) - 1)
	pos := uint(h >> s.shift)
	for s.index[pos] != 0 {
		pos = (pos + 1) & mask
	}
	s.index[pos] = uint32(h>>8)<<(64-s.shift) | uint32(i+1)
	return i, grew
}

// addRef adds n references to e.
func (t *Table) addRef(s *shard, e *slot, n uint64) {
	if e.ref == refBig {
		s.big[prefix{e.k0, e.k1}] += n
		return
	}
	sum := uint64(e.ref) + n
	if sum < refBig && sum >= n {
		e.ref = uint32(sum)
		return
	}
	if sum < n { // wrapped past 2^64: cannot happen with real data
		sum = math.MaxUint64
	}
	if s.big == nil {
		s.big = make(map[prefix]uint64)
	}
	s.big[prefix{e.k0, e.k1}] = sum
	e.ref = refBig
	t.account(s, sideBytes)
}

// Ref adds one reference to k. If k was not in the table it is inserted
// with LSize lsize and no PSIZE yet, and Ref reports first = true: the
// caller must then compute the block's PSIZE and call Set exactly once.
// Only the first reference of a content is compressed — while the table
// stays in memory: a key whose shard was spilled to disk (see Spill) is
// new again to the table, so first is true once more and the content is
// compressed again. Compression is deterministic, so Set then gives the
// same PSIZE and the merged result is the same; spilling trades that
// repeated work for memory.
func (t *Table) Ref(k Key, lsize uint32) (first bool) {
	return t.RefN(k, lsize, 1)
}

// RefN adds n references to k at once (a run of identical blocks, such as
// the zero records of a hole stored as data); see Ref.
func (t *Table) RefN(k Key, lsize uint32, n uint64) (first bool) {
	k0, k1, h := hashKey(&k)
	s := &t.shards[uint8(h)]
	s.mu.Lock()
	if s.index != nil {
		if i, _ := s.find(k0, k1, h); i >= 0 {
			t.addRef(s, s.at(i), n)
			s.mu.Unlock()
			return false
		}
	}
	e := slot{k0: k0, k1: k1, psec: psecPending}
	if lsize&(1<<sectorShift-1) == 0 && lsize>>sectorShift <= maxSectors && lsize != 0 {
		e.lsec = uint16(lsize >> sectorShift)
	} else {
		if s.odd == nil {
			s.odd = make(map[prefix]sizes)
		}
		s.odd[prefix{k0, k1}] = sizes{lsize: lsize}
		t.account(s, sideBytes)
	}
	i, grew := t.insert(s, e, h)
	t.addRef(s, s.at(i), n)
	s.pending++
	s.mu.Unlock()
	if grew && t.spill != nil {
		t.spill.maybe(t)
	}
	return true
}

// Set records the physical size of k (bytes) after the first Ref of k
// returned true. psize 0 marks an embedded block: it is counted apart and
// left out of the histogram. Set of a key not in the table does nothing.
func (t *Table) Set(k Key, psize uint32) {
	k0, k1, h := hashKey(&k)
	s := &t.shards[uint8(h)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index == nil {
		return
	}
	i, _ := s.find(k0, k1, h)
	if i < 0 {
		return
	}
	e := s.at(i)
	if e.psec == psecPending {
		s.pending--
	}
	p := prefix{k0, k1}
	switch {
	case e.lsec == 0:
		z := s.odd[p]
		z.psize = psize
		s.odd[p] = z
		e.psec = 0
	case psize&(1<<sectorShift-1) == 0 && psize>>sectorShift <= maxSectors:
		e.psec = uint16(psize >> sectorShift)
	default:
		if s.odd == nil {
			s.odd = make(map[prefix]sizes)
		}
		s.odd[p] = sizes{uint32(e.lsec) << sectorShift, psize}
		t.account(s, sideBytes)
		e.lsec, e.psec = 0, 0
	}
}

// rec resolves entry e of s.
func (s *shard) rec(e *slot) rec {
	r := rec{k0: e.k0, k1: e.k1, ref: uint64(e.ref), pending: e.psec == psecPending}
	if e.ref == refBig {
		r.ref = s.big[prefix{e.k0, e.k1}]
	}
	if e.lsec == 0 {
		z := s.odd[prefix{e.k0, e.k1}]
		r.lsize, r.psize = z.lsize, z.psize
	} else {
		r.lsize = uint32(e.lsec) << sectorShift
		if !r.pending {
			r.psize = uint32(e.psec) << sectorShift
		}
	}
	if r.pending {
		r.psize = 0
	}
	return r
}

// entry is the public view of r.
func (t *Table) entry(r *rec) Entry {
	e := Entry{Refcnt: r.ref, LSize: r.lsize, PSize: r.psize}
	if r.psize != 0 {
		e.DSize = t.dsize(uint64(r.psize))
	}
	return e
}

// Settled returns k's PSIZE (0: embedded) when the table holds k in
// memory with its PSIZE set; ok is false when k is not in memory (new, or
// spilled to disk) or its first reference is still being compressed. It
// never reads the runs on disk.
func (t *Table) Settled(k Key) (psize uint32, ok bool) {
	k0, k1, h := hashKey(&k)
	s := &t.shards[uint8(h)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index == nil {
		return 0, false
	}
	i, _ := s.find(k0, k1, h)
	if i < 0 {
		return 0, false
	}
	r := s.rec(s.at(i))
	return r.psize, !r.pending
}

// Lookup returns the entry of k and whether it exists. After spills it
// also reads the runs on disk (a binary search in each): correct, slower.
func (t *Table) Lookup(k Key) (Entry, bool) {
	k0, k1, h := hashKey(&k)
	s := &t.shards[uint8(h)]
	var r rec
	found := false
	s.mu.Lock()
	if s.index != nil {
		if i, _ := s.find(k0, k1, h); i >= 0 {
			r, found = s.rec(s.at(i)), true
		}
	}
	s.mu.Unlock()
	if t.spill != nil {
		if o, ok := t.spill.lookup(t, int(uint8(h)), k0, k1); ok {
			if found {
				r.combine(&o)
			} else {
				r, found = o, true
			}
		}
	}
	if !found {
		return Entry{}, false
	}
	return t.entry(&r), true
}

// Len returns the number of unique keys (DDT entries). After spills it
// merges the runs on disk to count them.
func (t *Table) Len() int {
	if !t.spill.hasRuns() {
		n := 0
		for i := range t.shards {
			s := &t.shards[i]
			s.mu.Lock()
			n += s.n
			s.mu.Unlock()
		}
		return n
	}
	n := 0
	t.each(func(*rec) bool { n++; return true })
	return n
}

// Range calls f for every entry, in no particular order, until f returns
// false. The key passed holds the 128 bits the table keeps; its last 16
// bytes are zero. Entries whose Set is still pending have PSize 0. Range
// must not run concurrently with Ref, RefN or Set; f may call Lookup.
// After spills it merges the runs on disk: a read error ends the range
// early and is reported by Err.
func (t *Table) Range(f func(Key, Entry) bool) {
	t.each(func(r *rec) bool { return f(keyOf(r.k0, r.k1), t.entry(r)) })
}

// RangeGrouped is Range with the entries whose keys share their first 8
// bytes one after another: in a group plan's table (GroupKey), each
// content's entries of all its groups in a row, so that they can be
// gathered by content without a map. It sorts the table's entries in
// memory shard by shard (a 256th of them at a time); after spills the
// runs are merged in that order anyway.
func (t *Table) RangeGrouped(f func(Key, Entry) bool) {
	t.eachIn(true, func(r *rec) bool { return f(keyOf(r.k0, r.k1), t.entry(r)) })
}

// Summarize builds the refcnt histogram of the table and counts its
// entries. Entries whose PSize is 0 are embedded blocks (see Set) and, as in
// zdb's zdb_ddt_add_cb(), are not part of the histogram. Call it after all
// Ref/Set calls have returned. After spills the runs on disk are merged
// with the table in memory, adding the refcnts of equal keys, which gives
// the same result as a table that never spilled; if reading them back
// fails, the result is incomplete and Err says why.
func (t *Table) Summarize() (*Histogram, Summary) {
	h := &Histogram{}
	var s Summary
	t.each(func(r *rec) bool {
		if r.psize == 0 {
			s.EmbeddedEntries++
			s.EmbeddedRefs += r.ref
			s.EmbeddedLSize += r.ref * uint64(r.lsize)
			return true
		}
		s.Entries++
		s.Refs += r.ref
		h.Add(r.ref, uint64(r.lsize), uint64(r.psize), t.dsize(uint64(r.psize)))
		return true
	})
	return h, s
}

// each calls f for every entry (merged with the runs on disk after spills)
// until it returns false.
func (t *Table) each(f func(*rec) bool) { t.eachIn(false, f) }

// eachIn is each, the entries of each shard in key order if sorted (they
// are after spills).
func (t *Table) eachIn(sorted bool, f func(*rec) bool) {
	if t.spill.hasRuns() {
		t.spill.merge(t, f)
		return
	}
	var buf []rec
	for i := range t.shards {
		buf = t.shards[i].recs(buf[:0])
		if sorted {
			slices.SortFunc(buf, cmpRec)
		}
		for j := range buf {
			if !f(&buf[j]) {
				return
			}
		}
	}
}

// recs appends every entry of s to buf, under the shard's lock.
func (s *shard) recs(buf []rec) []rec {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.chunks {
		for j := range s.chunks[c] {
			buf = append(buf, s.rec(&s.chunks[c][j]))
		}
	}
	return buf
}

// Bytes returns the memory the table holds now, bytes: its index, entry
// chunks and side maps (not counting Go's allocator overhead or garbage
// not yet collected).
func (t *Table) Bytes() int64 { return t.bytes.Load() }

// PeakBytes returns the largest value Bytes had.
func (t *Table) PeakBytes() int64 { return t.peak.Load() }
