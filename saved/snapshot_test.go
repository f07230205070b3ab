package saved

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/ddt"
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
	if _, sum := tb.Summarize(); snap.sum != sum {
		t.Errorf("the snapshot's figures %+v, the table's %+v", snap.sum, sum)
	}
	if again, ok, err := TakeSnapshot(tb, snap); !ok || err != nil || &again.rows[3][0] != &snap.rows[3][0] {
		t.Errorf("a snapshot taken again did not reuse the first one's memory (%v)", err)
	}
	if _, ok, err := takeSnapshot(tb, nil, 1000*rowBytes); ok || err != nil {
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

// Something else in the scan's place (not a saved scan): the write is kept
// beside it as DIR.ddtsim-PID, and so are the later writes of the same
// process (a scan's next checkpoints and its end), which replace that one;
// the other content is left alone.
func TestWriteKeptBesideAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "scan")
	if err := os.MkdirAll(filepath.Join(path, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept := fmt.Sprintf("%s.ddtsim-%d", path, os.Getpid())
	for i := range 3 {
		s := testScan(t)
		s.Complete = i == 2
		err := Write(path, s)
		if err == nil || !strings.Contains(err.Error(), "saved in "+kept+" instead") {
			t.Fatalf("write %d: %v; want it saved in %s", i, err, kept)
		}
		h, err := ReadHeader(kept)
		if err != nil || h.Complete != (i == 2) {
			t.Fatalf("write %d: %s holds %v (complete %v)", i, kept, err, h != nil && h.Complete)
		}
	}
	if _, err := os.Stat(filepath.Join(path, "mine")); err != nil {
		t.Errorf("the other content: %v", err)
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 2 {
		t.Errorf("%d entries beside: %v; want the other content and the kept scan", len(names), names)
	}
}
