package compare

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/space"
)

// listsP is zfs list -p and zpool list -v -p output of a pool (the golden
// lz4-128k-a12 case's), one table after the other.
const listsP = `NAME        AVAIL      USED  USEDSNAP    USEDDS  USEDREFRESERV  USEDCHILD     LUSED    LREFER  RATIO  REFRATIO
tank  66024947712  43728896         0  43409408              0     319488  55256064  55159296   1.28      1.28
NAME                    SIZE     ALLOC         FREE  CKPOINT  EXPANDSZ   FRAG    CAP  DEDUP    HEALTH  ALTROOT
tank             68182605824  43859968  68138745856        -         -      0      0   1.00    ONLINE  -
  virtio-zdisk0  68708990976  43859968  68138745856        -         -      0      0      -    ONLINE
`

// spacePred is a prediction within 1% of listsP: USED +0.5%, USEDDS
// −0.5%, LUSED and LREFER exact, RATIO 1.27 (−0.78%), ALLOC +0.9%.
func spacePred() *space.Prediction {
	return &space.Prediction{
		Figures: space.Figures{Used: 43947540, UsedDS: 43192361, LUsed: 55256064, LRefer: 55159296, CompressRatio: 1.27, Alloc: 44254705, Dedup: 1},
		Other:   &space.Figures{Used: 30000000, UsedDS: 29000000, LUsed: 40000000, LRefer: 39000000, CompressRatio: 1.27, Alloc: 30000000, Dedup: 1.4},
	}
}

