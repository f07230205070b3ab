package ddt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// Spilling.
//
// When the table's memory (Bytes) passes SpillOptions.Limit, the goroutine
// whose insert allocated past it spills: shard by shard, under that
// shard's lock, it copies the entries whose PSIZE is known, sorts them by
// key, appends them to a new run file as that shard's section, and only
// after the write succeeded drops them from memory (entries still waiting
// for Set stay, so that Set finds them). The other workers go on meanwhile,
// up to a quarter past the limit, then wait for the spill to end: the
// table stays below about 1.25 × Limit (and a floor of some 90 KiB for
// 256 nearly empty shards). A garbage collection afterwards (see
// gcAfterSpill) lets the freed memory be reused instead of doubling the
// heap.
//
// A run file holds one section per shard (the table is partitioned by a
// hash of the key prefix), each sorted by key, 32 bytes per entry (see
// recBytes); the offsets of the sections stay in memory. A key seen in
// several spill periods is in several runs, so the runs may take more
// than 32 bytes per unique block in all.
//
// At the end (Summarize, Range, Len) the runs and the table are merged
// shard by shard: a k-way merge by key that adds the refcnts of equal keys
// and keeps their sizes, which are equal (a key spilled and seen again was
// compressed again, deterministically, to the same PSIZE). The sums of the
// histogram do not depend on the order, so the result is the same as
// without spilling. More than maxFanIn runs are first merged in groups into
// bigger runs (which needs the space of one group again, for a while), so
// that few files are open at once; if that fails, all are merged at once.
//
// Errors. Writing a run (no space, the directory gone or unwritable, an
// I/O error) loses nothing: the shards not yet written keep their entries,
// the part written stays a valid run, SpillOptions.Warn is told, and the
// table stays in memory from then on (it may then grow past the limit; a
// complete result needs that memory). Reading runs back (a run deleted or
// damaged meanwhile) cannot be made good: the merge stops and Err reports
// it, and the result is incomplete.

// recBytes is the size of a record in a run: the 16-byte key prefix
// (big-endian), refcnt (8 bytes), LSIZE and PSIZE (4 bytes each), little
// endian.
const recBytes = 32

// maxFanIn bounds the runs merged at once (and the files open).
const maxFanIn = 64

// SpillOptions configure Table.Spill.
type SpillOptions struct {
	// Limit is the table memory (Bytes) that triggers a spill, bytes.
	Limit int64
	// Dir is an existing directory for the run files, owned by the
	// caller (who creates it, e.g. with os.MkdirTemp, and removes it);
	// Close removes the runs in it.
	Dir string
	// Warn, if set, is told when writing runs fails (a *SpillError); the
	// table then stays in memory. It may be called from any goroutine
	// that inserts.
	Warn func(error)
}

// SpillError is a failure to write a run: nothing scanned was lost.
type SpillError struct {
	Dir  string
	Err  error  // the cause: an errno such as ENOSPC when there is one
	Then string // what the table does instead
}

// NewSpillError is the SpillError of writing to dir failing with err,
// whose cause alone it keeps (a *os.PathError's errno: the error names
// dir already); then says what the writer does instead.
func NewSpillError(dir string, err error, then string) *SpillError {
	return &SpillError{Dir: dir, Err: cause(err), Then: then}
}

func (e *SpillError) Error() string {
	return fmt.Sprintf("writing spill run to %s: %v; %s", e.Dir, e.Err, e.Then)
}

func (e *SpillError) Unwrap() error { return e.Err }

// run is one run file: shard s's records, sorted by key, are bytes
// [off[s], off[s+1]).
type run struct {
	path string
	off  [nShards + 1]int64
	f    *os.File // open for reading, once needed
}

func (r *run) count(s int) int64 { return (r.off[s+1] - r.off[s]) / recBytes }

// runFile is what a run is written to (an *os.File; tests fake one).
type runFile interface {
	io.WriteCloser
	Truncate(size int64) error
}

