package scan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/goldenmodel"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/zio"
	"github.com/ddtsim/ddtsim/zfslist"
)

// goldenSpace reads what zfs list -p and zpool list -p printed for c's
// pool (its root dataset, tank, holds the files).
func goldenSpace(t *testing.T, c golden.Case) (zfs, zpool *zfslist.Table) {
	t.Helper()
	read := func(name string) *zfslist.Table {
		b, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		l, err := zfslist.Parse(string(b))
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

// TestGoldenSpaceCases is TestGolden's space check (checkSpace) on the
// cases made for the space model (testdata/golden/space: thousands of small files, fat ZAPs, deep
// directories, symlinks and hard links; large, repeated and sparse files;
// raidz, mirror, ashift 9, copies=2, dedup), their inputs generated here;
// zdb -S is compared byte for byte too.
func TestGoldenSpaceCases(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 400 MB of input (-short)")
	}
	cases, err := golden.SpaceCases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 6 {
		t.Errorf("%d space cases, want at least 6", len(cases))
	}
	inputs := map[string][]string{}
	root := t.TempDir()
	var table []string
	worst := 0.0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			in, ok := inputs[c.Input]
			if !ok {
				dir := filepath.Join(root, c.Input)
				if err := golden.GenerateSpaceInput(dir, c.Input); err != nil {
					t.Fatal(err)
				}
				ents, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					in = append(in, filepath.Join(dir, e.Name()))
				}
				inputs[c.Input] = in
			}
			res, rep := scanCase(t, c, in)
			row, w := checkSpace(t, c, res, rep)
			table, worst = append(table, row), max(worst, w)
		})
	}
	t.Logf("\n| case | USED | USEDDS | LUSED | LREFER | ALLOC |\n|---|---|---|---|---|---|\n%s\nworst %.2f%%", strings.Join(table, "\n"), 100*worst)
}

// checkSpace checks the space prediction of res, c's scan, (and, for the
// space cases, zdb -S) against what real ZFS printed: USED, USEDDS,
// LUSED, LREFER and ALLOC within 1%, the dedup ratio as printed,
// compressratio within 0.01 (where this build approximates the
// compressor, zstd in pure Go, the data's own error is allowed on top).
// It returns the row of errors (the table in docs/accuracy.md) and the largest.
func checkSpace(t *testing.T, c golden.Case, res *scan.Result, rep *report.Report) (string, float64) {
	t.Helper()
	if rep.Space == nil {
		t.Fatal("no space prediction")
	}
	if c.Input == golden.SpaceTree || c.Input == golden.SpaceBig {
		want, err := c.ZdbS()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Zdb != want {
			t.Errorf("zdb -S differs from real zdb -S (-real +ddtsim):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(rep.Zdb, "\n")))
		}
	}
	f := rep.Space.Figures
	zfs, zpool := goldenSpace(t, c)
	tol := spaceTolerance
	approx := !goldenmodel.Exact(c)
	if approx && c.Zvol == "" && c.Input == "all" {
		real := realDataDSize(t, c, res.Policy)
		e := float64(rep.Total.Referenced.DSize)/float64(real) - 1
		tol += max(e, -e)
		t.Logf("data DSIZE %d, real %d (%+.2f%%): tolerance %.2f%%", rep.Total.Referenced.DSize, real, 100*e, 100*tol)
	}
	// With dedup the DDT is predicted as zfs list saw it, right after the
	// copy (on 2.3+ mostly the dedup log): no allowance for it.
	if res.Policy.Dedup && rep.Space.DDT > 0 {
		if v, ok := zfs.Size("tank", "USED"); ok {
			t.Logf("DDT as listed %d bytes (%.2f%% of USED); flushed %d", rep.Space.DDT, 100*float64(rep.Space.DDT)/float64(v.Lo), rep.DDT.OnDisk)
		}
	}
	row := []string{c.Name}
	worst := 0.0
	for _, col := range []struct {
		name string
		tab  *zfslist.Table
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
	return "| " + strings.Join(row, " | ") + " |", worst
}

// scanCase scans in under golden case c's settings (a volume a file for
// a zvol case) and returns the result, closed when the test ends, and its
// report.
func scanCase(t *testing.T, c golden.Case, in []string) (*scan.Result, *report.Report) {
	t.Helper()
	res, err := scan.Run(context.Background(), goldenmodel.Settings(t, c, false), in, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(res.Close)
	rep, err := res.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	return res, rep
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
