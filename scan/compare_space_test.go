package scan_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfslist"
)

// checkCompareSpace compares res, the scan of golden case c, with what
// zfs list -p and zpool list -v -p printed for the real pool, one table
// after the other (TestGolden, for compareSpaceCases): equal at the
// default tolerance (1%), with every figure there (USED, USEDDS, LUSED,
// LREFER, RATIO; ALLOC, DEDUP); equal too with the case's zdb -S text
// before them, and with the sizes printed as zfs prints them without -p.
// An ALLOC 5% larger is different, and the difference names ALLOC.
func checkCompareSpace(t *testing.T, c golden.Case, res *scan.Result, rep *report.Report) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	lists := read("zfs-list-space.txt") + read("zpool-list-vp.txt")
	zdbS, err := c.ZdbS()
	if err != nil {
		t.Fatal(err)
	}
	opts := compare.Options{SpaceTolerance: compare.DefaultSpaceTolerance}
	cmp := func(text string) *compare.Comparison {
		t.Helper()
		cmp, err := res.Compare(rep, zdb.ParseString(text), "golden", opts)
		if err != nil {
			t.Fatal(err)
		}
		return cmp
	}

	got := cmp(lists)
	if got.Outcome != compare.Equal || got.Table != nil {
		t.Errorf("zfs list + zpool list: %s, %q; %+v", got.Outcome, got.Verdict, got.Space)
	}
	var cols []string
	for _, f := range got.Space {
		cols = append(cols, f.Command+" "+f.Column)
		if f.Name != "tank" || !f.Equal || f.Lo != f.Hi {
			t.Errorf("%+v", f)
		}
	}
	if w := "zfs list USED,zfs list USEDDS,zfs list LUSED,zfs list LREFER,zfs list RATIO,zpool list ALLOC,zpool list DEDUP"; strings.Join(cols, ",") != w {
		t.Errorf("figures %s, want %s", strings.Join(cols, ","), w)
	}
	if d := got.Space[6]; c.Props["dedup"] == "on" && (d.Actual == "1.00" || d.Predicted != rep.Space.Figures.Dedup) {
		t.Errorf("dedup=on: DEDUP %+v, predicted %.2f", d, rep.Space.Figures.Dedup)
	}
	if !strings.HasPrefix(got.Verdict, "EQUAL within 1%: all 5 zfs list and 2 zpool list figures") {
		t.Errorf("verdict %q", got.Verdict)
	}

	both := cmp(zdbS + "\n" + lists)
	if both.Outcome != compare.Equal || both.Table == nil || len(both.Space) != 7 || len(both.Rows) == 0 {
		t.Errorf("zdb -S + lists: %s, %q", both.Outcome, both.Verdict)
	}

	// Without -p: the sizes as zfs prints them (41.7M).
	human := humanSizes(t, lists)
	h := cmp(human)
	if h.Outcome != compare.Equal || len(h.Space) != 7 || h.Space[0].Lo == h.Space[0].Hi {
		t.Errorf("human sizes: %s, %q; %+v\n%s", h.Outcome, h.Verdict, h.Space, human)
	}

	// ALLOC 5% larger.
	zpool, err := zfslist.Parse(read("zpool-list-vp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	alloc, _ := zpool.Size("tank", "ALLOC")
	bad := strconv.FormatUint(alloc.Lo*105/100, 10)
	doctored := read("zfs-list-space.txt") + strings.Replace(read("zpool-list-vp.txt"), " "+alloc.Text+" ", " "+bad+" ", 1)
	d := cmp(doctored)
	if d.Outcome != compare.Different || d.Equal || len(d.Differences) != 1 ||
		!strings.HasPrefix(d.Differences[0], "zpool list ALLOC (line ") || !strings.Contains(d.Differences[0], "actual "+bad) {
		t.Errorf("doctored ALLOC: %s, %q, %q", d.Outcome, d.Verdict, d.Differences)
	}
	if !strings.HasPrefix(d.Verdict, "DIFFERENT: 1 of 7 figures differ by more than 1%") || len(d.Causes) == 0 {
		t.Errorf("doctored ALLOC: verdict %q, causes %q", d.Verdict, d.Causes)
	}
	// With the zdb -S text: the table is equal, the verdict is not.
	d = cmp(zdbS + doctored)
	if d.Outcome != compare.Different || !strings.Contains(d.Verdict, "1 of 7 zfs list / zpool list figures differ") {
		t.Errorf("zdb -S + doctored ALLOC: %s, %q", d.Outcome, d.Verdict)
	}
}

// humanSizes rewrites the integers of zfs list -p and zpool list -p
// output the way they print without -p (zfs_nicebytes: 41.7M).
func humanSizes(t *testing.T, text string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		for i, s := range f {
			if n, err := strconv.ParseUint(s, 10, 64); err == nil && i > 0 && n >= 1024 {
				f[i] = nicenum.Format(n, true)
			}
		}
		if len(f) > 0 && strings.HasPrefix(line, " ") {
			f[0] = "  " + f[0] // a zpool list -v vdev row stays indented
		}
		out = append(out, strings.Join(f, "  "))
	}
	return strings.Join(out, "\n")
}