type spiller struct {
	SpillOptions
	mu     sync.Mutex // held by the goroutine spilling
	failed atomic.Bool

	rmu    sync.Mutex // guards runs, err, spills and opening the files
	runs   []*run
	err    error
	spills int          // runs written by spilling
	next   atomic.Int64 // number of the last run file

	create func(path string) (runFile, error)
}

// Spill makes the table spill to disk beyond opts.Limit bytes (see the
// comment at the top of spill.go). Call it while no Ref, RefN or Set
// runs, once.
func (t *Table) Spill(opts SpillOptions) error {
	if t.spill != nil {
		return fmt.Errorf("ddt: the table spills to %s already", t.spill.Dir)
	}
	if opts.Limit <= 0 {
		return fmt.Errorf("ddt: spill limit %d: must be positive", opts.Limit)
	}
	fi, err := os.Stat(opts.Dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", opts.Dir)
	}
	t.spill = &spiller{SpillOptions: opts, create: func(path string) (runFile, error) {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	}}
	return nil
}

// SpillRuns returns the number of runs written to disk by spilling.
func (t *Table) SpillRuns() int {
	if t.spill == nil {
		return 0
	}
	t.spill.rmu.Lock()
	defer t.spill.rmu.Unlock()
	return t.spill.spills
}

// Err returns the first error reading spilled runs back (Summarize, Range,
// Len or Lookup were then incomplete), or nil.
func (t *Table) Err() error {
	if t.spill == nil {
		return nil
	}
	t.spill.rmu.Lock()
	defer t.spill.rmu.Unlock()
	return t.spill.err
}