func TestCompareSpaceOnly(t *testing.T) {
	t.Parallel()
	c, err := Compare(workedHistogram(), zdb.ParseString(listsP), Options{Space: spacePred(), SpaceTolerance: 0.01, Source: "s", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Outcome != Equal || !c.Equal || c.Table != nil || len(c.Rows) != 0 || len(c.Differences) != 0 {
		t.Errorf("%s %q %q", c.Outcome, c.Verdict, c.Differences)
	}
	if c.Verdict != "EQUAL within 1%: all 5 zfs list and 2 zpool list figures" {
		t.Errorf("verdict %q", c.Verdict)
	}
	want := []struct {
		col    string
		line   int
		pred   float64
		actual string
		pct    float64
	}{
		{"USED", 2, 43947540, "43728896", 0.5}, {"USEDDS", 2, 43192361, "43409408", -0.5},
		{"LUSED", 2, 55256064, "55256064", 0}, {"LREFER", 2, 55159296, "55159296", 0},
		{"RATIO", 2, 1.27, "1.28", -0.78125}, {"ALLOC", 4, 44254705, "43859968", 0.9}, {"DEDUP", 4, 1, "1.00", 0},
	}
	if len(c.Space) != len(want) {
		t.Fatalf("%d figures: %+v", len(c.Space), c.Space)
	}
	for i, w := range want {
		f := c.Space[i]
		if f.Column != w.col || f.Line != w.line || f.Predicted != w.pred || f.Actual != w.actual || f.Name != "tank" ||
			!f.Equal || f.DiffPct < w.pct-0.001 || f.DiffPct > w.pct+0.001 {
			t.Errorf("figure %d: %+v, want %+v", i, f, w)
		}
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"actual:    s: zfs list (tank, line 2), zpool list (tank, line 4)\n",
		"zfs list USED      tank                     43947540       43728896    +0.50% (ok)\n",
		"zfs list LUSED     tank                     55256064       55256064              =\n",
		"zpool list DEDUP   tank                         1.00           1.00              =\n",
		"\nEQUAL within 1%: all 5 zfs list and 2 zpool list figures\n",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "refcnt") {
		t.Errorf("a histogram without a table:\n%s", b.String())
	}

	// At 0.5% USED, USEDDS and ALLOC differ; RATIO too.
	c, err = Compare(workedHistogram(), zdb.ParseString(listsP), Options{Space: spacePred(), SpaceTolerance: 0.005})
	if err != nil || c.Outcome != Different || c.Equal {
		t.Fatalf("%v %+v", err, c)
	}
	if c.Verdict != "DIFFERENT: 2 of 7 figures differ by more than 0.5% (5 zfs list and 2 zpool list figures)" {
		t.Errorf("verdict %q", c.Verdict)
	}
	if len(c.Differences) != 2 || c.Differences[0] != "zfs list RATIO (line 2, tank): predicted 1.27, actual 1.28 (-0.78%, beyond the tolerance of 0.5%)" ||
		!strings.HasPrefix(c.Differences[1], "zpool list ALLOC (line 4, tank): predicted 44254705, actual 43859968 (+0.90%") {
		t.Errorf("differences %q", c.Differences)
	}
	if len(c.Causes) == 0 {
		t.Error("no causes")
	}
}

// Human sizes: a figure is equal when it lies within what the text
// stands for, widened by the tolerance.
func TestCompareSpaceHuman(t *testing.T) {
	t.Parallel()
	text := "NAME   USED  AVAIL  REFER  MOUNTPOINT\ntank  41.7M  61.5G  41.4M  /tank\n"
	v, _ := nicenum.Parse("41.7M")
	for _, tc := range []struct {
		used uint64
		tol  float64
		want bool
	}{
		{v.Lo, 0, true}, {v.Hi, 0, true}, {v.Lo - 1, 0, false}, {v.Hi + 1, 0, false},
		{v.Lo - v.Lo/200, 0.01, true}, {v.Hi + v.Hi/200, 0.01, true},
		{v.Lo - v.Lo/50, 0.01, false}, {v.Hi + v.Hi/50, 0.01, false},
	} {
		pred := spacePred()
		pred.Used = tc.used
		pred.UsedDS = 43409408 // 41.4M
		c, err := Compare(workedHistogram(), zdb.ParseString(text), Options{Space: pred, SpaceTolerance: tc.tol})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Space) != 2 || c.Space[0].Column != "USED" || c.Space[1].Column != "REFER" || !c.Space[1].Equal {
			t.Fatalf("%+v", c.Space)
		}
		if f := c.Space[0]; f.Equal != tc.want || c.Equal != tc.want || f.Lo != float64(v.Lo) || f.Hi != float64(v.Hi) {
			t.Errorf("USED %d, tolerance %g: %+v, verdict %q", tc.used, tc.tol, f, c.Verdict)
		}
		if !tc.want && !strings.Contains(c.Differences[0], "predicted 4") || !tc.want && !strings.Contains(c.Differences[0], "M (") {
			t.Errorf("differences %q", c.Differences)
		}
	}
}

// With a zdb -S table too: the table's verdict stays, and the figures
// are added to it, or make it different.
func TestCompareSpaceWithTable(t *testing.T) {
	t.Parallel()
	h := workedHistogram()
	c, err := Compare(h, zdb.ParseString(workedZdbS+"\n"+listsP), Options{Space: spacePred(), SpaceTolerance: 0.01, BytesSuffix: true})
	if err != nil || c.Outcome != Equal || c.Table == nil || len(c.Space) != 7 {
		t.Fatalf("%v %+v", err, c)
	}
	if c.Verdict != "EQUAL within display precision: all 32 cells (3 buckets and the Total row) and the 4 ratios; and all 5 zfs list and 2 zpool list figures within 1%" {
		t.Errorf("verdict %q", c.Verdict)
	}
	var b strings.Builder
	c.WriteText(&b)
	if !strings.Contains(b.String(), "\n           and zfs list (tank, line 16), zpool list (tank, line 18)\n") || !strings.Contains(b.String(), "refcnt") || !strings.Contains(b.String(), "zpool list ALLOC") {
		t.Errorf("text:\n%s", b.String())
	}

	pred := spacePred()
	pred.Alloc = pred.Alloc * 105 / 100
	c, err = Compare(h, zdb.ParseString(listsP+workedZdbS), Options{Space: pred, SpaceTolerance: 0.01, BytesSuffix: true})
	if err != nil || c.Outcome != Different || c.Equal {
		t.Fatalf("%v %+v", err, c)
	}
	if c.Verdict != "DIFFERENT: 1 of 7 zfs list / zpool list figures differ by more than 1% (the DDT table: EQUAL within display precision: all 32 cells (3 buckets and the Total row) and the 4 ratios)" {
		t.Errorf("verdict %q", c.Verdict)
	}
	if len(c.Differences) != 1 || !strings.HasPrefix(c.Differences[0], "zpool list ALLOC") || len(c.Causes) != 1 || !strings.Contains(c.Causes[0], "ALLOC counts raw space") {
		t.Errorf("differences %q, causes %q", c.Differences, c.Causes)
	}

	// JSON: the figures after the table; a text without lists has none.
	var js strings.Builder
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Space []Figure `json:"space"`
		Tol   float64  `json:"space_tolerance"`
	}
	if err := json.Unmarshal([]byte(js.String()), &m); err != nil || len(m.Space) != 7 || m.Tol != 0.01 || m.Space[5].Column != "ALLOC" || m.Space[5].Equal {
		t.Errorf("JSON %v %+v", err, m)
	}
	c, _ = Compare(h, zdb.ParseString(workedZdbS), Options{Space: pred, SpaceTolerance: 0.01})
	js.Reset()
	c.WriteJSON(&js)
	if strings.Contains(js.String(), `"space`) {
		t.Errorf("zdb -S only: JSON has space figures:\n%s", js.String())
	}
}

