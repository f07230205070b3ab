package zdb_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// mustClean parses text and fails on any error or warning.
func mustClean(t *testing.T, name, text string) *zdb.Parsed {
	t.Helper()
	p := zdb.ParseString(text)
	for _, d := range p.Diags {
		if d.Severity != zdb.SevNote {
			t.Errorf("%s: %s", name, d)
		}
	}
	for _, c := range p.Failed() {
		t.Errorf("%s: check %s failed: %s", name, c.Name, c.Detail)
	}
	return p
}

// The same text pasted in the ways people paste it reads the same.
func TestParseVariants(t *testing.T) {
	t.Parallel()
	lines := strings.Split(strings.TrimSuffix(zdb.WorkedZdbS, "\n"), "\n")
	mapLines := func(f func(string) string) string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = f(l)
		}
		return strings.Join(out, "\n") + "\n"
	}
	variants := map[string]string{
		"as printed":   zdb.WorkedZdbS,
		"CRLF":         mapLines(func(l string) string { return l + "\r" }),
		"indented":     mapLines(func(l string) string { return "    " + l }),
		"tabs":         mapLines(func(l string) string { return "\t" + strings.ReplaceAll(l, "   ", "\t") }),
		"collapsed":    mapLines(func(l string) string { return strings.Join(strings.Fields(l), " ") }),
		"wide":         mapLines(func(l string) string { return strings.ReplaceAll(l, " ", "  ") }),
		"quoted":       mapLines(func(l string) string { return strings.TrimRight("> "+l, " ") }),
		"listed":       mapLines(func(l string) string { return "- " + l }),
		"prompt":       "$ sudo zdb -S tank\n" + zdb.WorkedZdbS,
		"root prompt":  "[root@host ~]# zdb -S tank\n" + zdb.WorkedZdbS + "[root@host ~]# \n",
		"no blanks":    strings.ReplaceAll(zdb.WorkedZdbS, "\n\n", "\n"),
		"wrapped":      strings.Replace(zdb.WorkedZdbS, "copies = 1.00, dedup", "copies = 1.00,\n     dedup", 1),
		"wrapped at =": strings.Replace(zdb.WorkedZdbS, "copies = 3.46", "copies\n= 3.46", 1),
		"comments":     "# zdb -S output of my pool\n# (pasted)\n" + zdb.WorkedZdbS,
		"fenced":       "```\n$ zdb -S tank\n" + zdb.WorkedZdbS + "```\n",
		"nbsp":         strings.ReplaceAll(zdb.WorkedZdbS, "   ", "\u00a0\u00a0\u00a0"),
		"BOM":          "\ufeff" + zdb.WorkedZdbS, // a file saved by a Windows editor
	}
	if p, err := zdb.Parse(strings.NewReader("\ufeff" + mapLines(func(l string) string { return l + "\r" }))); err != nil ||
		p.Primary() == nil || p.Primary().Kind != zdb.KindSimulated {
		t.Errorf("Parse of a BOM and CRLF text: %v %+v", err, p)
	}
	for name, text := range variants {
		p := mustClean(t, name, text)
		tb := p.Primary()
		if tb == nil || tb.Kind != zdb.KindSimulated || len(tb.Rows) != 3 || tb.Total == nil || tb.Ratios == nil {
			t.Errorf("%s: primary table %+v", name, tb)
			continue
		}
		if got := zdb.RowText(tb.Total); got != "5 517K 517K 520K 15 1.75M 1.75M 1.76M" {
			t.Errorf("%s: Total %q", name, got)
		}
		if got := zdb.RatioText(tb.Ratios); got != "3.46 1.00 1.00 3.46" {
			t.Errorf("%s: ratios %q", name, got)
		}
		c, err := compare.Compare(zdb.WorkedHistogram(), p, compare.Options{BytesSuffix: true})
		if err != nil || c.Outcome != compare.Equal {
			t.Errorf("%s: compare: %v %+v", name, err, c)
		}
	}
}

