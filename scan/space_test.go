package scan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/compress/gzip"
	"github.com/ddtsim/ddtsim/compress/zstd"
	"github.com/ddtsim/ddtsim/internal/golden"
	"github.com/ddtsim/ddtsim/model"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zio"
)

// goldenSpace reads what zfs list -p and zpool list -p printed for c's
// pool (its root dataset, tank, holds the files).
func goldenSpace(t *testing.T, c golden.Case) (zfs, zpool *zdb.ListTable) {
	t.Helper()
	read := func(name string) *zdb.ListTable {
		b, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		l, err := zdb.ParseList(string(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return l
	}
	return read("zfs-list-space.txt"), read("zpool-list-vp.txt")
}

// spaceTolerance is how far (relative) a predicted USED, USEDDS, LUSED,
// LREFER or ALLOC may lie from what real ZFS printed: the 1%.
const spaceTolerance = 0.01

// TestGoldenSpace scans the golden input sets under every golden case's
// settings (file systems, and volumes one a file) and compares what package space predicts zfs
// list -p and zpool list -p will show with what they showed on the real
// pool: USED, USEDDS, LUSED, LREFER and ALLOC within 1%, the dedup ratio
// as printed, compressratio within 0.01 plus the data's own error (gzip
// and zstd are approximations in the pure-Go build). The errors are
// logged as a table (the README's).
func TestGoldenSpace(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	zvols, vols := golden.ForZvolTest(t)
	var table []string
	worst := 0.0
	for _, c := range append(cases, zvols...) {
		t.Run(c.Name, func(t *testing.T) {
			var set model.Settings
			in := inputs
			if c.Zvol != "" {
				set, _ = zvolSettings(t, c, false)
				in = vols
			} else {
				text := model.Text{Release: c.Release, Vdevs: []string{c.Vdevs}, Ashift: strconv.Itoa(c.Ashift), Sparse: c.Sparse, Properties: c.Properties()}
				var err error
				if set, err = model.Parse(text); err != nil {
					t.Fatal(err)
				}
			}
			res, err := scan.Run(context.Background(), set, in, scan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			rep, err := res.Report(0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Space == nil {
				t.Fatal("no space prediction")
			}
			f := rep.Space.Figures
			zfs, zpool := goldenSpace(t, c)
			// Where this build approximates the compressor (gzip, zstd
			// in pure Go), the data's own error is allowed on top: the
			// predicted data DSIZE against the real blocks' (zdb -ddddd).
			tol := spaceTolerance
			approx := !exactCompression(c.Props["compression"])
			if approx && c.Zvol == "" {
				real := realDataDSize(t, c, res.Policy)
				e := float64(rep.Total.Referenced.DSize)/float64(real) - 1
				tol += max(e, -e)
				t.Logf("data DSIZE %d, real %d (%+.2f%%): tolerance %.2f%%", rep.Total.Referenced.DSize, real, 100*e, 100*tol)
			}
			row := []string{c.Name}
			for _, col := range []struct {
				name string
				tab  *zdb.ListTable
				got  uint64
			}{
				{"USED", zfs, f.Used}, {"USEDDS", zfs, f.UsedDS}, {"LUSED", zfs, f.LUsed}, {"LREFER", zfs, f.LRefer},
				{"ALLOC", zpool, f.Alloc},
			} {
				v, ok := col.tab.Size("tank", col.name)
				if !ok {
					t.Fatalf("no %s for tank", col.name)
				}
				e := float64(col.got)/float64(v.Lo) - 1
				row = append(row, fmt.Sprintf("%+.2f%%", 100*e))
				worst = max(worst, e, -e)
				if e > tol || -e > tol {
					t.Errorf("%s: predicted %d, real %d (%+.2f%%)", col.name, col.got, v.Lo, 100*e)
				}
			}
			if d, ok := zpool.Ratio("tank", "DEDUP"); !ok || d != f.Dedup && !(approx && d-f.Dedup < 0.015 && f.Dedup-d < 0.015) {
				t.Errorf("DEDUP: predicted %.2f, real %.2f", f.Dedup, d)
			}
			if r, ok := zfs.Ratio("tank", "RATIO"); !ok || (r-f.CompressRatio > 0.015 || f.CompressRatio-r > 0.015) && !approx {
				t.Errorf("compressratio: predicted %.2f, real %.2f", f.CompressRatio, r)
			}
			table = append(table, "| "+strings.Join(row, " | ")+" |")
		})
	}
	t.Logf("\n| case | USED | USEDDS | LUSED | LREFER | ALLOC |\n|---|---|---|---|---|---|\n%s\nworst %.2f%%", strings.Join(table, "\n"), 100*worst)
}

// exactCompression reports whether this build reproduces the compressor
// of the ZFS property value v byte for byte.
func exactCompression(v string) bool {
	switch {
	case strings.HasPrefix(v, "gzip"):
		return gzip.Exact
	case strings.HasPrefix(v, "zstd"):
		return zstd.Exact
	}
	return true
}

// realDataDSize sums the DSIZE of the level-0 blocks real ZFS wrote for
// c's files (zdb -ddddd: every block's PSIZE, allocated under p).
func realDataDSize(t *testing.T, c golden.Case, p *zio.Policy) uint64 {
	objs, err := c.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var d uint64
	for _, blocks := range objs {
		for _, b := range blocks {
			if !b.Embedded {
				d += p.DSize(b.PSize)
			}
		}
	}
	return d
}
