package ddtsize

// How a fast-dedup table (FDT, 2.3+) reaches its ZAPs, and why some of its
// blocks end up stored uncompressed.
//
// An FDT does not write changed entries to its ZAPs at once: it appends
// them to the active dedup log (module/zfs/ddt.c: ddt_sync_table_log()).
// When the flushing log is empty and the active one is old enough
// (zfs_dedup_log_txg_max = 8 txgs) the logs swap (ddt_log.c:
// ddt_log_swap()), and each txg then moves the flushing log's entries into
// the ZAPs in key order (ddt_sync_flush_log_incremental()): at least
// max(ingest rate, zfs_dedup_log_flush_entries_min = 1000) entries, spread
// over up to zfs_dedup_log_flush_passes_max = 8 sync passes (each pass
// takes what is left of the txg's share divided by the passes left; the
// first flush of a pool doubles its first pass, having no flush rate to go
// by yet). The ingest rate is an EWMA over zfs_dedup_log_flush_flow_rate_txgs
// = 10 txgs of the entries logged (_ewma()).
//
// Entries flushed in pass p dirty ZAP blocks that are written in pass p+1
// (spa.c: spa_sync_iterate_to_convergence() syncs the MOS before calling
// ddt_sync()). A block already written in this txg and written again from
// pass zfs_sync_pass_dont_compress = 8 on is stored uncompressed (zio.c:
// zio_write_compress()). So a leaf touched in two passes of a txg, the last
// being pass 7 or 8, stays a full 32 KiB block (× 3 copies) until a later
// txg rewrites it; the same goes for the ZAP header (its entry count changes
// with every entry) and the indirect blocks. Which leaves that hits depends
// on the ZAP's splits during the flush (zap.c: zap_expand_leaf(): the full
// leaf keeps its block and the prefix ending in 0, a new block takes the one
// ending in 1).
//
// That is 2.3.0–2.3.3 (zio.Release.DDTLogPasses); from 2.3.4 the whole
// flush of a txg runs in its first sync pass (commit 661310ff5c), and no
// DDT block is rewritten late.
//
// ReplayFlush replays that on random keys: TestFlushSimRealLeaves checks it
// against every leaf of a real 2.3.2 pool (block ids, txgs and which are
// stored whole all match). For big tables the effect is a few leaves per
// txg at the end of the flush, a small share; for tables of a few thousand
// entries it is a fifth of the leaves.

import (
	"math/rand/v2"
	"slices"
	"sync"
)

// Flush tunables and constants of 2.3 (module/zfs/ddt.c, ddt_log.c, zio.c).
const (
	flushPasses      = 8       // zfs_dedup_log_flush_passes_max
	flushEntriesMin  = 1000    // zfs_dedup_log_flush_entries_min
	flushFlowTxgs    = 10      // zfs_dedup_log_flush_flow_rate_txgs
	logTxgMax        = 8       // zfs_dedup_log_txg_max
	passDontCompress = 8       // zfs_sync_pass_dont_compress
	txgDataBytes     = 1 << 28 // the model's copy: a txg per 256 MiB of data
	flushSimMaxKeys  = 1 << 15 // bigger tables are replayed scaled down …
	flushSimCapKeys  = 1 << 18 // … to at most this many keys
	flushMinTxgShare = 64      // least entries a replayed txg takes
	flushSimRuns     = 4       // random key sets averaged (fewer for big replays)
	// uncompressedPass is the flush pass from which a rewrite is stored
	// whole: entries flushed in pass p are written in sync pass p+1.
	uncompressedPass = passDontCompress - 1
	flushLeafRootBlk = 1 // a fat ZAP's first leaf is block 1 (block 0 is the header)
)

// FlushKey is one entry of a flush replay: the first 64 bits of its
// checksum as the DDT compares and ZAP-hashes them (ddt_key_compare(),
// zap_hash() with ZAP_FLAG_PRE_HASHED_KEY), its class (0 unique, 1
// duplicate) and the txg of the copy it was written in (1 = the first).
type FlushKey struct {
	Hash  uint64
	Class int
	Txg   int
}

// FlushLeaf is the final state of one ZAP block after a flush replay.
type FlushLeaf struct {
	Blkid   int // block id in the ZAP object (leaves from 1 in allocation order)
	Entries int
	// Txg is the flush txg of the block's last write, counted from 1 = the
	// first txg that flushed; Passes is the set of sync passes (bit p) of
	// that txg that changed it.
	Txg    int
	Passes uint16
	// Uncompressed reports whether that last write stored it whole.
	Uncompressed bool
}

// FlushResult is what a flush replay leaves in one class's ZAP object.
type FlushResult struct {
	Leaves []FlushLeaf
	// Header is the header block (block 0), changed by every flushed entry;
	// the indirect blocks share its fate.
	Header FlushLeaf
}

// flushLeaf is a leaf during the replay.
type flushLeaf struct {
	blkid  int
	prefix uint64
	plen   uint
	keys   []uint64
	touch  touchState
}

type touchState struct {
	txg    int
	passes uint16
	last   int
}

