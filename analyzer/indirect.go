package analyzer

import (
	"encoding/binary"

	"github.com/ddtsim/ddtsim/ddt"
	"github.com/ddtsim/ddtsim/source"
	"github.com/ddtsim/ddtsim/space"
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
func (s *scan) indirect(fl *file) {
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
func (s *scan) listed(names source.Names) {
	b := space.Dir(s.md, names)
	s.spaceMu.Lock()
	s.dirBlocks.Add(b)
	s.spaceMu.Unlock()
}
