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
	seen  map[uint64]struct{} // contents met in it
}

// start begins a chunk of fl.
func (t *bpTally) start(fl *file) {
	t.fl, t.cur = fl, space.L1{}
	clear(t.seen)
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
	h := binary.LittleEndian.Uint64(k[:8])
	if _, ok := t.seen[h]; ok {
		t.cur.Repeat++
	} else {
		t.seen[h] = struct{}{}
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
	clear(t.seen)
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