func (s *touchState) touch(txg, pass int) {
	if s.txg != txg {
		*s = touchState{txg: txg}
	}
	s.passes |= 1 << pass
	s.last = pass
}

func (s touchState) uncompressed() bool {
	return s.last >= uncompressedPass && s.passes&(s.passes-1) != 0
}

// flushZap is one class's ZAP during the replay: an extendible hash of
// leaves holding at most capacity entries each.
type flushZap struct {
	capacity int
	depth    uint
	ptrtbl   []*flushLeaf // 2^depth entries
	leaves   []*flushLeaf
	header   touchState
}

func newFlushZap(capacity int) *flushZap {
	root := &flushLeaf{blkid: flushLeafRootBlk}
	return &flushZap{capacity: capacity, ptrtbl: []*flushLeaf{root}, leaves: []*flushLeaf{root}}
}

func (z *flushZap) leafOf(h uint64) *flushLeaf {
	if z.depth == 0 {
		return z.ptrtbl[0]
	}
	return z.ptrtbl[h>>(64-z.depth)]
}

// insert adds key h in (txg, pass), splitting full leaves as
// zap_expand_leaf() does.
func (z *flushZap) insert(h uint64, txg, pass int) {
	z.header.touch(txg, pass)
	for {
		l := z.leafOf(h)
		if len(l.keys) < z.capacity {
			l.keys = append(l.keys, h)
			l.touch.touch(txg, pass)
			return
		}
		if l.plen == z.depth { // zap_grow_ptrtbl()
			next := make([]*flushLeaf, 2*len(z.ptrtbl))
			for i, p := range z.ptrtbl {
				next[2*i], next[2*i+1] = p, p
			}
			z.ptrtbl = next
			z.depth++
		}
		nl := &flushLeaf{blkid: flushLeafRootBlk + len(z.leaves), plen: l.plen + 1, prefix: l.prefix<<1 | 1}
		l.prefix <<= 1
		l.plen++
		kept := l.keys[:0]
		for _, k := range l.keys {
			if k>>(64-nl.plen) == nl.prefix {
				nl.keys = append(nl.keys, k)
			} else {
				kept = append(kept, k)
			}
		}
		l.keys = kept
		span := z.depth - nl.plen
		first := nl.prefix << span
		for i := first; i < first+1<<span; i++ {
			z.ptrtbl[i] = nl
		}
		z.leaves = append(z.leaves, nl)
		l.touch.touch(txg, pass)
		nl.touch.touch(txg, pass)
	}
}

// ReplayFlush replays the dedup log of a pool that was written in the
// txgs the keys name (1, 2, … ; a txg every 256 MiB of data in the model)
// and then left to flush its log completely, into ZAPs whose leaves hold
// capacity entries. It returns, for the unique (0) and duplicate (1)
// class, the final state of every block. Keys must be distinct.
//
// Modelled: ddt_sync_table_log() (ingest and its EWMA),
// ddt_sync_flush_log_incremental() (share per txg, passes, the doubled
// first pass of a pool's first flush), ddt_log_swap() on age (not on
// memory: zfs_dedup_log_mem_max is taken as never reached), and
// zio_write_compress() for blocks rewritten from pass 8. Not modelled: the
// time limits of a flush (a flush is taken to be fast), frees, and later
// changes to entries already flushed.
func ReplayFlush(keys []FlushKey, capacity int) [2]FlushResult {
	return replayWithMin(keys, capacity, flushEntriesMin)
}

// replayWithMin is ReplayFlush with minShare entries as the least a flush
// txg takes.
func replayWithMin(keys []FlushKey, capacity, minShare int) [2]FlushResult {
	zaps := [2]*flushZap{newFlushZap(capacity), newFlushZap(capacity)}
	var byTxg [][]FlushKey
	for _, k := range keys {
		for len(byTxg) < k.Txg {
			byTxg = append(byTxg, nil)
		}
		byTxg[k.Txg-1] = append(byTxg[k.Txg-1], k)
	}
	var (
		active, flushing []FlushKey
		activeFirst      int
		ingest           int32 // ddt_log_ingest_rate
		flushRate        int32 // ddt_log_flush_rate: 0 until the first flush
		flushTxg         int   // flush txgs so far
	)
	ewma := func(val, prev int32) int32 { return max(0, prev+(val-prev)/flushFlowTxgs) }
	for txg := 1; txg <= len(byTxg) || len(active) > 0 || len(flushing) > 0; txg++ {
		// ddt_sync_table_log(): this txg's entries join the active log.
		var logged []FlushKey
		if txg <= len(byTxg) {
			logged = byTxg[txg-1]
		}
		if len(logged) > 0 && len(active) == 0 {
			activeFirst = txg
		}
		active = append(active, logged...)
		ingest = ewma(int32(len(logged)), ingest)
		// ddt_sync_flush_log_incremental()
		if len(flushing) > 0 {
			flushTxg++
			share := max(int(ingest), minShare)
			var count int
			for pass := 1; pass <= flushPasses && len(flushing) > 0; pass++ {
				n := share / (flushPasses + 1 - pass)
				if pass == 1 && flushRate == 0 {
					n = min(share, 2*n)
				}
				n = min(n, len(flushing))
				for _, k := range flushing[:n] {
					zaps[k.Class].insert(k.Hash, flushTxg, pass)
				}
				flushing = flushing[n:]
				share -= n
				count += n
			}
			flushRate = ewma(int32(count), flushRate)
		}
		// End of the txg's flushing: ddt_log_swap() on age.
		if len(flushing) == 0 && len(active) > 0 && txg >= activeFirst+logTxgMax {
			flushing, active = active, nil
			slices.SortFunc(flushing, func(a, b FlushKey) int {
				switch {
				case a.Hash < b.Hash:
					return -1
				case a.Hash > b.Hash:
					return 1
				}
				return 0
			})
		}
	}
	var out [2]FlushResult
	for c, z := range zaps {
		for _, l := range z.leaves {
			out[c].Leaves = append(out[c].Leaves, FlushLeaf{Blkid: l.blkid, Entries: len(l.keys),
				Txg: l.touch.txg, Passes: l.touch.passes, Uncompressed: l.touch.uncompressed()})
		}
		out[c].Header = FlushLeaf{Txg: z.header.txg, Passes: z.header.passes, Uncompressed: z.header.uncompressed()}
	}
	return out
}