// Figures that all agree with the prediction for dedup the other way name
// the dedup setting as the likely cause.
func TestCompareSpaceOtherDedup(t *testing.T) {
	t.Parallel()
	pred := spacePred()
	pred.Figures, *pred.Other = *pred.Other, pred.Figures
	c, err := Compare(workedHistogram(), zdb.ParseString(listsP), Options{Space: pred, SpaceTolerance: 0.01, Dedup: "on"})
	if err != nil || c.Outcome != Different {
		t.Fatalf("%v %+v", err, c)
	}
	if len(c.Causes) == 0 || !strings.Contains(c.Causes[0], "with dedup the other way round every zfs list and zpool list figure agrees") || !strings.Contains(c.Causes[0], "(the model has dedup=on)") {
		t.Errorf("causes %q", c.Causes)
	}
}

func TestCompareSpaceUnusable(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		text string
		pred *space.Prediction
		why  string
	}{
		"junk":          {"hello\nworld\n", spacePred(), "nor a zfs list or zpool list table"},
		"no columns":    {"NAME  SIZE  FREE  HEALTH\ntank  63.5G  63.4G  ONLINE\n", spacePred(), "none of the columns ddtsim predicts"},
		"no prediction": {listsP, nil, "no prediction of them"},
		"zpool status":  {"\tNAME        STATE     READ WRITE CKSUM\n\ttank        ONLINE       0     0     0\n", spacePred(), "no DDT histogram table"},
		"header only":   {"NAME  USED  AVAIL  REFER  MOUNTPOINT\n", spacePred(), "no DDT histogram table"},
		"dash only":     {"NAME  USED\ntank  -\n", spacePred(), `no figure of its zfs list and zpool list tables could be read (zfs list USED "-" (line 2))`},
		// Found by a new user: the columns were there but unreadable,
		// and the message said they were missing.
		"unreadable": {"NAME  USED  LUSED  RATIO\ntank  lots  many  high\n", spacePred(),
			`no figure of its zfs list and zpool list tables could be read (zfs list USED "lots" (line 2), zfs list LUSED "many" (line 2), zfs list RATIO "high" (line 2))`},
	} {
		_, err := Compare(workedHistogram(), zdb.ParseString(tc.text), Options{Space: tc.pred, SpaceTolerance: 0.01})
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: err %v, want %q", name, err, tc.why)
		}
	}
}

