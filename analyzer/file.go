package analyzer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ddtsim/ddtsim/input/guest"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// chunkBytes is how much of one file one work item covers: large files are
// split so that all workers help with a single big image.
const chunkBytes = 8 << 20

type run struct {
	opts  Options
	table *ddt.Table
	zero  *ddt.ZeroKeys
	// walkAcct is the walk goroutine's accountant (its hole runs), acct
	// the workers' (checkpoint.go).
	walkAcct *accountant
	acct     []*accountant
	errors   atomic.Int64
	zeros    []byte  // recordsize zero bytes, read-only
	walkLane *Lane   // the hole runs' accounting, on the walk's goroutine
	window   *window // with Options.Started: how far the walk may run ahead
	// walkBPs is the walk's tally of the chunks it accounts itself
	// (unreadChunk), under walkAcct's lock; made at the first.
	walkBPs *bpTally

	changedFiles atomic.Int64

	// The metadata policy (space.Metadata), and the indirect blocks and
	// directories accounted so far (under spaceMu).
	md             *zio.Policy
	spaceMu        sync.Mutex
	indirectBlocks space.Blocks
	dirBlocks      space.Blocks
	// pending: the tallies of the files the cancelled scan left
	// unfinished (Analysis.Pending).
	pendMu  sync.Mutex
	pending []Pending

	// files and bytes counted by the walk so far (the files visited
	// that this shard counts), for a checkpoint's counters.
	walkFiles, walkBytes atomic.Uint64
	// walkEmpty: of those, the empty files (no volume is made of them).
	walkEmpty atomic.Uint64
	// walkShare: the bytes of the files visited that this shard reads
	// (Counters.ShareBytes).
	walkShare atomic.Uint64
	// sizeFiles: with a group plan, the files of more than one record
	// visited that this shard counts, per size (Counters.SizeFiles).
	sizeMu    sync.Mutex
	sizeFiles map[uint64]uint64
}

// sizeFilesCopy returns a copy of sizeFiles (nil when empty).
func (s *run) sizeFilesCopy() map[uint64]uint64 {
	s.sizeMu.Lock()
	defer s.sizeMu.Unlock()
	if len(s.sizeFiles) == 0 {
		return nil
	}
	return maps.Clone(s.sizeFiles)
}

// file is one file being scanned (a regular file or a block device); its
// chunks share it.
type file struct {
	src       *source.File
	lsize     uint32       // block size of every record, bytes
	nrec      uint64       // records
	copyHoles bool         // all-zero records arrive as holes (cp --sparse=always)
	refs      atomic.Int64 // chunks not yet done; the last one closes src
	failed    atomic.Bool
	tag       int // what Options.OnFile returned
	// planned: Options.Read leaves records unread; planKey is the
	// plan's FileKey of the file.
	planned bool
	planKey uint64
	info    FileInfo // for Options.Done and Options.Resume
	// incomplete: some chunks were left undone (the scan was cancelled,
	// or a read failed), so the file is not checked for changes.
	incomplete atomic.Bool
	// abandoned: chunks were left undone because the scan was cancelled:
	// the file is not Finished.
	abandoned atomic.Bool
	// started: Options.Started was told of the file.
	started bool
	// left: the file is finished or abandoned, for the window (guarded
	// by its lock).
	left bool
	// limit is how many records the file has now: nrec, less once a
	// read found it shorter (shrank). Records from limit on are not
	// accounted from then on.
	limit  atomic.Uint64
	shrank atomic.Bool
	// reached is one past the last record accounted (by a chunk or a hole
	// run): more than limit when records past the new end were accounted
	// before the shrink was seen.
	reached atomic.Uint64
	// The block pointers of the file's indirect blocks (bpTally): counts
	// per indirect block (made at the first), and one past the last
	// record that is not a hole.
	l1mu     sync.Mutex
	l1       map[uint64]space.L1 // by indirect block: record / 1024
	runs     []space.Run         // ranges of indirect blocks of equal counts (zeroRunBPs)
	lastData atomic.Uint64
}

// shrink notes that fl now has only n records.
func (fl *file) shrink(n uint64) {
	fl.shrank.Store(true)
	for {
		l := fl.limit.Load()
		if n >= l || fl.limit.CompareAndSwap(l, n) {
			return
		}
	}
}

