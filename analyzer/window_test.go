package analyzer

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// TestFilesAheadBound holds the reads of the first file of a tree back
// while 60 small files follow it: without a bound the other workers would
// finish them all after it, and a progress kept as a walk position would
// list every one. With FilesAhead 4, at most 4 started files from the
// oldest unfinished one on are ever outstanding, and the result is the
// unbounded scan's.
func TestFilesAheadBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := filepath.Join(dir, "a-slow")
	testkit.Write(t, slow, testkit.Rand(1, 3<<17))
	for i := range 60 {
		testkit.Write(t, filepath.Join(dir, fmt.Sprintf("b%02d", i)), testkit.Rand(int64(10+i), 5000))
	}
	p := testkit.Policy(t, zio.LZ4)
	want, _ := scanWarn(t, Options{Policy: p, Jobs: 3}, dir)
	for _, c := range []struct{ ahead, most int }{{4, 4}, {0, 61}} {
		var mu sync.Mutex
		var order []string
		finished := map[string]bool{}
		most, head := 0, 0
		started := func(f FileInfo, done []Span) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, f.Path)
			most = max(most, len(order)-head)
		}
		fin := func(f FileInfo) {
			mu.Lock()
			defer mu.Unlock()
			finished[f.Path] = true
			for head < len(order) && finished[order[head]] {
				head++
			}
		}
		faults := &source.Faults{Read: func(path string, off uint64, n int) source.Fault {
			if path == slow {
				return source.Fault{Delay: 300 * time.Millisecond}
			}
			return source.Fault{}
		}}
		ahead := c.ahead
		if c.ahead == 0 {
			ahead = DefaultFilesAhead
		}
		got, warns := scanWarn(t, Options{Policy: p, Jobs: 3, Started: started, Finished: fin, FilesAhead: ahead, Faults: faults}, dir)
		if len(warns) != 0 {
			t.Errorf("warnings %q", warns)
		}
		if len(order) != 61 || head != 61 {
			t.Errorf("FilesAhead %d: %d files started, %d finished in order, want 61", ahead, len(order), head)
		}
		// Bounded: never more than the window. Unbounded (the default
		// is far above 61): the small files ran past the slow one.
		if c.ahead != 0 && most > c.most || c.ahead == 0 && most < 30 {
			t.Errorf("FilesAhead %d: %d files outstanding at most (bound %d)", ahead, most, c.most)
		}
		sameResult(t, fmt.Sprintf("FilesAhead %d", ahead), got, want)
	}
}
