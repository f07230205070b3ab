package analyzer

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Stage is one stage of a scan's work (Stages).
type Stage int

const (
	// The workers': reading records (pread, and guest-disk decoding),
	// hashing them (BLAKE3, ddt.KeyOf), compressing the first copy of
	// each content (zio.Writer), the table (ddt.Table.Ref, Set),
	// finishing files (the change check and close), and waiting for work
	// (the walk has queued none).
	StageRead Stage = iota
	StageHash
	StageCompress
	StageTable
	StageFinish
	StageIdle
	// The walk's goroutine: its whole time (listing, opening, stat'ing,
	// cutting files into chunks), and of that the time it waited for a
	// place in the workers' queue (the workers are behind).
	StageWalk
	StageWalkBlocked
	numStages
)

var stageNames = [numStages]string{"read", "hash", "compress", "table", "finish files", "idle (no work queued)", "walk", "walk blocked"}

func (s Stage) String() string { return stageNames[s] }

// Stages sums, while a scan runs with Options.Stages set, the time its
// goroutines spend in each Stage of the work, in nanoseconds of wall
// clock (a goroutine descheduled meanwhile still counts): where a scan
// spends its time, and which stage limits it (docs/development.md, "Speed"). The
// workers' stages are summed over the workers; StageWalk is the walk's
// goroutine alone. Timing costs a clock read a stage a record, so it is
// off by default. Safe for concurrent use.
type Stages struct {
	ns [numStages]atomic.Int64
	// Workers is the number of workers of the scan (set by Scan).
	Workers int
}

// Duration is the time spent in stage s so far.
func (st *Stages) Duration(s Stage) time.Duration { return time.Duration(st.ns[s].Load()) }

// since adds the time from t0 to now to stage s and returns now; nothing
// (and a zero time) when st is nil.
func (st *Stages) since(s Stage, t0 time.Time) time.Time {
	if st == nil {
		return time.Time{}
	}
	now := time.Now()
	st.ns[s].Add(int64(now.Sub(t0)))
	return now
}

// now is the time, when st is set.
func (st *Stages) now() time.Time {
	if st == nil {
		return time.Time{}
	}
	return time.Now()
}

// Print writes the stages' times to w, in seconds and as shares of the
// workers' time (and the walk's waiting of the walk's), with wall, the
// scan's wall time.
func (st *Stages) Print(w io.Writer, wall time.Duration) {
	var total time.Duration
	for s := StageRead; s <= StageIdle; s++ {
		total += st.Duration(s)
	}
	share := func(d, of time.Duration) float64 {
		if of <= 0 {
			return 0
		}
		return 100 * float64(d) / float64(of)
	}
	workers := "workers"
	if st.Workers == 1 {
		workers = "worker"
	}
	fmt.Fprintf(w, "stages: wall %.2f s; %d %s, %.2f s in all:\n", wall.Seconds(), st.Workers, workers, total.Seconds())
	for s := StageRead; s <= StageIdle; s++ {
		fmt.Fprintf(w, "  %-22s %9.2f s %5.1f%%\n", s, st.Duration(s).Seconds(), share(st.Duration(s), total))
	}
	walk, blocked := st.Duration(StageWalk), st.Duration(StageWalkBlocked)
	fmt.Fprintf(w, "  %-22s %9.2f s, of which %.2f s (%.1f%%) waiting for the workers\n", "walk", walk.Seconds(), blocked.Seconds(), share(blocked, walk))
}