// accounted notes that records up to end (excluded) of fl are accounted.
func (fl *file) accounted(end uint64) {
	for {
		r := fl.reached.Load()
		if end <= r || fl.reached.CompareAndSwap(r, end) {
			return
		}
	}
}

// chunk is one work item: records [first, end) of a file; open, for a
// chunk a resumed scan goes on with part way, is what its worker had
// counted of it (nil: a chunk started afresh).
type chunk struct {
	f          *file
	first, end uint64
	open       *OpenChunk
}

func (s *run) warn(path string, err error) {
	if ce := (*source.CountedElsewhereError)(nil); !errors.As(err, &ce) {
		s.errors.Add(1)
	}
	if s.opts.Warn != nil {
		s.opts.Warn(path, err)
	}
}

// changed reports a file that changed while it was read: a warning, not
// an error; the result is marked.
func (s *run) changed(path string, err error) {
	s.changedFiles.Add(1)
	if s.opts.Warn != nil {
		s.opts.Warn(path, err)
	}
}

// walker is the Source Scan reads: the paths, walked with the options'
// rules.
func (o *Options) walker(paths []string) *source.Walker {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	w := &source.Walker{Paths: paths, Follow: o.Follow, CountLinks: o.CountLinks, OneFileSystem: o.OneFileSystem,
		SkipDirs: o.SkipDirs, KeepCache: o.KeepCache, Openers: jobs, Faults: o.Faults}
	if o.Shard.Sharded() && o.Policy != nil {
		w.Shard, w.ChunkBytes = o.Shard, o.Faults.ShardChunkBytes(o.Policy.RecordSize)
	}
	if o.Guest {
		w.Guest, w.GuestParts = guest.Open, guest.Parts
	}
	if o.Read.Active() && o.Policy != nil {
		// With --read a file none of whose records the plan reads is not
		// opened (a file that looks sparse still is: its holes are
		// mapped), and the others are read at scattered offsets.
		plan, zvol, rs := o.Read, o.Zvol, o.Policy.RecordSize
		w.RandomReads = true
		w.Opens = func(path string, size uint64) bool {
			_, n := zio.FileRecords(size, rs)
			if zvol {
				_, n = zio.ZvolRecords(size, rs)
			}
			key := plan.FileKey(path, size, n)
			for i := range n {
				if plan.Reads(key, i) {
					return true
				}
			}
			return false
		}
	}
	return w
}