// Close removes the run files (not SpillOptions.Dir). The entries in them
// are gone for good; the table keeps what is in memory.
func (t *Table) Close() error {
	sp := t.spill
	if sp == nil {
		return nil
	}
	sp.rmu.Lock()
	defer sp.rmu.Unlock()
	var first error
	for _, r := range sp.runs {
		if r.f != nil {
			r.f.Close()
		}
		if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	sp.runs = nil
	return first
}

// hasRuns reports whether there are runs on disk (false for a nil sp).
func (sp *spiller) hasRuns() bool {
	if sp == nil {
		return false
	}
	sp.rmu.Lock()
	defer sp.rmu.Unlock()
	return len(sp.runs) > 0
}

func (sp *spiller) setErr(err error) {
	sp.rmu.Lock()
	if sp.err == nil {
		sp.err = err
	}
	sp.rmu.Unlock()
}

// cause strips the operation and path that the caller names otherwise.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fail turns spilling off after a write error.
func (sp *spiller) fail(err error) {
	sp.failed.Store(true)
	if sp.Warn != nil {
		sp.Warn(NewSpillError(sp.Dir, err,
			"the table stays in memory from now on (it may grow past the limit); nothing scanned is lost"))
	}
}

// maybe spills if the table is over the limit. While another goroutine
// spills, the others go on inserting, up to a quarter past the limit;
// beyond that they wait for the spill to end.
func (sp *spiller) maybe(t *Table) {
	b := t.bytes.Load()
	if sp.failed.Load() || b <= sp.Limit {
		return
	}
	if !sp.mu.TryLock() {
		if b <= sp.Limit+sp.Limit/4 {
			return
		}
		sp.mu.Lock()
	}
	defer sp.mu.Unlock()
	if sp.failed.Load() || t.bytes.Load() <= sp.Limit {
		return
	}
	sp.spillAll(t)
}

func (sp *spiller) newPath() string {
	return filepath.Join(sp.Dir, fmt.Sprintf("run-%06d", sp.next.Add(1)))
}

// addRun records a run written by spilling.
func (sp *spiller) addRun(r *run) {
	sp.rmu.Lock()
	sp.runs = append(sp.runs, r)
	sp.spills++
	sp.rmu.Unlock()
}

func cmpRec(a, b rec) int {
	switch {
	case a.k0 < b.k0:
		return -1
	case a.k0 > b.k0:
		return 1
	case a.k1 < b.k1:
		return -1
	case a.k1 > b.k1:
		return 1
	}
	return 0
}

func appendRec(b []byte, r *rec) []byte {
	b = binary.BigEndian.AppendUint64(b, r.k0)
	b = binary.BigEndian.AppendUint64(b, r.k1)
	b = binary.LittleEndian.AppendUint64(b, r.ref)
	b = binary.LittleEndian.AppendUint32(b, r.lsize)
	return binary.LittleEndian.AppendUint32(b, r.psize)
}

func decodeRec(b []byte) rec {
	return rec{
		k0:    binary.BigEndian.Uint64(b[0:]),
		k1:    binary.BigEndian.Uint64(b[8:]),
		ref:   binary.LittleEndian.Uint64(b[16:]),
		lsize: binary.LittleEndian.Uint32(b[24:]),
		psize: binary.LittleEndian.Uint32(b[28:]),
	}
}

// spillAll writes every settled entry to a new run and drops it from
// memory, shard by shard.
func (sp *spiller) spillAll(t *Table) {
	path := sp.newPath()
	f, err := sp.create(path)
	if err != nil {
		sp.fail(err)
		return
	}
	r := &run{path: path}
	var buf []rec
	var enc []byte
	var off int64
	before := t.bytes.Load()
	for si := range t.shards {
		r.off[si] = off
		s := &t.shards[si]
		s.mu.Lock()
		if s.n == s.pending {
			s.mu.Unlock()
			continue
		}
		buf = s.settled(buf[:0])
		slices.SortFunc(buf, cmpRec)
		enc = enc[:0]
		for i := range buf {
			enc = appendRec(enc, &buf[i])
		}
		if _, err := f.Write(enc); err != nil {
			s.mu.Unlock()
			// Shards si… keep their entries; the run holds those before.
			for j := si; j <= nShards; j++ {
				r.off[j] = off
			}
			f.Truncate(off)
			f.Close()
			if off > 0 {
				sp.addRun(r)
			} else {
				os.Remove(path)
			}
			sp.fail(err)
			return
		}
		off += int64(len(enc))
		t.dropSettled(s)
		s.mu.Unlock()
	}
	r.off[nShards] = off
	err = f.Close()
	if off > 0 {
		sp.addRun(r)
	} else {
		os.Remove(path)
	}
	if err != nil {
		// The data may not all have reached the file; reading it
		// back checks its length.
		sp.fail(err)
	}
	if before-t.bytes.Load() >= gcAfterSpill {
		runtime.GC()
	}
}

// gcAfterSpill: a spill that frees this much memory is followed by a
// garbage collection, so that new entries reuse it rather than the heap
// growing to twice the limit before the collector runs on its own.
const gcAfterSpill = 16 << 20

// settled appends the entries of s whose PSIZE is known.
func (s *shard) settled(buf []rec) []rec {
	for c := range s.chunks {
		for j := range s.chunks[c] {
			if e := &s.chunks[c][j]; e.psec != psecPending {
				buf = append(buf, s.rec(e))
			}
		}
	}
	return buf
}

// dropSettled empties s but for the entries waiting for Set, and frees its
// memory.
func (t *Table) dropSettled(s *shard) {
	type kept struct {
		e   slot
		ref uint64
		z   sizes
	}
	var keep []kept
	for c := range s.chunks {
		for j := range s.chunks[c] {
			if e := s.chunks[c][j]; e.psec == psecPending {
				k := kept{e: e}
				if e.ref == refBig {
					k.ref = s.big[prefix{e.k0, e.k1}]
				}
				if e.lsec == 0 {
					k.z = s.odd[prefix{e.k0, e.k1}]
				}
				keep = append(keep, k)
			}
		}
	}
	t.account(s, -s.bytes)
	s.index, s.chunks, s.big, s.odd = nil, nil, nil, nil
	s.n, s.pending = 0, 0
	for _, k := range keep {
		t.insert(s, k.e, mix(k.e.k0, k.e.k1))
		p := prefix{k.e.k0, k.e.k1}
		if k.e.ref == refBig {
			if s.big == nil {
				s.big = make(map[prefix]uint64)
			}
			s.big[p] = k.ref
			t.account(s, sideBytes)
		}
		if k.e.lsec == 0 {
			if s.odd == nil {
				s.odd = make(map[prefix]sizes)
			}
			s.odd[p] = k.z
			t.account(s, sideBytes)
		}
		s.pending++
	}
}

// open opens r for reading and checks that it holds what was written.
// Call with rmu held.
func (sp *spiller) open(r *run) error {
	if r.f != nil {
		return nil
	}
	f, err := os.Open(r.path)
	if err != nil {
		return fmt.Errorf("reading spill run: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < r.off[nShards] {
		err = fmt.Errorf("reading spill run %s: %d bytes, %d were written", r.path, fi.Size(), r.off[nShards])
	}
	if err != nil {
		f.Close()
		return err
	}
	r.f = f
	return nil
}

// lookup finds (k0, k1) in the runs of shard si and returns the sum of its
// entries there.
func (sp *spiller) lookup(t *Table, si int, k0, k1 uint64) (rec, bool) {
	sp.rmu.Lock()
	defer sp.rmu.Unlock()
	var acc rec
	found := false
	var b [recBytes]byte
	for _, r := range sp.runs {
		n := r.count(si)
		if n == 0 {
			continue
		}
		if err := sp.open(r); err != nil {
			if sp.err == nil {
				sp.err = err
			}
			continue
		}
		var rerr error
		read := func(i int) rec {
			if _, err := r.f.ReadAt(b[:], r.off[si]+int64(i)*recBytes); err != nil && rerr == nil {
				rerr = err
			}
			return decodeRec(b[:])
		}
		want := rec{k0: k0, k1: k1}
		i := sort.Search(int(n), func(i int) bool { x := read(i); return !x.less(&want) })
		if rerr == nil && i < int(n) {
			if x := read(i); rerr == nil && x.k0 == k0 && x.k1 == k1 {
				if found {
					acc.combine(&x)
				} else {
					acc, found = x, true
				}
			}
		}
		if rerr != nil && sp.err == nil {
			sp.err = fmt.Errorf("reading spill run %s: %w", r.path, rerr)
		}
	}
	return acc, found
}

// source is one sorted input of a merge: a run's section for the current
// shard, or the table's shard in memory.
type source struct {
	cur  rec
	r    *run
	rd   *bufio.Reader
	left int64 // records of the current section not read yet
	mem  []rec // the memory source: sorted, mem[0] is next
	b    [recBytes]byte
}

// next loads the next record into cur; false at the end of the section.
func (s *source) next() (bool, error) {
	if s.r == nil {
		if len(s.mem) == 0 {
			return false, nil
		}
		s.cur, s.mem = s.mem[0], s.mem[1:]
		return true, nil
	}
	if s.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(s.rd, s.b[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("reading spill run %s: %w", s.r.path, err)
	}
	s.left--
	s.cur = decodeRec(s.b[:])
	return true, nil
}

// mergeHeap is a min-heap of sources by their current key.
type mergeHeap []*source

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].cur.less(&h[l].cur) {
			m = r
		}
		if !h[m].cur.less(&h[i].cur) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// mergeRuns merges runs, opened, and the table in memory when t is not
// nil, shard by shard, calling emit with each key's combined entry until
// emit returns false.
func mergeRuns(runs []*run, t *Table, emit func(si int, r *rec) bool) error {
	srcs := make([]*source, 0, len(runs)+1)
	for _, r := range runs {
		srcs = append(srcs, &source{r: r, rd: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, r.off[nShards]), 64<<10)})
	}
	var mem *source
	if t != nil {
		mem = &source{}
		srcs = append(srcs, mem)
	}
	var membuf []rec
	h := make(mergeHeap, 0, len(srcs))
	for si := 0; si < nShards; si++ {
		if mem != nil {
			membuf = t.shards[si].recs(membuf[:0])
			slices.SortFunc(membuf, cmpRec)
			mem.mem = membuf
		}
		h = h[:0]
		for _, s := range srcs {
			if s.r != nil {
				s.left = s.r.count(si)
			}
			ok, err := s.next()
			if err != nil {
				return err
			}
			if ok {
				h = append(h, s)
			}
		}
		for i := len(h)/2 - 1; i >= 0; i-- {
			h.down(i)
		}
		for len(h) > 0 {
			acc := h[0].cur
			for {
				ok, err := h[0].next()
				if err != nil {
					return err
				}
				if !ok {
					h[0] = h[len(h)-1]
					h = h[:len(h)-1]
				}
				if len(h) == 0 {
					break
				}
				h.down(0)
				if h[0].cur.k0 != acc.k0 || h[0].cur.k1 != acc.k1 {
					break
				}
				acc.combine(&h[0].cur)
			}
			if !emit(si, &acc) {
				return nil
			}
		}
	}
	return nil
}