// TestFigureJSONInfinite: an actual figure of 0 beside a predicted one
// gives an infinite difference, written as null in JSON, not an error
// (found by a new user: compare --json exited 1 with "json: unsupported
// value: +Inf").
func TestFigureJSONInfinite(t *testing.T) {
	t.Parallel()
	eq, pct := figureEqual(5, 0, 0, 0.01)
	if eq || !math.IsInf(pct, 1) {
		t.Fatalf("figureEqual(5, 0, 0) = %v, %v", eq, pct)
	}
	b, err := json.Marshal(Figure{Column: "USED", Predicted: 5, Actual: "0", DiffPct: pct})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"difference_pct":null`) || !strings.Contains(string(b), `"column":"USED"`) {
		t.Errorf("JSON %s", b)
	}
	b, _ = json.Marshal(Figure{Column: "ALLOC", DiffPct: 1.5})
	if !strings.Contains(string(b), `"difference_pct":1.5`) {
		t.Errorf("JSON %s", b)
	}
}

// TestCompareSpaceNameEscaped: a pool name with an escape sequence or bad
// UTF-8, read from the file, is shown escaped (found by a new user: it
// turned the terminal red).
func TestCompareSpaceNameEscaped(t *testing.T) {
	t.Parallel()
	text := strings.ReplaceAll(listsP, "tank ", "ta\x1b[31mnk ")
	c, err := Compare(workedHistogram(), zdb.ParseString(text), Options{Space: spacePred(), SpaceTolerance: 0.01, Source: "s", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Space) == 0 || c.Space[0].Name != `ta\x1b[31mnk` {
		t.Fatalf("figures %+v", c.Space)
	}
	var out strings.Builder
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("an escape byte reached the text:\n%q", out.String())
	}
}

// TestCompareSpaceDuplicateColumn: a header naming a column twice is
// noted, the first compared (found by a new user: silently ignored).
func TestCompareSpaceDuplicateColumn(t *testing.T) {
	t.Parallel()
	text := "NAME  USED  USED\ntank  43728896  1\n"
	c, err := Compare(workedHistogram(), zdb.ParseString(text), Options{Space: spacePred(), SpaceTolerance: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Space) != 1 || c.Space[0].Actual != "43728896" || !c.Equal {
		t.Errorf("figures %+v", c.Space)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "the zfs list header (line 1) names USED twice: the first is compared") {
		t.Errorf("notes %q", c.Notes)
	}
}

// TestPercent: tolerances are printed short (found by a new user:
// --space-tolerance 1e-9 printed 1.0000000000000001e-07%).
func TestPercent(t *testing.T) {
	t.Parallel()
	for frac, want := range map[float64]string{0.01: "1%", 0.005: "0.5%", 1e-9: "1e-07%", 0.123456: "12.35%", 0: "0%"} {
		if got := percent(frac); got != want {
			t.Errorf("percent(%g) = %q, want %q", frac, got, want)
		}
	}
	c, err := Compare(workedHistogram(), zdb.ParseString(listsP), Options{Space: spacePred(), SpaceTolerance: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Verdict, "by more than 1e-07%") {
		t.Errorf("verdict %q", c.Verdict)
	}
}

// TestCompareSpaceOneFigure: one figure is "the 1 zfs list figure", not
// "all 1 zfs list figures" (found by a new user).
func TestCompareSpaceOneFigure(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"NAME  USED\ntank  43728896\n": "EQUAL within 1%: the 1 zfs list figure",
		"NAME  USED\ntank  53728896\n": "DIFFERENT: the 1 figure differs by more than 1% (1 zfs list figure)",
	} {
		c, err := Compare(workedHistogram(), zdb.ParseString(text), Options{Space: spacePred(), SpaceTolerance: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		if c.Verdict != want {
			t.Errorf("verdict %q, want %q", c.Verdict, want)
		}
	}
}