// visit cuts one file of the source into records and sends them, in chunks,
// to the workers; the runs of records lying wholly in holes of the source
// file are accounted here, without reading. It runs on the walk's
// goroutine.
func (s *run) visit(ctx context.Context, sf *source.File, out chan<- chunk) {
	counted := !sf.Uncounted // this shard counts the file (not sharded: always)
	tag := 0
	if s.opts.OnFile != nil && counted {
		tag = s.opts.OnFile(FileEvent{Path: sf.Path, Arg: sf.Arg, Size: sf.Size})
	}
	if counted {
		s.walkFiles.Add(1)
		s.walkBytes.Add(sf.Size)
	}
	if sf.Size == 0 {
		if counted {
			s.walkEmpty.Add(1)
		}
		if p := s.opts.Progress; p != nil && counted {
			p.Files.Add(1)
		}
		sf.Close()
		return
	}
	lsize, nrec := s.records(sf.Size)
	fl := &file{src: sf, lsize: lsize, nrec: nrec, tag: tag}
	if s.opts.Read.Active() {
		fl.planned, fl.planKey = true, s.opts.Read.FileKey(sf.Path, sf.Size, nrec)
		if s.opts.Read.Groups && nrec > 1 && counted {
			s.sizeMu.Lock()
			if s.sizeFiles == nil {
				s.sizeFiles = map[uint64]uint64{}
			}
			s.sizeFiles[sf.Size]++
			s.sizeMu.Unlock()
		}
	}
	others := fl.othersShare(sf.Ino, nrec)
	share := sf.Size
	for _, o := range others {
		share -= fl.spanBytes(o.First, o.End)
	}
	s.walkShare.Add(share)
	if p := s.opts.Progress; p != nil {
		if counted {
			p.Files.Add(1)
		}
		p.BytesPending.Add(int64(share))
	}
	fl.limit.Store(nrec)
	fl.info = FileInfo{Path: sf.Path, Arg: sf.Arg, Dev: sf.Dev, Ino: sf.Ino, Size: sf.Size, Mtime: sf.Mtime, Records: nrec}
	switch s.opts.Sparse {
	case model.SparseAlways:
		fl.copyHoles = true
	case model.SparseAuto:
		fl.copyHoles = sf.LooksSparse
	}
	done, ok := s.resumed(fl, others)
	if !ok {
		sf.Close()
		return
	}
	var open map[uint64]*OpenChunk
	if r := s.opts.Resume; r != nil && r.Tally != nil && len(done) > 0 {
		if t := r.Tally(fl.info); t != nil {
			open = fl.prime(t)
		}
	}
	// The chunks of other shards are left out; the records an earlier
	// scan did are left out of the chunks an uninterrupted scan cuts.
	var segs []segment
	if one := [1]segment{{0, fl.nrec, true}}; sf.Data == nil && len(others) == 0 {
		segs = one[:] // all data (as segments finds it), without allocating
	} else {
		segs = fl.segments(others)
	}
	per := uint64(chunkBytes / uint64(fl.lsize))
	if per == 0 {
		per = 1
	}
	var nchunks int64
	fl.cut(segs, done, per, open, func(sg segment, _ *OpenChunk) bool {
		if sg.data {
			nchunks++
		}
		return true
	})
	// One reference more than the chunks: the walk's own, released once
	// it has accounted the file's hole runs too, so that the file is
	// finished (checked, closed, Finished) after all of its records.
	fl.refs.Store(nchunks + 1)
	if s.opts.Started != nil {
		if !s.window.enter(ctx, fl) {
			sf.Close()
			return
		}
		fl.started = true
		s.opts.Started(fl.info, done)
	}
	sent := int64(0)
	if !fl.cut(segs, done, per, open, func(sg segment, o *OpenChunk) bool {
		if !sg.data {
			s.walkAcct.mu.Lock()
			s.holeRun(fl, sg.first, sg.end)
			s.walkAcct.mu.Unlock()
			return true
		}
		if ctx.Err() == nil && s.unreadChunk(fl, sg.first, sg.end, o) {
			sent++
			return true
		}
		if fl.planned {
			s.prefetch(fl, sg.first, sg.end)
		}
		t := s.opts.Stages.now()
		select {
		case out <- chunk{f: fl, first: sg.first, end: sg.end, open: o}:
			s.opts.Stages.since(StageWalkBlocked, t)
			sent++
			return true
		case <-ctx.Done():
			// Release the chunks that will never be sent, and the
			// walk's own reference.
			fl.incomplete.Store(true)
			fl.abandoned.Store(true)
			s.walkAcct.mu.Lock()
			for ; sent <= nchunks; sent++ {
				s.release(fl)
			}
			s.walkAcct.mu.Unlock()
			return false
		}
	}) {
		return
	}
	// Nothing left to read (all holes, or all done before a resume), or
	// the last chunk finishes it: the file may still have changed since
	// it was opened.
	s.walkAcct.mu.Lock()
	s.release(fl)
	s.walkAcct.mu.Unlock()
}

// prefetch asks the source to start reading the records of [first, end)
// of fl that the plan reads (source.File.Prefetch), as their chunk is
// queued: the workers then find them read, or on their way, and the disk
// is asked for those of every chunk queued at once, not one record a
// worker at a time. Measured on scripts/bench-read.sh's 20 GiB estate at
// --read 1%: see docs/read-estimates.md.
func (s *run) prefetch(fl *file, first, end uint64) {
	sf := fl.src
	lsize := uint64(fl.lsize)
	for i := first; i < end; i++ {
		if !s.opts.Read.Reads(fl.planKey, i) {
			continue
		}
		off := i * lsize
		if off >= sf.Size {
			return
		}
		if n := min(lsize, sf.Size-off); sf.HasData(off, off+n) {
			sf.Prefetch(off, n)
		}
	}
}

