package scanfile

import (
	"encoding/binary"
	"testing"

	"github.com/ddtsim/ddtsim/ddt"
)

// tableOf returns a table of n entries (BLAKE3 keys).
func tableOf(n int) *ddt.Table {
	t := ddt.NewTable(nil)
	var b [8]byte
	for i := range n {
		binary.BigEndian.PutUint64(b[:], uint64(i))
		k := ddt.KeyOf(b[:])
		if t.Ref(k, 4096) {
			t.Set(k, 2048)
		}
	}
	return t
}

// A snapshot holds every entry of the table once, in its partition.
func TestTakeSnapshot(t *testing.T) {
	tb := tableOf(10000)
	snap, ok, err := TakeSnapshot(tb, nil)
	if err != nil || !ok || snap.Len() != 10000 {
		t.Fatalf("snapshot: %v, %v, %d entries", ok, err, snap.Len())
	}
	seen := map[[16]byte]bool{}
	for p, rows := range snap.rows {
		for _, r := range rows {
			if Partition(&r.Key) != p || seen[r.Key] || r.Refcnt != 1 || r.LSize != 4096 || r.PSize != 2048 {
				t.Fatalf("row %+v in partition %d", r, p)
			}
			seen[r.Key] = true
		}
	}
	if len(seen) != 10000 {
		t.Errorf("%d entries in the snapshot, want 10000", len(seen))
	}
	defer func(b int64) { writeBudget = b }(writeBudget)
	if again, ok, err := TakeSnapshot(tb, snap); !ok || err != nil || &again.rows[3][0] != &snap.rows[3][0] {
		t.Errorf("a snapshot taken again did not reuse the first one's memory (%v)", err)
	}
	writeBudget = 1000 * rowBytes
	if _, ok, err := TakeSnapshot(tb, nil); ok || err != nil {
		t.Errorf("a table over the budget was copied (%v)", err)
	}
}

// BenchmarkTakeSnapshot is the pause of a checkpoint per entry: the copy
// of a table of 1 M entries (ns/op ÷ 1e6 = ns per entry), into fresh
// memory and into the previous snapshot's.
func BenchmarkTakeSnapshot(b *testing.B) {
	tb := tableOf(1 << 20)
	for _, reuse := range []bool{false, true} {
		b.Run(map[bool]string{false: "fresh", true: "reused"}[reuse], func(b *testing.B) {
			var prev *Snapshot
			for range b.N {
				snap, ok, err := TakeSnapshot(tb, prev)
				if !ok || err != nil {
					b.Fatal(ok, err)
				}
				if reuse {
					prev = snap
				}
			}
		})
	}
}
