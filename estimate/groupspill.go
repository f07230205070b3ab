package estimate

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
)

// groupTable adds up the sums of a group plan's groups of more than one
// record (GroupSums by group), in a map and, past a number of groups
// (spill), in sorted runs on disk: what a group sample keeps until the end
// of the scan, whose entries come by content, not by group. each gives
// the groups in the order of their keys, the runs and the map merged, so
// that the moments do not depend on where the groups were kept.
type groupTable struct {
	m     map[uint64]*GroupSums
	dir   string // where runs are written; "": never
	limit int    // the groups kept in memory before a spill
	runs  []string
	err   error // the first failure to write a run: the groups stay in memory
}

// groupRecBytes is a run's record: the group and its six sums, little
// endian.
const groupRecBytes = 8 + 8*nG

// maxGroupRuns bounds the runs a table keeps (and opens at once, merged):
// more are merged into one.
const maxGroupRuns = 32

func newGroupTable() *groupTable { return &groupTable{m: map[uint64]*GroupSums{}} }

// spill makes t write its groups to sorted runs in dir whenever it holds
// more than limit in memory.
func (t *groupTable) spill(dir string, limit int) {
	t.dir, t.limit = dir, max(limit, 1)
}

func (t *groupTable) add(g uint64, x GroupSums) {
	y := t.m[g]
	if y == nil {
		y = &GroupSums{}
		t.m[g] = y
	}
	y.add(x)
	if t.dir != "" && t.err == nil && len(t.m) > t.limit {
		t.writeRun(false)
	}
}

// merge adds o's groups to t and takes o's runs.
func (t *groupTable) merge(o *groupTable) {
	for g, x := range o.m {
		t.add(g, *x)
	}
	t.runs = append(t.runs, o.runs...)
	o.m, o.runs = map[uint64]*GroupSums{}, nil
	if t.err == nil {
		t.err = o.err
	}
	if len(t.runs) > maxGroupRuns && t.err == nil {
		t.writeRun(true)
	}
}

// writeRun writes the groups in memory to a new run, sorted; with all,
// the runs too, merged into it, which then replaces them (when there are
// more than maxGroupRuns). On failure nothing is lost: the groups stay in
// memory (and t spills no more), the runs as they were.
func (t *groupTable) writeRun(all bool) {
	f, err := os.CreateTemp(t.dir, "groups-*.run")
	if err != nil {
		t.err = err
		return
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var b [groupRecBytes]byte
	write := func(g uint64, x GroupSums) error {
		binary.LittleEndian.PutUint64(b[:8], g)
		for i, v := range x.values() {
			binary.LittleEndian.PutUint64(b[8+8*i:], v)
		}
		_, err := w.Write(b[:])
		return err
	}
	if all {
		err = t.each(write)
	} else {
		for _, g := range slices.Sorted(maps.Keys(t.m)) {
			if err = write(g, *t.m[g]); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		t.err = err
		return
	}
	if all {
		t.close()
	}
	t.m = map[uint64]*GroupSums{}
	t.runs = append(t.runs, f.Name())
	if len(t.runs) > maxGroupRuns {
		t.writeRun(true)
	}
}

// close removes t's runs.
func (t *groupTable) close() {
	for _, r := range t.runs {
		os.Remove(r)
	}
	t.runs = nil
}

// each calls f for every group, in the order of their keys, with its sums
// from the map and the runs added up, until f fails; it fails reading a
// run (then its error says which).
func (t *groupTable) each(f func(g uint64, x GroupSums) error) error {
	keys := slices.Sorted(maps.Keys(t.m))
	if len(t.runs) == 0 {
		for _, g := range keys {
			if err := f(g, *t.m[g]); err != nil {
				return err
			}
		}
		return nil
	}
	h := &runHeap{}
	defer func() {
		for _, s := range h.srcs {
			s.close()
		}
	}()
	mem := &runSrc{keys: keys, m: t.m}
	srcs := []*runSrc{mem}
	for _, r := range t.runs {
		file, err := os.Open(r)
		if err != nil {
			return fmt.Errorf("reading back the groups read: %w", err)
		}
		srcs = append(srcs, &runSrc{f: file, r: bufio.NewReaderSize(file, 1<<16)})
	}
	for _, s := range srcs {
		ok, err := s.next()
		if err != nil {
			s.close()
			return err
		}
		if ok {
			h.srcs = append(h.srcs, s)
		} else {
			s.close()
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		g, x := h.srcs[0].g, h.srcs[0].x
		for h.Len() > 0 {
			if err := h.advance(); err != nil {
				return err
			}
			if h.Len() == 0 || h.srcs[0].g != g {
				break
			}
			x.add(h.srcs[0].x)
		}
		if err := f(g, x); err != nil {
			return err
		}
	}
	return nil
}

// runSrc is one sorted source of groups: a run, or the map's keys sorted.
type runSrc struct {
	f    *os.File
	r    *bufio.Reader
	keys []uint64
	m    map[uint64]*GroupSums
	g    uint64
	x    GroupSums
}

// next reads the next group into g and x; false at the end.
func (s *runSrc) next() (bool, error) {
	if s.r == nil {
		if len(s.keys) == 0 {
			return false, nil
		}
		s.g, s.x, s.keys = s.keys[0], *s.m[s.keys[0]], s.keys[1:]
		return true, nil
	}
	var b [groupRecBytes]byte
	if _, err := io.ReadFull(s.r, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("reading back the groups read from %s: %w", s.f.Name(), err)
	}
	s.g = binary.LittleEndian.Uint64(b[:8])
	v := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8+8*i:]) }
	s.x = GroupSums{Records: v(gRecords), Stored: v(gStored), LSize: v(gL), StoredLSize: v(gStoredL), PSize: v(gP), DSize: v(gD)}
	return true, nil
}

func (s *runSrc) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// runHeap orders sources by their current group.
type runHeap struct{ srcs []*runSrc }

func (h *runHeap) Len() int           { return len(h.srcs) }
func (h *runHeap) Less(i, j int) bool { return h.srcs[i].g < h.srcs[j].g }
func (h *runHeap) Swap(i, j int)      { h.srcs[i], h.srcs[j] = h.srcs[j], h.srcs[i] }
func (h *runHeap) Push(x any)         { h.srcs = append(h.srcs, x.(*runSrc)) }
func (h *runHeap) Pop() any {
	s := h.srcs[len(h.srcs)-1]
	h.srcs = h.srcs[:len(h.srcs)-1]
	return s
}

// advance moves the first source on to its next group.
func (h *runHeap) advance() error {
	s := h.srcs[0]
	ok, err := s.next()
	if err != nil {
		return err
	}
	if ok {
		heap.Fix(h, 0)
	} else {
		s.close()
		heap.Pop(h)
	}
	return nil
}