// othersShare lists the runs of records that other shards take, in a
// sharded scan where fl is split into chunks (source.File.Chunk: a whole
// number of records), sorted and merged; none when fl is not split. They
// are of fl, or, for a resumed scan, of the file fl's path had when saved
// (inode ino, nrec records).
func (fl *file) othersShare(ino, nrec uint64) []Span {
	sf := fl.src
	if sf.Chunk == 0 {
		return nil
	}
	per := max(sf.Chunk/uint64(fl.lsize), 1)
	var out []Span
	for c := uint64(0); c*per < nrec; c++ {
		if sf.Shard.Owns(sf.FS, ino, c) {
			continue
		}
		first, end := c*per, min((c+1)*per, nrec)
		if n := len(out); n > 0 && out[n-1].End == first {
			out[n-1].End = end
		} else {
			out = append(out, Span{first, end})
		}
	}
	return out
}

// unionSpans merges two sorted, disjoint lists of runs into one.
func unionSpans(a, b []Span) []Span {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	all := append(append(make([]Span, 0, len(a)+len(b)), a...), b...)
	slices.SortFunc(all, func(x, y Span) int { return cmp.Compare(x.First, y.First) })
	out := all[:1]
	for _, r := range all[1:] {
		if last := &out[len(out)-1]; r.First <= last.End {
			last.End = max(last.End, r.End)
		} else {
			out = append(out, r)
		}
	}
	return out
}

// cut calls f with fl's work in file order, until f returns false (cut
// then returns false): each run of records of segs lying in a hole of the
// source file, and the chunks of data, cut every per records from the
// start of each run of data as a scan of the whole file cuts them, less
// the records in done (sorted, disjoint), which an earlier scan did. The
// repeats among block pointers are counted chunk by chunk (bpTally), so a
// resumed scan keeps the chunks of an uninterrupted one: a chunk it goes
// on with part way gets the state its worker had counted, from open (by
// the record it goes on from; nil when not there).
func (fl *file) cut(segs []segment, done []Span, per uint64, open map[uint64]*OpenChunk, f func(sg segment, o *OpenChunk) bool) bool {
	for _, sg := range segs {
		step := per
		if !sg.data {
			step = sg.end - sg.first
		}
		for first := sg.first; first < sg.end; first += min(step, sg.end-first) {
			end := first + min(step, sg.end-first)
			whole := []Span{{first, end}}
			for _, p := range subtractSpans(whole, done) {
				var o *OpenChunk
				if sg.data && p.First != first {
					o = open[p.First]
				}
				if !f(segment{p.First, p.End, sg.data}, o) {
					return false
				}
			}
		}
	}
	return true
}

// recordRun is a range of records [first, end) of a file.
type recordRun struct{ first, end uint64 }

// dataRuns lists the runs of records that touch data; the records between
// them lie wholly in holes of the source file and need no reading.
func (fl *file) dataRuns() []recordRun {
	if fl.src.Data == nil {
		return []recordRun{{0, fl.nrec}}
	}
	l := uint64(fl.lsize)
	var runs []recordRun
	for _, e := range fl.src.Data {
		r := recordRun{e.Off / l, min((e.End+l-1)/l, fl.nrec)}
		if n := len(runs); n > 0 && r.first <= runs[n-1].end {
			runs[n-1].end = max(runs[n-1].end, r.end)
			continue
		}
		runs = append(runs, r)
	}
	return runs
}