// Histograms written by the formatter parse back to intervals that hold
// the exact values, and compare equal: for random tables in both number
// styles, and in raw integers as zdb -P prints them.
func TestParseFormatterRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 5))
	for n := range 300 {
		h := &ddt.Histogram{}
		keys := 1 + r.IntN(60)
		scale := uint64(1) << r.UintN(12)
		for range keys {
			refcnt := uint64(1) << r.UintN(17)
			refcnt += r.Uint64N(refcnt)
			l := (1 + r.Uint64N(256)) * 512 * (1 + r.Uint64N(scale))
			p := (1 + r.Uint64N(l/512)) * 512
			d := p + r.Uint64N(4)*4096
			h.Add(refcnt, l, p, d)
		}
		for _, bs := range []bool{true, false} {
			var b strings.Builder
			if err := zdb.WriteSimulated(&b, h, bs); err != nil {
				t.Fatal(err)
			}
			p := mustClean(t, fmt.Sprintf("table %d", n), b.String())
			tb := p.Primary()
			if tb == nil {
				t.Fatalf("table %d: no table in\n%s", n, b.String())
			}
			i := 0
			for hb := range h {
				if h[hb].Allocated.Blocks == 0 {
					continue
				}
				row := &tb.Rows[i]
				i++
				if row.Bucket != hb {
					t.Fatalf("table %d: row %d is bucket %d, want %d", n, i, row.Bucket, hb)
				}
				checkRowHolds(t, fmt.Sprintf("table %d bucket %d", n, hb), row, h[hb])
			}
			checkRowHolds(t, fmt.Sprintf("table %d Total", n), tb.Total, h.Total())
			c, err := compare.Compare(h, p, compare.Options{BytesSuffix: bs})
			if err != nil || c.Outcome != compare.Equal {
				t.Fatalf("table %d: compare: %v %+v\n%s", n, err, c.Differences, b.String())
			}
		}
		// Raw integers (zdb -P, unreleased master).
		text := rawTable(h)
		p := mustClean(t, "raw", text)
		if p.Era.From != "master" {
			t.Errorf("raw table: era %+v", p.Era)
		}
		c, err := compare.Compare(h, p, compare.Options{})
		if err != nil || c.Outcome != compare.Equal {
			t.Fatalf("raw table %d: %v %+v", n, err, c)
		}
		for _, row := range p.Primary().Rows {
			for _, v := range row.Cells() {
				if !v.Exact() {
					t.Fatalf("raw value %q not exact", v.Text)
				}
			}
		}
	}
}

func checkRowHolds(t *testing.T, name string, row *zdb.Row, b ddt.Bucket) {
	t.Helper()
	want := [8]uint64{b.Allocated.Blocks, b.Allocated.LSize, b.Allocated.PSize, b.Allocated.DSize,
		b.Referenced.Blocks, b.Referenced.LSize, b.Referenced.PSize, b.Referenced.DSize}
	for i, v := range row.Cells() {
		if !v.Contains(want[i]) {
			t.Errorf("%s %s: %q = [%d, %d] except %d does not hold %d", name, zdb.ColumnNames[i], v.Text, v.Lo, v.Hi, v.Except, want[i])
		}
	}
}

// rawTable prints h as zdb -P would (master after 2.4.4): plain integers.
func rawTable(h *ddt.Histogram) string {
	var b strings.Builder
	b.WriteString("Simulated DDT histogram:\n\nbucket              allocated                       referenced\n" +
		"______   ______________________________   ______________________________\n" +
		"refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n" +
		"------   ------   -----   -----   -----   ------   -----   -----   -----\n")
	row := func(label string, x ddt.Bucket) {
		a, r := x.Allocated, x.Referenced
		fmt.Fprintf(&b, "%6s   %6d   %5d   %5d   %5d   %6d   %5d   %5d   %5d\n", label,
			a.Blocks, a.LSize, a.PSize, a.DSize, r.Blocks, r.LSize, r.PSize, r.DSize)
	}
	for i := range h {
		if h[i].Allocated.Blocks != 0 {
			row(fmt.Sprint(uint64(1)<<i), h[i])
		}
	}
	row("Total", h.Total())
	b.WriteString("\n")
	zdb.WriteRatioLine(&b, h.Total())
	return b.String()
}

