package analyzer

import (
	"sync"
	"time"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Checkpoints.
//
// Each worker, and the walk, accounts records under its own accountant's
// lock (a record is read outside it). Every Options.CheckpointEvery the
// scan takes every accountant's lock: each goroutine is then between two
// records, and the table, the counters, what Done and Finished reported and
// the records of the chunks in progress (State.InFlight) are the same
// records. A worker waiting for a slow read does not hold its lock: a
// checkpoint waits at most for the accounting of one record per worker (its
// compression, or a spill of the table).

// accountant is the lock under which one goroutine (a worker, or the walk
// for its hole runs) accounts records, with what it accounted.
type accountant struct {
	mu sync.Mutex
	c  Counters // the goroutine's record counters
	// The chunk in progress: records [first, next) of fl are accounted,
	// not yet reported to Done; nil when none.
	fl          *file
	first, next uint64
	end         uint64   // the end of the chunk
	bps         *bpTally // the worker's tally of the chunk (nil: the walk's)
}

// Accounted is a run of records [First, End) of a file, accounted in the
// table and the counters.
type Accounted struct {
	File       FileInfo
	First, End uint64
}

// State is a scan's state at a checkpoint (Options.Checkpoint), valid
// only while Checkpoint runs.
type State struct {
	// Table is the scan's table: it may be read (Len, Range), not
	// changed, and not kept after Checkpoint returns.
	Table *ddt.Table
	// Counters are the scan's so far, as its Result would give them: the
	// counts of records (with Resume's added), Errors and Changed, and of
	// the walk's, Files and LogicalBytes of the files visited so far (the
	// other walk counters are 0: the walk gives them at its end). The
	// table's own figures (UniqueBlocks, Stored, ...) are not set.
	Counters Counters
	// InFlight are the records of the chunks in progress that are in
	// Table and Counters but not yet reported to Done: a checkpoint's
	// progress is what Done reported and these.
	InFlight []Accounted
	// Pending are the block-pointer tallies of the files started and not
	// finished that have records in Table (a resume goes on from them:
	// Resume.Tally).
	Pending []Pending
	// Waited is how long the workers took to stop.
	Waited time.Duration
}

// checkpoints starts the checkpoints of Options.CheckpointEvery; the
// function it returns stops them, waiting for one in progress.
func (s *run) checkpoints() (stop func()) {
	if s.opts.CheckpointEvery <= 0 || s.opts.Checkpoint == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.opts.CheckpointEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.checkpoint()
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// checkpoint stops the workers and the walk's accounting, and hands the
// state to Options.Checkpoint.
func (s *run) checkpoint() {
	asked := time.Now()
	all := append([]*accountant{s.walkAcct}, s.acct...)
	for _, a := range all {
		a.mu.Lock()
	}
	defer func() {
		for _, a := range all {
			a.mu.Unlock()
		}
	}()
	st := State{Table: s.table, Waited: time.Since(asked)}
	c := &st.Counters
	for _, a := range all {
		c.add(&a.c)
		if a.fl != nil && a.next > a.first {
			st.InFlight = append(st.InFlight, Accounted{File: a.fl.info, First: a.first, End: a.next})
		}
	}
	st.Pending = s.pendingFiles()
	c.Files, c.LogicalBytes, c.EmptyFiles = s.walkFiles.Load(), s.walkBytes.Load(), s.walkEmpty.Load()
	c.ShareBytes = s.walkShare.Load()
	s.spaceMu.Lock()
	c.Indirect.Add(s.indirectBlocks)
	s.spaceMu.Unlock()
	c.SizeFiles = s.sizeFilesCopy()
	c.Errors = uint64(s.errors.Load())
	c.Changed = uint64(s.changedFiles.Load())
	if r := s.opts.Resume; r != nil {
		c.add(&r.Counters)
		c.Changed += r.Counters.Changed
	}
	s.opts.Checkpoint(st)
}

// pendingFiles returns the tallies of the files started and not finished,
// with every accountant's lock held.
func (s *run) pendingFiles() []Pending {
	w := s.window
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Pending
	for i := range w.n {
		fl := w.ring[(w.head+i)%w.max]
		if fl.left {
			continue
		}
		if t, ok := fl.tally(s.acct); ok {
			out = append(out, Pending{File: fl.info, Tally: t})
		}
	}
	return out
}