// merge calls f for every key of the runs and the table, merged; see
// Table.each.
func (sp *spiller) merge(t *Table, f func(*rec) bool) {
	sp.rmu.Lock()
	sp.reduce()
	runs := slices.Clone(sp.runs)
	err := sp.openAll(runs)
	sp.rmu.Unlock()
	if err == nil {
		// Without rmu: f may call Lookup.
		err = mergeRuns(runs, t, func(_ int, r *rec) bool { return f(r) })
	}
	if err != nil {
		sp.setErr(err)
	}
}

// openAll opens runs. Call with rmu held.
func (sp *spiller) openAll(runs []*run) error {
	for _, r := range runs {
		if err := sp.open(r); err != nil {
			return err
		}
	}
	return nil
}

// reduce merges runs in groups of maxFanIn into bigger runs until at most
// maxFanIn are left. If writing fails, the runs are left as they are (and
// merged all at once), and no more is written: every later merge (Range
// after Summarize, Len) merges them all at once too. Found by
// TestSpillMergeDiskFull: each merge tried again on the full disk and
// warned again, three warnings for one scan saved (--save). After a
// failure to spill, likewise. Call with rmu held.
func (sp *spiller) reduce() {
	if sp.failed.Load() {
		return
	}
	for len(sp.runs) > maxFanIn {
		group := sp.runs[:maxFanIn]
		if err := sp.openAll(group); err != nil {
			if sp.err == nil {
				sp.err = err
			}
			return
		}
		nr, rerr, werr := sp.writeMerged(group, sp.newPath())
		if rerr != nil {
			if sp.err == nil {
				sp.err = rerr
			}
			return
		}
		if werr != nil {
			sp.failed.Store(true)
			if sp.Warn != nil {
				sp.Warn(NewSpillError(sp.Dir, werr, fmt.Sprintf("merging the %d runs at once instead", len(sp.runs))))
			}
			return
		}
		for _, r := range group {
			r.f.Close()
			os.Remove(r.path)
		}
		sp.runs = append(slices.Clone(sp.runs[maxFanIn:]), nr)
	}
}

// writeMerged merges runs, opened, into a new run at path; it fails
// reading (rerr) or writing (werr).
func (sp *spiller) writeMerged(runs []*run, path string) (nr *run, rerr, werr error) {
	f, err := sp.create(path)
	if err != nil {
		return nil, nil, err
	}
	nr = &run{path: path}
	w := bufio.NewWriterSize(f, 1<<20)
	var off int64
	cur := 0
	var b []byte
	rerr = mergeRuns(runs, nil, func(si int, r *rec) bool {
		for cur < si {
			cur++
			nr.off[cur] = off
		}
		b = appendRec(b[:0], r)
		if _, werr = w.Write(b); werr != nil {
			return false
		}
		off += recBytes
		return true
	})
	for cur < nShards {
		cur++
		nr.off[cur] = off
	}
	if werr == nil {
		werr = w.Flush()
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if rerr != nil || werr != nil {
		os.Remove(path)
		return nil, rerr, werr
	}
	return nr, nil, nil
}
