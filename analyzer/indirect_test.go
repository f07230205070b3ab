package analyzer

import (
	"os"
	"path/filepath"
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
