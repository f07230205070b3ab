package analyzer

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

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
// The indirect blocks wholly inside the run hold the same counts (a
// chunk is a power of two records, as an indirect block is 1024): they
// are kept as one space.Run, so that a run of any length costs the same
// memory and time. Found by a new user: a run over more than 2^16
// indirect blocks (8 TiB of zeros at recordsize 128K) had been left out,
// and its file's USED fell by the 770 MiB of its indirect blocks.
func (fl *file) zeroRunBPs(a, b uint64) {
	if fl.nrec <= 1 || a >= b {
		return
	}
	per := max(chunkBytes/uint64(fl.lsize), 1)
	counts := func(g uint64) space.L1 {
		lo, hi := max(a, g*space.BPsPerBlock), min(b, (g+1)*space.BPsPerBlock)
		chunks := (hi-1)/per - lo/per + 1
		return space.L1{N: uint32(hi - lo), Repeat: uint32(hi - lo - chunks)}
	}
	g0, g1 := a/space.BPsPerBlock, (b-1)/space.BPsPerBlock
	if g1-g0 >= 3 && (per%space.BPsPerBlock == 0 || space.BPsPerBlock%per == 0) {
		fl.addL1(g0, counts(g0))
		fl.addRun(space.Run{First: g0 + 1, End: g1, C: counts(g0 + 1)})
		fl.addL1(g1, counts(g1))
	} else {
		for g := g0; g <= g1; g++ {
			fl.addL1(g, counts(g))
		}
	}
	fl.sawData(b - 1)
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

// addRun adds r, indirect blocks of fl that no other count touches.
func (fl *file) addRun(r space.Run) {
	fl.l1mu.Lock()
	defer fl.l1mu.Unlock()
	fl.runs = append(fl.runs, r)
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
	l1, runs := fl.l1, fl.runs
	fl.l1, fl.runs = nil, nil
	fl.l1mu.Unlock()
	blocks := fl.lastData.Load()
	if !fl.copyHoles {
		blocks = fl.nrec
	}
	if len(l1) == 0 && len(runs) == 0 {
		return
	}
	b := space.File(s.md, blocks, l1, runs)
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

// BPTally is the block-pointer tally of a file that a scan took records
// from but did not finish (a checkpoint's file in progress, or a file the
// interruption cut short): what its indirect blocks need so that a
// resumed scan, adding the rest of the file's records, accounts them as an
// uninterrupted scan does (Resume.Tally). Without it the indirect blocks
// of such a file would be counted from the records the resume reads only.
type BPTally struct {
	// Groups count the block pointers of the records accounted, by
	// indirect block (space.L1), sorted by Group.
	Groups []BPGroup `json:"l1"`
	// Runs are ranges of indirect blocks of equal counts (a long run of
	// zero blocks the copy writes), sorted by First; none holds a Group.
	Runs []BPRun `json:"runs,omitempty"`
	// LastData is one past the last record accounted that is not a hole
	// (0: none).
	LastData uint64 `json:"last_data"`
	// Open are the chunks (of up to 8 MiB of records: the workers' unit
	// of repeat detection) that a checkpoint found part way: what their
	// worker had counted of them and not yet added to Groups.
	Open []OpenChunk `json:"open,omitempty"`
}

// BPGroup is the count of the block pointers of indirect block Group
// (records Group×1024 to Group×1024+1023) a scan accounted: space.L1.
type BPGroup struct {
	Group    uint64 `json:"g"`
	N        uint32 `json:"n"`
	Repeat   uint32 `json:"r,omitempty"`
	Embedded uint32 `json:"e,omitempty"`
}

// BPRun is a range of indirect blocks [First, End) each of whose block
// pointers counts are N, Repeat and Embedded: space.Run.
type BPRun struct {
	First    uint64 `json:"first"`
	End      uint64 `json:"end"`
	N        uint32 `json:"n"`
	Repeat   uint32 `json:"r,omitempty"`
	Embedded uint32 `json:"e,omitempty"`
}

// OpenChunk is a chunk of records a worker had accounted part of when a
// checkpoint was taken: from Next on its records are not done, and a
// resumed scan goes on counting it from the state its worker had.
type OpenChunk struct {
	Next   uint64 `json:"next"`  // the first record not accounted
	Group  uint64 `json:"group"` // the indirect block being counted
	N      uint32 `json:"n"`     // its block pointers counted in the chunk
	Repeat uint32 `json:"repeat"`
	// Seen are the contents met in the chunk in that indirect block:
	// the first 8 bytes of each key, little-endian; N − Repeat of them.
	Seen []uint64 `json:"seen"`
}

// Check reports whether t is a valid tally of a file of records records.
func (t *BPTally) Check(records uint64) error {
	groups := (records + space.BPsPerBlock - 1) / space.BPsPerBlock
	for i, g := range t.Groups {
		if g.Group >= groups || i > 0 && g.Group <= t.Groups[i-1].Group ||
			g.N == 0 || g.N > space.BPsPerBlock || uint64(g.Repeat)+uint64(g.Embedded) > uint64(g.N) {
			return fmt.Errorf("invalid block pointer counts %+v (of %d records)", g, records)
		}
	}
	for i, r := range t.Runs {
		if r.First >= r.End || r.End > groups || i > 0 && r.First < t.Runs[i-1].End ||
			r.N == 0 || r.N > space.BPsPerBlock || uint64(r.Repeat)+uint64(r.Embedded) > uint64(r.N) {
			return fmt.Errorf("invalid block pointer counts %+v (of %d records)", r, records)
		}
		if j, _ := slices.BinarySearchFunc(t.Groups, r.First, func(g BPGroup, x uint64) int { return cmp.Compare(g.Group, x) }); j < len(t.Groups) && t.Groups[j].Group < r.End {
			return fmt.Errorf("block pointer counts of indirect block %d twice (of %d records)", t.Groups[j].Group, records)
		}
	}
	if t.LastData > records {
		return fmt.Errorf("last data record %d past the file's %d records", t.LastData, records)
	}
	for _, o := range t.Open {
		if o.Next >= records || o.Next == 0 || o.Group > (o.Next-1)/space.BPsPerBlock ||
			o.N == 0 || o.N > space.BPsPerBlock || o.Repeat >= o.N || uint64(len(o.Seen)) != uint64(o.N-o.Repeat) {
			return fmt.Errorf("invalid open chunk at record %d (group %d, %d block pointers, %d repeats, %d contents; of %d records)",
				o.Next, o.Group, o.N, o.Repeat, len(o.Seen), records)
		}
	}
	return nil
}

// Pending is the tally of a file a scan did not finish (State.Pending,
// Analysis.Pending).
type Pending struct {
	File  FileInfo
	Tally BPTally
}

// tally returns fl's tally so far, with the open chunks of the workers
// accts (their chunk in progress, when of fl); ok false when fl has
// none. It is called with every accountant's lock held, or once fl's
// chunks are all done.
func (fl *file) tally(accts []*accountant) (t BPTally, ok bool) {
	fl.l1mu.Lock()
	l1 := maps.Clone(fl.l1)
	for _, r := range fl.runs {
		t.Runs = append(t.Runs, BPRun{First: r.First, End: r.End, N: r.C.N, Repeat: r.C.Repeat, Embedded: r.C.Embedded})
	}
	fl.l1mu.Unlock()
	slices.SortFunc(t.Runs, func(a, b BPRun) int { return cmp.Compare(a.First, b.First) })
	t.LastData = fl.lastData.Load()
	for _, a := range accts {
		if a.fl != fl || a.next <= a.first || a.bps == nil || a.bps.fl != fl || a.bps.cur.N == 0 {
			continue
		}
		b := a.bps
		if a.next >= a.end {
			// Every record of the chunk is accounted, its counts not
			// yet added (found by kill -9 after a checkpoint taken
			// there: a resume starts no chunk at its end to go on
			// with them, and lost them).
			if l1 == nil {
				l1 = map[uint64]space.L1{}
			}
			x := l1[b.group]
			x.N += b.cur.N
			x.Repeat += b.cur.Repeat
			l1[b.group] = x
			continue
		}
		o := OpenChunk{Next: a.next, Group: b.group, N: b.cur.N, Repeat: b.cur.Repeat}
		for i, h := range b.seen.key {
			if b.seen.gen[i] == b.seen.cur {
				o.Seen = append(o.Seen, h)
			}
		}
		slices.Sort(o.Seen)
		t.Open = append(t.Open, o)
	}
	slices.SortFunc(t.Open, func(a, b OpenChunk) int { return cmp.Compare(a.Next, b.Next) })
	for g, c := range l1 {
		t.Groups = append(t.Groups, BPGroup{Group: g, N: c.N, Repeat: c.Repeat, Embedded: c.Embedded})
	}
	slices.SortFunc(t.Groups, func(a, b BPGroup) int { return cmp.Compare(a.Group, b.Group) })
	return t, len(t.Groups) > 0 || len(t.Runs) > 0 || len(t.Open) > 0
}

// prime starts fl's tally from t, an earlier scan's (Resume.Tally), and
// returns its open chunks by the record they go on from.
func (fl *file) prime(t *BPTally) map[uint64]*OpenChunk {
	for _, g := range t.Groups {
		fl.addL1(g.Group, space.L1{N: g.N, Repeat: g.Repeat, Embedded: g.Embedded})
	}
	for _, r := range t.Runs {
		fl.addRun(space.Run{First: r.First, End: r.End, C: space.L1{N: r.N, Repeat: r.Repeat, Embedded: r.Embedded}})
	}
	if t.LastData > 0 {
		fl.sawData(t.LastData - 1)
	}
	var open map[uint64]*OpenChunk
	for i := range t.Open {
		if open == nil {
			open = map[uint64]*OpenChunk{}
		}
		open[t.Open[i].Next] = &t.Open[i]
	}
	return open
}

// resume starts the tally of a chunk that goes on from o, the state its
// worker had counted of it before (nil: none).
func (t *bpTally) resume(o *OpenChunk) {
	if o == nil {
		return
	}
	t.group = o.Group
	t.cur = space.L1{N: o.N, Repeat: o.Repeat}
	for _, h := range o.Seen {
		t.seen.add(h)
	}
}
