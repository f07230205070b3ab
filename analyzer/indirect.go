package analyzer

import (
	"encoding/binary"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/space"
)

// bpTally counts, for one worker, the block pointers of the chunk it is
// accounting by the indirect block they will sit in (space.L1): which are
// holes, which repeat contents met earlier in the same indirect block. A
// chunk covers part of an indirect block's records (recordsize 16K and
// up) or several whole ones: repeats are seen within the chunk only.
type bpTally struct {
	fl    *file
	group uint64 // indirect block (record / 1024) being counted
	cur   space.L1
	seen  seenSet // contents met in it
}

// seenSet is a set of 64-bit hashes, at most space.BPsPerBlock of them
// (one indirect block's), in open addressing; reset in O(1) by moving to
// the next generation.
type seenSet struct {
	key [2 * space.BPsPerBlock]uint64
	gen [2 * space.BPsPerBlock]uint32
	cur uint32
}

// reset empties s.
func (s *seenSet) reset() {
	s.cur++
	if s.cur == 0 { // wrapped: clear for real
		s.gen = [len(s.gen)]uint32{}
		s.cur = 1
	}
}

// add adds h and reports whether it was there already.
func (s *seenSet) add(h uint64) bool {
	for i := h % uint64(len(s.key)); ; i = (i + 1) % uint64(len(s.key)) {
		if s.gen[i] != s.cur {
			s.key[i], s.gen[i] = h, s.cur
			return false
		}
		if s.key[i] == h {
			return true
		}
	}
}

// start begins a chunk of fl.
func (t *bpTally) start(fl *file) {
	t.fl, t.cur = fl, space.L1{}
	t.seen.reset()
}

// add counts record i, whose key and outcome the lane gave.
func (t *bpTally) add(i uint64, k ddt.Key, o Outcome) {
	if o == Hole || t.fl.nrec <= 1 {
		return
	}
	g := i / space.BPsPerBlock
	if g != t.group {
		t.flush()
		t.group = g
	}
	t.cur.N++
	if t.seen.add(binary.LittleEndian.Uint64(k[:8])) {
		t.cur.Repeat++
	}
	t.fl.sawData(i)
}

// flush adds the counts of the indirect block being counted to the file's.
func (t *bpTally) flush() {
	if t.cur.N == 0 {
		return
	}
	t.fl.addL1(t.group, t.cur)
	t.cur = space.L1{}
	t.seen.reset()
}

// zeroRunBPs counts the block pointers of records a to b of fl, a run of
// the source's holes that the copy writes as zero blocks (--sparse never,
// compression off): one content, counted as the workers count a dense
// file's zeros, new once per chunk of records and repeated after that
// within each indirect block. Found by a new user: a sparse file had no
// indirect blocks where a file of written zeros had them.
//
// A run over more than maxZeroRunL1 indirect blocks is left out (docs/accuracy.md:
// limits): counted block by block it would take memory and time without
// bound (an 8 EiB sparse file is 2^36 of them), as a dense file that size
// would.
func (fl *file) zeroRunBPs(a, b uint64) {
	if fl.nrec <= 1 || a >= b || (b-1)/space.BPsPerBlock-a/space.BPsPerBlock >= maxZeroRunL1 {
		return
	}
	per := max(chunkBytes/uint64(fl.lsize), 1)
	for g := a / space.BPsPerBlock; g*space.BPsPerBlock < b; g++ {
		lo, hi := max(a, g*space.BPsPerBlock), min(b, (g+1)*space.BPsPerBlock)
		chunks := (hi-1)/per - lo/per + 1
		fl.addL1(g, space.L1{N: uint32(hi - lo), Repeat: uint32(hi - lo - chunks)})
	}
	fl.sawData(b - 1)
}

// maxZeroRunL1 bounds the indirect blocks zeroRunBPs counts a run in:
// 65,536 of them, 2^26 records (8 TiB at recordsize 128K, 256 GiB at 4K).
const maxZeroRunL1 = 1 << 16

// sawData notes that record i of fl is not a hole.
func (fl *file) sawData(i uint64) {
	for {
		l := fl.lastData.Load()
		if i+1 <= l || fl.lastData.CompareAndSwap(l, i+1) {
			return
		}
	}
}

// addL1 adds c to the counts of fl's indirect block g.
func (fl *file) addL1(g uint64, c space.L1) {
	fl.l1mu.Lock()
	defer fl.l1mu.Unlock()
	if fl.l1 == nil {
		fl.l1 = map[uint64]space.L1{}
	}
	x := fl.l1[g]
	x.N += c.N
	x.Repeat += c.Repeat
	x.Embedded += c.Embedded
	fl.l1[g] = x
}

// indirect accounts fl's indirect blocks, once its records are: the
// levels above its last non-hole record (or its last record, when the
// copy writes its zeros: ZFS dirties those blocks too).
func (s *run) indirect(fl *file) {
	if s.md == nil {
		return
	}
	fl.l1mu.Lock()
	l1 := fl.l1
	fl.l1 = nil
	fl.l1mu.Unlock()
	blocks := fl.lastData.Load()
	if !fl.copyHoles {
		blocks = fl.nrec
	}
	if len(l1) == 0 {
		return
	}
	b := space.File(s.md, blocks, l1)
	s.spaceMu.Lock()
	s.indirectBlocks.Add(b)
	s.spaceMu.Unlock()
}

// listed accounts the ZAP object of a directory the walk listed.
func (s *run) listed(names source.Names) {
	b := space.Dir(s.md, names)
	s.spaceMu.Lock()
	s.dirBlocks.Add(b)
	s.spaceMu.Unlock()
}