// Cut-short texts: nothing panics, and a cut inside the table is reported
// (truncated, an error, or a table that is not complete).
func TestParseTruncated(t *testing.T) {
	t.Parallel()
	text := zdb.WorkedZdbS
	tableEnd := strings.Index(text, " Total")
	for cut := 0; cut <= len(text); cut++ {
		p := zdb.ParseString(text[:cut])
		_ = p.Primary()
		tb := p.Primary()
		if cut > strings.Index(text, "     1 ") && cut < tableEnd+len(" Total        5    517K    517K    520K       15   1.75M   1.75M   1.76M") {
			// (A header with no rows is a whole table: zdb -S of an empty pool.)
			if tb != nil && tb.Complete() && len(tb.Rows) > 0 && !p.Truncated && p.Errors() == 0 {
				t.Errorf("cut at %d (%q): not reported as cut short", cut, text[max(0, cut-10):cut])
			}
			if c, err := compare.Compare(zdb.WorkedHistogram(), p, compare.Options{}); err == nil && c.Outcome == compare.Equal {
				t.Errorf("cut at %d: compared equal", cut)
			}
		}
	}
	// Cut after the Total row: the table is whole, the missing ratio line
	// is reported.
	p := zdb.ParseString(text[:strings.Index(text, "dedup =")])
	if !p.Truncated || p.Primary() == nil || !p.Primary().Complete() {
		t.Errorf("cut before the ratio line: %+v", p)
	}
}

// Inconsistent texts: the checks name what does not add up.
func TestParseChecksFail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, from, to, check, says string
	}{
		{"total", " Total        5    517K", " Total        5    600K", "totals", "Total allocated LSIZE is 600K"},
		{"ratio", "dedup = 3.46,", "dedup = 2.46,", "ratios", "dedup = 2.46, but the Total row gives"},
		{"product", "copies = 3.46", "copies = 3.56", "ratios", "dedup * compress / copies = 3.56"},
		{"refcnt range", "     8        1    128K    128K    128K        8", "     8        1    128K    128K    128K        3", "rows", "bucket 8: referenced blocks 3 does not fit"},
	} {
		p := zdb.ParseString(strings.Replace(zdb.WorkedZdbS, tc.from, tc.to, 1))
		found := false
		for _, c := range p.Failed() {
			if c.Name == tc.check && strings.Contains(c.Detail, tc.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no failed %s check saying %q: %+v", tc.name, tc.check, tc.says, p.Checks)
		}
	}
}

// What cannot be read is reported by line number.
func TestParseErrorsByLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, from, to string
		line           int
		says           string
	}{
		{"bad number", "    384K    384K    384K        6", "    384K    3.8K    384K        6", 0, ""},
		{"impossible number", "    768K    768K    768K", "    768K    1.5K    768K", 8, `"1.5K" is not a number zdb prints`},
		{"bad label", "     8        1", "     6        1", 9, `bucket label "6"`},
		{"order", "     8        1    128K", "     1        1    128K", 9, "bucket 1 after bucket 2"},
		{"short row", "     2        3    384K    384K    384K        6    768K    768K    768K", "     2        3    384K    384K", 8, "histogram row has 4 fields"},
		{"garbage line", "\ndedup =", "\nsomething else\ndedup =", 12, "not understood"},
	} {
		p := zdb.ParseString(strings.Replace(zdb.WorkedZdbS, tc.from, tc.to, 1))
		if tc.line == 0 {
			continue // a valid but different number: no diagnostic
		}
		found := false
		for _, d := range p.Diags {
			if d.Line == tc.line && strings.Contains(d.Msg, tc.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no diagnostic at line %d saying %q: %v", tc.name, tc.line, tc.says, p.Diags)
		}
	}
}

