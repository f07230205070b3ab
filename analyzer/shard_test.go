package analyzer

import (
	"context"
	"errors"
	"math/rand"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// unionSpans, subtractSpans and covers against sets of records.
func TestSpanSets(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	runs := func(n uint64) ([]Span, map[uint64]bool) {
		var out []Span
		set := map[uint64]bool{}
		for pos := uint64(rng.Intn(3)); pos < n; {
			end := min(pos+1+uint64(rng.Intn(4)), n)
			out = append(out, Span{pos, end})
			for r := pos; r < end; r++ {
				set[r] = true
			}
			pos = end + 1 + uint64(rng.Intn(3))
		}
		return out, set
	}
	for range 2000 {
		n := uint64(rng.Intn(30))
		a, as := runs(n)
		b, bs := runs(n)
		u, d := unionSpans(a, b), subtractSpans(a, b)
		for _, x := range [][]Span{u, d} {
			for i := range x {
				if x[i].First >= x[i].End || i > 0 && x[i].First <= x[i-1].End-1 {
					t.Fatalf("%v, %v: not sorted and disjoint: %v", a, b, x)
				}
			}
		}
		in := func(x []Span, r uint64) bool {
			for _, s := range x {
				if s.First <= r && r < s.End {
					return true
				}
			}
			return false
		}
		all := true
		for r := range n {
			if in(u, r) != (as[r] || bs[r]) || in(d, r) != (as[r] && !bs[r]) {
				t.Fatalf("%v, %v, record %d: union %v, difference %v", a, b, r, u, d)
			}
			all = all && (as[r] || bs[r])
		}
		if covers(u, n) != all {
			t.Fatalf("%v covers %d: %v", u, n, covers(u, n))
		}
	}
}

// A split file that cannot be opened (EACCES, as a mode-000 file for a
// user other than root) is an error, a file and its listed bytes once in
// all the shards, as in one scan: the owner of its chunk 0 counts it; the
// other shards that would read some of it say so, naming that shard.
func TestShardUnopenableSplitFileCountedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	testkit.Write(t, bad, testkit.Rand(1, 4<<20))
	testkit.Write(t, filepath.Join(dir, "good"), testkit.Rand(2, 100<<10))
	faults := &source.Faults{ShardSplitBytes: 256 << 10, OpenFault: func(path string) error {
		if path == bad {
			return syscall.EACCES
		}
		return nil
	}}
	scanShard := func(sh source.Shard) (Counters, []error) {
		var mu sync.Mutex
		var errs []error
		res, err := Run(context.Background(), []string{dir}, Options{Policy: testkit.Policy(t, zio.LZ4), Sparse: model.SparseAuto, Shard: sh, Faults: faults,
			Warn: func(path string, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		return res.Counters, errs
	}
	whole, errs := scanShard(source.Shard{})
	if whole.Errors != 1 || len(errs) != 1 {
		t.Fatalf("one scan: %d errors, warnings %q", whole.Errors, errs)
	}
	var sum Counters
	said := 0
	for i := range uint32(3) {
		c, errs := scanShard(source.Shard{Index: i, Count: 3})
		sum.Errors += c.Errors
		sum.Files += c.Files
		sum.LogicalBytes += c.LogicalBytes
		sum.ScannedBytes += c.ScannedBytes
		sum.ShareBytes += c.ShareBytes
		sum.Unreadable += c.Unreadable
		sum.UnreadableBytes += c.UnreadableBytes
		for _, err := range errs {
			said++
			var ce *source.CountedElsewhereError
			if errors.As(err, &ce) == (c.Errors == 1) || !strings.Contains(err.Error(), "permission denied") {
				t.Errorf("shard %d/3 (%d errors counted): %v", i, c.Errors, err)
			}
		}
	}
	if sum.Errors != 1 || sum.Files != whole.Files || sum.LogicalBytes != whole.LogicalBytes || sum.ScannedBytes != whole.ScannedBytes ||
		sum.ShareBytes != whole.LogicalBytes || whole.ShareBytes != whole.LogicalBytes || sum.Unreadable != 1 || whole.Unreadable != 1 ||
		sum.UnreadableBytes != 4<<20 || whole.UnreadableBytes != 4<<20 {
		t.Errorf("shards: %+v; one scan: %+v", sum, whole)
	}
	if said < 2 {
		t.Errorf("the problem said by %d shards: the file is not split, the test proves little", said)
	}
}
