package analyzer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// spillScan scans with the table bounded to mem bytes and spilled to dir,
// collecting the keys of the blocks and the spill warnings.
func spillScan(t *testing.T, inputs []string, opts Options, mem int64, dir string) (*Analysis, []ddt.Key, []error) {
	t.Helper()
	var mu sync.Mutex
	var keys []ddt.Key
	var warns []error
	opts.Mem, opts.SpillDir = mem, dir
	opts.SpillWarn = func(err error) { mu.Lock(); warns = append(warns, err); mu.Unlock() }
	opts.Warn = func(path string, err error) { t.Errorf("%s: %v", path, err) }
	next := opts.OnBlock
	opts.OnBlock = func(e BlockEvent) {
		if next != nil {
			next(e)
		}
		if !e.Hole {
			mu.Lock()
			keys = append(keys, e.Key)
			mu.Unlock()
		}
	}
	res, err := Run(context.Background(), inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Table.Close() })
	return res, keys, warns
}

// sameScan compares a scan with its table spilled with one without: the
// histogram, the counters (but for the memory ones) and every block's
// entry.
func sameScan(t *testing.T, got, want *Analysis, keys []ddt.Key) {
	t.Helper()
	if *got.Histogram != *want.Histogram {
		t.Errorf("histograms differ")
	}
	gc, wc := got.Counters, want.Counters
	gc.TableBytes, gc.SpillRuns, gc.Compressed = 0, 0, 0
	wc.TableBytes, wc.SpillRuns, wc.Compressed = 0, 0, 0
	if !reflect.DeepEqual(gc, wc) {
		t.Errorf("counters:\n got %+v\nwant %+v", gc, wc)
	}
	for _, k := range keys {
		g, gok := got.Table.Lookup(k)
		w, wok := want.Table.Lookup(k)
		if g != w || gok != wok || !gok {
			t.Fatalf("Lookup %x: %+v %v, want %+v %v", k[:8], g, gok, w, wok)
		}
	}
}

// TestGoldenBlocksSpilled scans two golden cases with the table spilled
// to disk again and again (Mem 16 KiB) and compares with the scan in
// memory (which scan TestGolden holds to real zdb -ddddd): same
// histogram, same counters, and Lookup gives every block the same entry.
// Zero blocks stored as data (RefN), and dedup with embedded blocks;
// scan TestGoldenSpilled holds more cases, spilled, to real zdb -S.
func TestGoldenBlocksSpilled(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	want := map[string]bool{"off-128k-a12-never": true, "lz4-128k-a12-dedup": true}
	ran := 0
	for _, c := range cases {
		if !want[c.Name] {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			p, sp := goldenPolicy(t, c)
			mem, err := Run(context.Background(), inputs, Options{Policy: p, Sparse: sp})
			if err != nil {
				t.Fatal(err)
			}
			res, keys, warns := spillScan(t, inputs, Options{Policy: p, Sparse: sp}, 16<<10, t.TempDir())
			if len(warns) != 0 {
				t.Errorf("warnings: %v", warns)
			}
			if res.Counters.SpillRuns < 5 {
				t.Errorf("%d spills, want many", res.Counters.SpillRuns)
			}
			sameScan(t, res, mem, keys)
		})
	}
	if ran != len(want) {
		t.Errorf("%d of the %d cases found", ran, len(want))
	}
}

// When runs cannot be written (the spill directory is gone), the scan
// warns once, keeps the table in memory and gives the full result.
func TestSpillDirLost(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 40; i++ {
		testkit.Write(t, filepath.Join(dir, "f", string(rune('a'+i%26))+strings.Repeat("x", i/26)), testkit.Rand(int64(i), 300<<10))
	}
	p := testkit.Policy(t, zio.LZ4)
	mem, err := Run(context.Background(), []string{dir}, Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	spill := filepath.Join(t.TempDir(), "spill")
	if err := os.Mkdir(spill, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := Options{Policy: p, Jobs: 1} // nothing spilled before the first block's event
	var once sync.Once
	opts.OnBlock = func(BlockEvent) { once.Do(func() { os.RemoveAll(spill) }) }
	res, keys, warns := spillScan(t, []string{dir}, opts, 1, spill)
	// The reason is the system's for a file made in a missing folder.
	_, gone := os.OpenFile(filepath.Join(t.TempDir(), "gone", "x"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	var pe *os.PathError
	if !errors.As(gone, &pe) {
		t.Fatalf("a file made in a missing folder: %v", gone)
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0].Error(), "writing spill run to "+spill+": "+pe.Err.Error()+"; the table stays in memory") {
		t.Errorf("warnings %v", warns)
	}
	sameScan(t, res, mem, keys)
}