// holeRun accounts records [a, b) of fl, which lie wholly in a hole of the
// source file, in one step: they are holes, or all-zero blocks when the
// copy writes zeros and ZFS stores them (compression=off). A file of
// exabytes of holes costs no more than its data.
func (s *run) holeRun(fl *file, a, b uint64) {
	b = min(b, fl.limit.Load()) // none past the end of a file that shrank
	if a >= b {
		return
	}
	n := b - a
	c := &s.walkAcct.c
	c.Records += n
	c.SourceHoles += n
	bytes := fl.spanBytes(a, b)
	c.ScannedBytes += bytes
	if p := s.opts.Progress; p != nil {
		p.BytesDone.Add(int64(bytes))
	}
	if fl.planned && s.storesZeros(fl) {
		// With --read, zeros that ZFS stores are records to sample: the
		// table gets those the plan reads (no byte is read for them).
		// The plan is asked record by record, a few nanoseconds each.
		read := uint64(0)
		for i := a; i < b; i++ {
			if s.opts.Read.Reads(fl.planKey, i) {
				read++
			}
		}
		l := uint64(fl.lsize)
		c.Unread += n - read
		c.Population += n
		if fl.nrec == 1 {
			s.oneRecord(c, l, n)
		}
		c.DataLSize += n * l
		c.DataMaxDSize += n * s.opts.Policy.DSize(l)
		c.MaxLSize = max(c.MaxLSize, l)
		c.ReadLSize += read * l
		c.ReadLSizeSq += read * (l >> 9) * (l >> 9)
		if read == 0 {
			fl.zeroRunBPs(a, b)
			fl.accounted(b)
			s.done(fl, a, b)
			return
		}
		n = read
	} else if fl.planned && s.opts.Read.Groups && fl.nrec > 1 {
		// Records of no group's population (Counters.SizeHoles).
		c.addSizeHoles(fl.src.Size, n)
	}
	var k ddt.Key
	var o Outcome
	if fl.planned && s.opts.Read.Groups && s.storesZeros(fl) {
		// A group plan, zeros that ZFS stores (records of the sample):
		// each record read is of a group of its own index, keyed with
		// it in the table. (Zeros left holes are no records of the
		// sample: counted in their groups, they made a sparse file's
		// ranges miss the truth, found by a new user.)
		for i := a; i < b; i++ {
			if s.opts.Read.Reads(fl.planKey, i) {
				k, o = s.walkLane.ZeroRunInGroup(fl.lsize, 1, fl.copyHoles, s.opts.Read.TableGroup(fl.planKey, i, fl.nrec))
			}
		}
	} else {
		k, o = s.walkLane.ZeroRun(fl.lsize, n, fl.copyHoles)
	}
	hole := o == Hole
	if hole {
		c.Holes += n
		c.HoleBytes += bytes
	} else {
		c.ZeroBlocks += n
	}
	if o == Unsampled {
		c.Unsampled += n
	}
	if !hole {
		fl.zeroRunBPs(a, b)
	}
	if s.opts.OnBlock != nil && s.opts.BlockRuns {
		// With --read (n < b−a) no breakdown runs (Options.Validate).
		s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: a, LSize: fl.lsize, Hole: hole, Key: k, Zero: true, Tag: fl.tag, Count: n, Bytes: bytes})
	} else if s.opts.OnBlock != nil {
		for i := a; i < b; i++ {
			s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: i, LSize: fl.lsize, Hole: hole, Key: k, Zero: true, Tag: fl.tag, Count: 1, Bytes: fl.spanBytes(i, i+1)})
		}
	}
	fl.accounted(b)
	s.done(fl, a, b)
}

// release marks one chunk of fl done. After the last it checks whether the
// file changed while it was read (source.File.Changed), or says that it
// shrank, and closes it.
func (s *run) release(fl *file) {
	if fl.refs.Add(-1) != 0 {
		return
	}
	s.finish(fl)
}

// finish checks, once fl's records are all accounted, whether it changed
// while it was read (or says that it shrank), and closes it.
func (s *run) finish(fl *file) {
	switch {
	case fl.failed.Load():
	case fl.shrank.Load():
		if fl.reached.Load() > fl.limit.Load() {
			s.changed(fl.src.Path, errShrankLate)
		} else {
			s.changed(fl.src.Path, errShrank)
		}
	case !fl.incomplete.Load():
		if err := fl.src.Changed(); err != nil {
			s.changed(fl.src.Path, err)
		}
	}
	fl.src.Close()
	if !fl.abandoned.Load() {
		s.indirect(fl)
	} else if fl.started {
		// Its records done so far are in the result: a resume goes on
		// from their tally (Analysis.Pending).
		if t, ok := fl.tally(nil); ok {
			s.pendMu.Lock()
			s.pending = append(s.pending, Pending{File: fl.info, Tally: t})
			s.pendMu.Unlock()
		}
	}
	if fl.started && s.opts.Finished != nil && !fl.abandoned.Load() {
		s.opts.Finished(fl.info)
	}
	if fl.started {
		s.window.leave(fl)
	}
}

// errShrank says that a file shrank while it was read: the result holds
// its records up to its new end (the last one with the bytes it still
// had), none past it. errShrankLate: records past the new end had been
// read before it shrank, and stay counted.
var (
	errShrank     = fmt.Errorf("shrank while it was read: the records past its new end are left out, its figures are approximate (%w)", source.ErrChanged)
	errShrankLate = fmt.Errorf("shrank while it was read: records past its new end read before it shrank are counted, the others left out; its figures are approximate (%w)", source.ErrChanged)
)
