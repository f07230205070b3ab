package analyzer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
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
