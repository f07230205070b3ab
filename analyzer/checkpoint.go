package analyzer

import (
	"time"

	"github.com/ddtsim/ddtsim/ddt"
)

// Checkpoints.
//
// Every Options.CheckpointEvery the scan takes its gate alone: the workers
// finish the chunk they hold and wait before the next one, the walk waits
// before accounting a run of holes; the table, the counters and what Done
// and Finished reported are then the same records. The pause lasts the
// longest chunk in progress (at most 8 MiB of records, one record at
// larger recordsizes) plus what Checkpoint does.

// State is a scan's state at a checkpoint (Options.Checkpoint), valid
// only while Checkpoint runs.
type State struct {
	// Table is the scan's table: it may be read (Range, Len, not Summarize
	// of a spilled table's runs... any read), not changed, and not kept
	// after Checkpoint returns.
	Table *ddt.Table
	// Counters are the scan's so far, as its Result would give them: the
	// counts of records (with Resume's added), Errors and Changed, and of
	// the walk's, Files and LogicalBytes of the files visited so far (the
	// other walk counters are 0: the walk gives them at its end). The
	// table's own figures (UniqueBlocks, Stored, ...) are not set.
	Counters Counters
	// Waited is how long the workers took to stop.
	Waited time.Duration
}

// checkpoints starts the checkpoints of Options.CheckpointEvery; the
// function it returns stops them, waiting for one in progress.
func (s *scan) checkpoints(workers []Counters) (stop func()) {
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
				s.checkpoint(workers)
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
func (s *scan) checkpoint(workers []Counters) {
	asked := time.Now()
	s.gate.Lock()
	defer s.gate.Unlock()
	c := s.counters
	for i := range workers {
		c.add(&workers[i])
	}
	c.Files, c.LogicalBytes = s.walkFiles.Load(), s.walkBytes.Load()
	c.Errors = uint64(s.errors.Load())
	c.Changed = uint64(s.changedFiles.Load())
	if r := s.opts.Resume; r != nil {
		c.add(&r.Counters)
		c.Changed += r.Counters.Changed
	}
	s.opts.Checkpoint(State{Table: s.table, Counters: c, Waited: time.Since(asked)})
}
