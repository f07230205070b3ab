package analyzer

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// TestSeenSet: a hash met again is a repeat until the set is reset, over
// a full indirect block's worth of hashes and across generations.
func TestSeenSet(t *testing.T) {
	t.Parallel()
	var s seenSet
	s.reset()
	for round := range 3 {
		for i := range uint64(1024) {
			h := i * 2048 // all in the same slot modulo the table: a long probe
			if s.add(h) {
				t.Fatalf("round %d: %d new, taken as met", round, i)
			}
		}
		for i := range uint64(1024) {
			if !s.add(i * 2048) {
				t.Fatalf("round %d: %d met, taken as new", round, i)
			}
		}
		s.reset()
	}
	s.cur = ^uint32(0) // the generation wraps: the set is cleared for real
	s.add(7)
	s.reset()
	if s.add(7) {
		t.Error("7 met after a reset past the wrap")
	}
}

// TestZeroRunIndirect: with --sparse never and compression off, a file
// whose zeros are holes of the source and one whose zeros are written
// have the same block pointers, so the same indirect blocks (found by a
// new user: the sparse one had none), at recordsizes whose chunks lie
// within an indirect block (128K) and span two (4K).
func TestZeroRunIndirect(t *testing.T) {
	t.Parallel()
	for _, rs := range []uint32{128 << 10, 4 << 10} {
		dir := t.TempDir()
		size := int64(300 << 20)
		if rs == 4<<10 {
			size = 24 << 20
		}
		dense, sparse := filepath.Join(dir, "dense"), filepath.Join(dir, "sparse")
		data := append(testkit.Rand(5, 64<<10), make([]byte, size-64<<10)...)
		testkit.Write(t, dense, data)
		testkit.Write(t, sparse, data[:64<<10])
		if err := os.Truncate(sparse, size); err != nil {
			t.Fatal(err)
		}
		p := testkit.Policy(t, zio.Off)
		p.RecordSize = rs
		d, _ := scanT(t, p, model.SparseNever, dense)
		s, _ := scanT(t, p, model.SparseNever, sparse)
		if s.Counters.SourceHoles == 0 {
			t.Skip("the file system keeps no holes")
		}
		if d.Counters.Indirect.Count == 0 || s.Counters.Indirect != d.Counters.Indirect {
			t.Errorf("recordsize %d: indirect blocks %+v from the sparse file, %+v from the dense one", rs, s.Counters.Indirect, d.Counters.Indirect)
		}
	}
}

// A checkpoint that finds a worker past the last record of its chunk, its
// counts not yet added to the file's (the moment between the two), keeps
// them in the file's counts: no resumed chunk starts there to go on with
// them (found by kill -9 after such a checkpoint: a resumed data/clones
// lost 4 KiB of indirect blocks). Part way, they are the open chunk's.
func TestTallyAtChunkEnd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		next, end uint64
		groups    []BPGroup
		open      int
	}{{64, 64, []BPGroup{{Group: 0, N: 64 + 100, Repeat: 10}}, 0}, {64, 128, []BPGroup{{Group: 0, N: 100, Repeat: 10}}, 1}} {
		fl := &file{nrec: 384}
		fl.addL1(0, space.L1{N: 100, Repeat: 10})
		bps := &bpTally{}
		bps.start(fl)
		for i := range c.next {
			var k ddt.Key
			k[0] = byte(i%32 + 1) // 32 contents: the last 32 records repeat them
			bps.add(i, k, New)
		}
		a := &accountant{fl: fl, first: 0, next: c.next, end: c.end, bps: bps}
		got, ok := fl.tally([]*accountant{a})
		want := c.groups
		if c.open == 0 {
			want[0].Repeat += 32
		}
		if !ok || !slices.Equal(got.Groups, want) || len(got.Open) != c.open {
			t.Errorf("next %d of chunk end %d: %+v, want groups %+v and %d open chunks", c.next, c.end, got, want, c.open)
		}
		if c.open == 1 && (got.Open[0].Next != 64 || got.Open[0].N != 64 || got.Open[0].Repeat != 32 || len(got.Open[0].Seen) != 32) {
			t.Errorf("open chunk %+v", got.Open[0])
		}
	}
}

// TestLongZeroRunIndirect: a sparse file of 2^26 + 1 records of 4K copied
// with its zeros written (--sparse never, compression off) has the
// indirect blocks of that many records, 65,537 + 65 + 1, one block more at
// each level than a file of 2^26 records (65,536 + 64 + 1). Found by a new
// user: past 2^16 level-1 blocks a run's were left out, and USED fell by
// 770 MiB at 2^26 + 1 records.
func TestLongZeroRunIndirect(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("on Windows a file has holes only once marked sparse: the scan would read 256 GiB of zeros")
	}
	p := testkit.Policy(t, zio.Off)
	p.RecordSize = 4 << 10
	for _, c := range []struct {
		records uint64
		want    uint64
	}{{1 << 26, 65536 + 64 + 1}, {1<<26 + 1, 65537 + 65 + 1}} {
		f := filepath.Join(t.TempDir(), "f")
		testkit.Write(t, f, testkit.Rand(7, 4<<10))
		if err := os.Truncate(f, int64(c.records)*4<<10); err != nil {
			t.Skip("no file that large here:", err)
		}
		testkit.NeedSparse(t, f)
		a, _ := scanT(t, p, model.SparseNever, f)
		if a.Counters.Indirect.Count != c.want {
			t.Errorf("%d records: %d indirect blocks, want %d", c.records, a.Counters.Indirect.Count, c.want)
		}
	}
}

// A file's runs of equal indirect blocks go into its tally (a checkpoint's
// pending file) and back (a resume), and Check refuses runs that overlap
// each other or a group.
func TestTallyRuns(t *testing.T) {
	t.Parallel()
	fl := &file{nrec: 10 << 10, lsize: 128 << 10}
	fl.zeroRunBPs(5, 9<<10)
	got, ok := fl.tally(nil)
	want := []BPRun{{First: 1, End: 8, N: space.BPsPerBlock, Repeat: space.BPsPerBlock - 16}}
	if !ok || !slices.Equal(got.Runs, want) || len(got.Groups) != 2 || got.LastData != 9<<10 {
		t.Fatalf("tally %+v, want runs %+v, groups 0 and 8, last data %d", got, want, 9<<10)
	}
	if err := got.Check(fl.nrec); err != nil {
		t.Error(err)
	}
	again := &file{nrec: fl.nrec, lsize: fl.lsize}
	again.prime(&got)
	if back, _ := again.tally(nil); !reflect.DeepEqual(back, got) {
		t.Errorf("primed again: %+v, want %+v", back, got)
	}
	for _, bad := range []BPTally{
		{Groups: []BPGroup{{Group: 3, N: 1}}, Runs: want},
		{Runs: []BPRun{{First: 1, End: 4, N: 1}, {First: 3, End: 5, N: 1}}},
		{Runs: []BPRun{{First: 1, End: 11, N: 1}}},
	} {
		if bad.Check(fl.nrec) == nil {
			t.Errorf("%+v passed Check", bad)
		}
	}
}
