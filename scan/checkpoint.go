package scan

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/saved"
)

// CheckpointReport is what one checkpoint of a scan did
// (Options.Checkpointed).
type CheckpointReport struct {
	// Pause is how long the workers waited: for the chunks in progress
	// to end, then while the table and the progress were copied (or, for
	// a table too large to copy, written).
	Pause time.Duration
	// Wait is the part of Pause spent waiting for the chunks in progress.
	Wait time.Duration
	// Write is how long writing the checkpoint took, the workers running
	// (but for a table too large to copy: then it is part of Pause).
	Write time.Duration
	// Entries is the number of table entries saved.
	Entries int
	// Err is the failure to save (a *SaveError), nil on success: the
	// previous checkpoint is then still in place.
	Err error
}

// checkpointer saves a running scan at the analyzer's checkpoints: under
// the pause it copies the table and the progress, then writes them while
// the scan goes on. One checkpoint is written at a time: a checkpoint
// due while the previous one is still being written is skipped, and so is
// one due less than pauseShare times the last pause after it, so that the
// workers spend at most about 1/(pauseShare+1) of the time paused (a table too
// large to copy is written during the pause: checkpoints then come less
// often than asked).
type checkpointer struct {
	res     *Result
	opts    *Options
	tracker *saved.Tracker
	writing sync.WaitGroup
	busy    atomic.Bool // a checkpoint is being written
	// last is when the last checkpoint's pause ended, and how long it was
	// (take runs on one goroutine at a time).
	lastEnd   time.Time
	lastPause time.Duration
	// written is the last snapshot written, whose memory the next one
	// reuses (saved.TakeSnapshot).
	written *saved.Snapshot
}

// pauseShare: a checkpoint comes no sooner than pauseShare times the last
// one's pause after it. 20 made checkpoints of a CPU-bound scan (zstd-19 on
// a loaded machine: the pause waits for each worker's record in progress)
// minutes apart where 1 s was asked (found by a new user).
const pauseShare = 4

// take is analyzer.Options.Checkpoint: it runs while the workers wait.
func (c *checkpointer) take(st analyzer.State) {
	start := time.Now()
	if c.busy.Load() || start.Sub(c.lastEnd) < pauseShare*c.lastPause {
		return
	}
	defer func() {
		c.lastEnd = time.Now()
		c.lastPause = st.Waited + c.lastEnd.Sub(start)
	}()
	hdr := c.res.header(c.opts, c.tracker, st.InFlight, st.Pending, false)
	sc := &saved.Scan{Header: hdr, Counters: st.Counters}
	snap, ok, err := saved.TakeSnapshot(st.Table, c.written)
	if err == nil && !ok {
		// Too large to copy: written now, the workers waiting.
		sc.Table = st.Table
		err = c.opts.SaveWriter.Write(c.opts.Save, sc)
		c.report(CheckpointReport{Pause: st.Waited + time.Since(start), Wait: st.Waited, Entries: st.Table.Len(), Err: err})
		return
	}
	pause := st.Waited + time.Since(start)
	if err != nil {
		c.report(CheckpointReport{Pause: pause, Wait: st.Waited, Err: err})
		return
	}
	c.busy.Store(true)
	c.writing.Add(1)
	go func() {
		defer c.writing.Done()
		w := time.Now()
		n := snap.Len()
		err := c.opts.SaveWriter.WriteSnapshot(c.opts.Save, sc, snap)
		c.report(CheckpointReport{Pause: pause, Wait: st.Waited, Write: time.Since(w), Entries: n, Err: err})
		c.written = snap
		c.busy.Store(false)
	}()
}

// report passes a checkpoint's report on, its error as a *SaveError.
func (c *checkpointer) report(r CheckpointReport) {
	if r.Err != nil {
		r.Err = &SaveError{Path: c.opts.Save, Err: r.Err}
	}
	if c.opts.Checkpointed != nil {
		c.opts.Checkpointed(r)
	}
}

// wait waits for the checkpoint being written, if any (nil: none taken).
func (c *checkpointer) wait() {
	if c != nil {
		c.writing.Wait()
	}
}