// flushEffect is the expected outcome of a flush for a table: per class,
// the leaves and the chance that the header (and indirect blocks) end up
// stored uncompressed.
type flushEffect struct {
	leaves [2]float64
	header [2]float64
}

// expectFlush replays the flush of a table of unique and duplicate entries
// on random keys, the data written over data/256 MiB txgs (at least one),
// and averages the runs. A big table is replayed scaled down: fewer
// entries, and the txgs' shares (and the 1000-entry minimum) scaled alike,
// which keeps the entries per leaf in each round of the log and the number
// of flush txgs, and so the number of blocks hit, the quantity returned.
// Shares are kept at 64 entries or more (below that the 8 passes of a txg
// would round to nothing): a copy of more than 4096 txgs (1 TiB) is
// replayed as 4096 txgs, where the count has long stopped growing (it tends
// to a few per pass boundary of the last round's txgs).
func expectFlush(unique, duplicate, data uint64, capacity int) flushEffect {
	n := unique + duplicate
	var e flushEffect
	if n == 0 {
		return e
	}
	txgs := max(1, (data+txgDataBytes-1)/txgDataBytes)
	ns := n
	if ns > flushSimMaxKeys {
		ns = min(n, max(flushSimMaxKeys, min(flushSimCapKeys, flushMinTxgShare*txgs)))
	}
	txgs = min(txgs, max(1, ns/flushMinTxgShare))
	scale := float64(ns) / float64(n)
	nu := int(float64(unique)*scale + 0.5)
	nd := int(float64(duplicate)*scale + 0.5)
	if unique > 0 {
		nu = max(nu, 1)
	}
	if duplicate > 0 {
		nd = max(nd, 1)
	}
	minShare := flushEntriesMin
	if scale < 1 {
		minShare = max(flushMinTxgShare, int(flushEntriesMin*scale+0.5))
	}
	runs := max(1, flushSimRuns*flushSimMaxKeys/(nu+nd))
	runs = min(runs, flushSimRuns)
	for run := 0; run < runs; run++ {
		rng := rand.New(rand.NewPCG(uint64(nu)<<32|uint64(nd), uint64(run)<<32|txgs))
		keys := make([]FlushKey, 0, nu+nd)
		seen := make(map[uint64]bool, nu+nd)
		for c, cnt := range [2]int{nu, nd} {
			for i := 0; i < cnt; i++ {
				h := rng.Uint64()
				for seen[h] {
					h = rng.Uint64()
				}
				seen[h] = true
				keys = append(keys, FlushKey{Hash: h, Class: c})
			}
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for i := range keys {
			keys[i].Txg = 1 + int(uint64(i)*txgs/uint64(len(keys)))
		}
		res := replayWithMin(keys, capacity, minShare)
		for c := range res {
			for _, l := range res[c].Leaves {
				if l.Uncompressed {
					e.leaves[c]++
				}
			}
			if res[c].Header.Uncompressed {
				e.header[c]++
			}
		}
	}
	for c := range 2 {
		e.leaves[c] /= float64(runs)
		e.header[c] /= float64(runs)
	}
	return e
}

var (
	flushMu    sync.Mutex
	flushCache = map[[4]uint64]flushEffect{}
)

// cachedFlush is expectFlush, remembered: a sweep asks for the same
// tables more than once.
func cachedFlush(unique, duplicate, data uint64, capacity int) flushEffect {
	txgs := max(1, (data+txgDataBytes-1)/txgDataBytes)
	k := [4]uint64{unique, duplicate, txgs, uint64(capacity)}
	flushMu.Lock()
	defer flushMu.Unlock()
	if e, ok := flushCache[k]; ok {
		return e
	}
	e := expectFlush(unique, duplicate, data, capacity)
	flushCache[k] = e
	return e
}
