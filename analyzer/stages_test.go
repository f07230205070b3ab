package analyzer

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// A scan with Options.Stages gives the same result as without, and times
// every stage it went through: reading, hashing, compressing (lz4: the
// distinct records) and the table in the workers, which together with
// their finishing and idle time stay within the workers' wall time; the
// walk's time within the scan's, its waiting within its time. Print lists
// them all.
func TestStages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 40 {
		testkit.Write(t, filepath.Join(dir, fmt.Sprintf("f%02d", i)), testkit.Rand(int64(i%10), 300<<10))
	}
	opts := func(st *Stages) Options {
		return Options{Policy: testkit.Policy(t, zio.LZ4), Sparse: model.SparseAuto, Jobs: 2, Stages: st}
	}
	plain, err := Run(context.Background(), []string{dir}, opts(nil))
	if err != nil {
		t.Fatal(err)
	}
	st := &Stages{}
	start := time.Now()
	timed, err := Run(context.Background(), []string{dir}, opts(st))
	wall := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(timed.Counters, plain.Counters) || !reflect.DeepEqual(timed.Histogram, plain.Histogram) {
		t.Errorf("with stages: %+v; without: %+v", timed.Counters, plain.Counters)
	}
	var workers time.Duration
	for s := StageRead; s <= StageIdle; s++ {
		workers += st.Duration(s)
	}
	timedStages := []Stage{StageRead, StageHash, StageCompress, StageTable, StageWalk}
	if runtime.GOOS == "windows" {
		// Go's clock there advances in the system's ticks (up to 15.6 ms):
		// the reading, hashing, compressing and table of 12 MiB, a few
		// milliseconds in all, summed from spans of microseconds, were
		// seen at 0 s under Wine 8 on a loaded machine. The walk is one
		// span, and the workers' stages add up to theirs.
		timedStages = []Stage{StageWalk}
		if workers <= 0 {
			t.Errorf("the workers' stages add up to %v", workers)
		}
	}
	for _, s := range timedStages {
		if st.Duration(s) <= 0 {
			t.Errorf("%s: %v", s, st.Duration(s))
		}
	}
	if st.Workers != 2 || workers > time.Duration(st.Workers)*wall || st.Duration(StageWalk) > wall ||
		st.Duration(StageWalkBlocked) > st.Duration(StageWalk) {
		t.Errorf("%d workers: %v in all, walk %v (blocked %v); the scan took %v", st.Workers, workers,
			st.Duration(StageWalk), st.Duration(StageWalkBlocked), wall)
	}
	var out bytes.Buffer
	st.Print(&out, wall)
	for s := StageRead; s <= StageIdle; s++ {
		if !strings.Contains(out.String(), "  "+s.String()+" ") {
			t.Errorf("Print does not list %s:\n%s", s, out.String())
		}
	}
}