func TestParseSmallOutputs(t *testing.T) {
	t.Parallel()
	// zdb -S of a pool without data: header, no rows.
	empty := "Simulated DDT histogram:\n\nbucket              allocated                       referenced          \n" +
		"______   ______________________________   ______________________________\n" +
		"refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n" +
		"------   ------   -----   -----   -----   ------   -----   -----   -----\n\n"
	p := mustClean(t, "empty", empty)
	if tb := p.Primary(); tb == nil || len(tb.Rows) != 0 || !tb.Complete() {
		t.Errorf("empty: %+v", tb)
	}
	if c, err := compare.Compare(&ddt.Histogram{}, p, compare.Options{}); err != nil || c.Outcome != compare.Equal {
		t.Errorf("empty compare: %v %+v", err, c)
	}
	p = mustClean(t, "no DDTs", "$ zdb -DD tank\nAll DDTs are empty\n")
	if !p.Empty || !p.Usable() || p.Primary() != nil {
		t.Errorf("all empty: %+v", p)
	}
	p = mustClean(t, "no entries", "  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME STATE READ WRITE CKSUM\n\ttank ONLINE 0 0 0\n\nerrors: No known data errors\n\n dedup: no DDT entries\n")
	if len(p.Summaries) != 1 || !p.Summaries[0].NoEntries {
		t.Errorf("no entries: %+v", p.Summaries)
	}
	// zdb -D (one D): object lines, then the ratio line without a table.
	p = mustClean(t, "zdb -D", "DDT-sha256-zap-unique: 402 entries, size 271 on disk, 155 in core\n\ndedup = 1.00, compress = 1.00, copies = 1.00, dedup * compress / copies = 1.00\n\n")
	if len(p.Orphans) != 1 || len(p.Objects) != 1 {
		t.Errorf("zdb -D: %+v", p)
	}
	// 2.4 zdb -DDD: DDT header, object line, object= line, its table.
	dddd := "DDT-sha256: version=0 [LEGACY]; flags=0x00; rootobj=1\n" +
		"DDT-sha256-zap-unique: dspace=4608; mspace=4096; entries=3\n" +
		"DDT-sha256-zap-unique: object=131\n\n" +
		"bucket              allocated                       referenced          \n" +
		"______   ______________________________   ______________________________\n" +
		"refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n" +
		"------   ------   -----   -----   -----   ------   -----   -----   -----\n" +
		"     1        3      3K   1.50K   1.50K        3      3K   1.50K   1.50K\n\n"
	p = mustClean(t, "2.4 -DDD", dddd)
	if len(p.Tables) != 1 || p.Tables[0].Kind != zdb.KindObject || p.Tables[0].Object != "DDT-sha256-zap-unique" ||
		p.Era.From != "2.4" || len(p.Headers) != 1 || p.Headers[0].Kind != "LEGACY" {
		t.Errorf("2.4 -DDD: %+v", p)
	}
	// zpool status -D of 0.7 to 2.2 with both sizes 1K or more: as totals
	// they would give 0.4 bytes per entry, so per-entry averages (not sure:
	// the format alone does not tell).
	st := " dedup: DDT entries 2530, size 2.27K on disk, 1.08K in core\n\n" + strings.Replace(empty[len("Simulated DDT histogram:\n"):], "-----\n\n",
		"-----\n     1    2.47K   2.47M    512B    512B    2.47K   2.47M    512B    512B\n Total    2.47K   2.47M    512B    512B    2.47K   2.47M    512B    512B\n\n", 1)
	p = mustClean(t, "0.7 status", st)
	if s := p.Summaries; len(s) != 1 || s[0].OnDisk.Meaning != zdb.PerEntry || s[0].OnDisk.Sure || p.Era.From != "0.7" {
		t.Errorf("0.7 status: %+v era %+v", p.Summaries, p.Era)
	}
	// zpool status -p of 2.3: raw totals (multiples of 512, plausible per
	// entry) read as totals, with a note.
	p = mustClean(t, "2.3 -p", " dedup: DDT entries 518, size 245760 on disk, 229376 in core\n")
	if s := p.Summaries; len(s) != 1 || s[0].OnDisk.Meaning != zdb.Total || s[0].OnDisk.Sure {
		t.Errorf("2.3 -p: %+v", p.Summaries)
	}
	// A text that holds nothing of a DDT.
	p = zdb.ParseString("hello\nworld\n")
	if p.Usable() || len(p.Diags) != 2 || p.Diags[1].Line != 2 {
		t.Errorf("garbage: %+v", p)
	}
}
