package analyzer

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	os.Exit(code)
}

func goldenPolicy(t *testing.T, c golden.Case) (*zio.Policy, model.Sparse) {
	t.Helper()
	rel, err := zio.LookupRelease(c.Release)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := zio.NewPool([]string{c.Vdevs}, c.Ashift)
	if err != nil {
		t.Fatal(err)
	}
	p := &zio.Policy{Release: rel, RecordSize: 128 << 10, Compression: zio.LZ4, Copies: 1, Vdev: pool}
	for k, v := range c.Props {
		switch k {
		case "compression":
			if p.Compression, p.Level, err = zio.ParseCompression(v, rel); err != nil {
				t.Fatal(err)
			}
		case "recordsize":
			n := map[string]uint32{"4K": 4 << 10, "16K": 16 << 10, "128K": 128 << 10, "1M": 1 << 20}[v]
			if n == 0 {
				t.Fatalf("recordsize %s not in this test's table", v)
			}
			p.RecordSize = n
		case "copies":
			p.Copies = int(v[0] - '0')
		case "dedup":
			p.Dedup = v == "on"
		default:
			t.Fatalf("property %s not handled", k)
		}
	}
	sp, err := model.ParseSparse(c.Sparse)
	if err != nil {
		t.Fatal(err)
	}
	return p, sp
}

// TestGoldenBlocks compares every level-0 block of every file with the
// per-block listing of real `zdb -ddddd`: which records are holes, which are
// embedded, and each stored block's LSIZE and PSIZE.
func TestGoldenBlocks(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	ran := 0
	for _, c := range cases {
		comp := c.Props["compression"]
		if comp != "lz4" && comp != "off" && comp != "lzjb" && comp != "zle" {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			want, err := c.Objects()
			if err != nil {
				t.Fatal(err)
			}
			p, sp := goldenPolicy(t, c)
			var mu sync.Mutex
			var events []BlockEvent
			res, err := Run(context.Background(), inputs, Options{
				Policy: p, Sparse: sp,
				Warn:    func(path string, err error) { t.Errorf("%s: %v", path, err) },
				OnBlock: func(e BlockEvent) { mu.Lock(); events = append(events, e); mu.Unlock() },
			})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]golden.Block{}
			for _, e := range events {
				rel, ok := golden.RelPath(e.Path)
				if !ok {
					t.Fatalf("no golden path for %s", e.Path)
				}
				if _, ok := got[rel]; !ok {
					got[rel] = []golden.Block{}
				}
				if e.Hole {
					continue
				}
				ent, ok := res.Table.Lookup(e.Key)
				if !ok {
					t.Fatalf("%s block %d: key not in the table", rel, e.BlkID)
				}
				b := golden.Block{Offset: e.BlkID * uint64(e.LSize), LSize: uint64(e.LSize), PSize: uint64(ent.PSize)}
				if ent.PSize == 0 {
					b.Embedded = true
				}
				got[rel] = append(got[rel], b)
			}
			for _, bl := range got {
				sort.Slice(bl, func(i, j int) bool { return bl[i].Offset < bl[j].Offset })
			}
			for path, wb := range want {
				gb, ok := got[path]
				if !ok {
					if len(wb) > 0 {
						t.Errorf("%s: not scanned; zdb lists %d blocks", path, len(wb))
					}
					continue
				}
				if d := diffBlocks(wb, gb); d != "" {
					t.Errorf("%s: %s", path, d)
				}
			}
			for path, gb := range got {
				if _, ok := want[path]; !ok && len(gb) > 0 {
					t.Errorf("%s: ddtsim has %d blocks, zdb lists no such file", path, len(gb))
				}
			}
		})
	}
	// 18 single-disk cases and 8 on other layouts (see TestGoldenZdbS).
	if ran < 26 {
		t.Errorf("only %d golden cases ran, want at least 26", ran)
	}
}

// diffBlocks compares block lists; embedded blocks compare by offset and
// LSIZE only (zdb prints the embedded payload length, ddtsim does not keep it).
func diffBlocks(want, got []golden.Block) string {
	var out []string
	n := max(len(want), len(got))
	for i := 0; i < n; i++ {
		var w, g *golden.Block
		if i < len(want) {
			w = &want[i]
		}
		if i < len(got) {
			g = &got[i]
		}
		switch {
		case w == nil:
			out = append(out, fmt.Sprintf("extra block at %#x %#xL/%#xP", g.Offset, g.LSize, g.PSize))
		case g == nil:
			out = append(out, fmt.Sprintf("missing block at %#x %#xL/%#xP", w.Offset, w.LSize, w.PSize))
		case w.Offset != g.Offset || w.LSize != g.LSize || w.Embedded != g.Embedded ||
			(!w.Embedded && w.PSize != g.PSize):
			out = append(out, fmt.Sprintf("block %d: zdb %#x %#xL/%#xP embedded=%v, ddtsim %#x %#xL/%#xP embedded=%v",
				i, w.Offset, w.LSize, w.PSize, w.Embedded, g.Offset, g.LSize, g.PSize, g.Embedded))
		}
		if len(out) > 5 {
			out = append(out, "...")
			break
		}
	}
	return strings.Join(out, "; ")
}
