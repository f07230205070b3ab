package zdb

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// zdbOutputs is testdata/zdb-outputs: real texts from many releases.
func zdbOutputs() string { return filepath.Join(golden.Root(), "..", "zdb-outputs") }

type wantTable struct {
	kind   TableKind
	object string
	labels string // refcnt labels, space separated
	total  string // the Total row's eight numbers; "" for no Total row
	ratios string // the ratio line's four numbers; "" for none
}

type wantObject struct {
	name            string
	entries         uint64
	onDisk, inCore  string // as printed
	meaning         string
	totalDisk, totM uint64 // exact totals when Meaning is Total
}

type wantSummary struct {
	entries        uint64
	onDisk, inCore string
	meaning        string
	sure           bool
	cached, pct    string
}

type wantFile struct {
	file      string
	eraFrom   string
	eraTo     string
	commands  []string
	tables    []wantTable
	objects   []wantObject
	summaries []wantSummary
	checks    int // consistency checks run; all must pass
}

// The expected values were read off each text by hand (see the files); the
// test does not derive them from the parser.
var zdbOutputFiles = []wantFile{
	{
		file: "01-zdb-DD-osx-512b-recordsize-256K-refcnt.txt", eraFrom: "0.6", eraTo: "0.6",
		commands: []string{"zdb -DD tank"},
		objects: []wantObject{
			{name: "DDT-sha256-zap-duplicate", entries: 183, onDisk: "318", inCore: "201", meaning: PerEntry},
			{name: "DDT-sha256-zap-unique", entries: 10182, onDisk: "276", inCore: "156", meaning: PerEntry},
		},
		tables: []wantTable{{kind: KindAggregated, labels: "1 2 4 8 16 256K",
			total: "10.1K 5.06M 5.06M 5.06M 350K 175M 175M 175M", ratios: "34.60 1.00 1.00 34.60"}},
		checks: 5, // rows, totals, ratios, entries, classes
	},
	{
		file: "03-zdb-S-freebsd12-minecraft-compress.txt", eraFrom: "0.6", eraTo: "master",
		commands: []string{"zdb -S test"},
		tables: []wantTable{{kind: KindSimulated, labels: "1 2 4 8 16 32",
			total: "8.21K 993M 770M 770M 31.4K 3.79G 2.69G 2.69G", ratios: "3.58 1.41 1.00 5.04"}},
		checks: 3,
	},
	{
		file: "05-zpool-status-D-0.7era-per-entry-B-suffix.txt", eraFrom: "0.7", eraTo: "2.2",
		summaries: []wantSummary{{entries: 2530438, onDisk: "682B", inCore: "151B", meaning: PerEntry, sure: true}},
		tables: []wantTable{{kind: KindStatus, labels: "1 2 4 8 16",
			total: "2.41M 290G 281G 282G 2.47M 298G 289G 289G"}},
		checks: 3, // rows, totals, entries
	},
	{
		file: "06-zdb-DD-zol-0.6.5.6-small.txt", eraFrom: "0.6", eraTo: "0.6",
		commands: []string{"zdb -DD tank", "zpool status -D tank"},
		objects: []wantObject{
			{name: "DDT-sha256-zap-duplicate", entries: 216, onDisk: "1784", inCore: "2104", meaning: PerEntry},
			{name: "DDT-sha256-zap-unique", entries: 2657, onDisk: "271", inCore: "155", meaning: PerEntry},
		},
		summaries: []wantSummary{{entries: 2873, onDisk: "390", inCore: "302", meaning: PerEntry, sure: true}},
		tables: []wantTable{{kind: KindAggregated, labels: "1 2",
			total: "2.81K 342M 342M 342M 3.02K 367M 367M 367M", ratios: "1.07 1.00 1.00 1.07"}},
		checks: 5,
	},
	{
		file: "07-zpool-status-D-cached-16M-refcnt-512B.txt", eraFrom: "2.3", eraTo: "master",
		summaries: []wantSummary{{entries: 265611, onDisk: "82.9M", inCore: "51.0M", meaning: Total, sure: true, cached: "51.0M", pct: "100.00"}},
		tables: []wantTable{{kind: KindStatus, labels: "1 4 8 16 128 16M",
			total: "259K 130M 130M 130M 37.6M 18.8G 18.8G 18.8G"}},
		checks: 3,
	},
	{
		file: "09-zdb-D-2.3dev-FDT-log-hex.txt", eraFrom: "2.3", eraTo: "master",
		commands: []string{"zdb -D tank"},
		objects: []wantObject{
			// 0xa3400, 0x88000; 0x121800, 0x108000.
			{name: "DDT-blake3-zap-duplicate", entries: 1888, onDisk: "668672", inCore: "557056", meaning: Total, totalDisk: 668672, totM: 557056},
			{name: "DDT-blake3-zap-unique", entries: 2968, onDisk: "1185792", inCore: "1081344", meaning: Total, totalDisk: 1185792, totM: 1081344},
		},
	},
	{
		file: "11-zdb-D-2.2-multi-checksum.txt", eraFrom: "0.6", eraTo: "2.2",
		commands: []string{"zdb -D tank"},
		objects: []wantObject{
			{name: "DDT-sha256-zap-duplicate", entries: 4, onDisk: "4172138496", inCore: "1347237888", meaning: PerEntry},
			{name: "DDT-sha256-zap-unique", entries: 476, onDisk: "111673911", inCore: "36061201", meaning: PerEntry},
			{name: "DDT-sha512-zap-duplicate", entries: 322007, onDisk: "26878", inCore: "8679", meaning: PerEntry},
			{name: "DDT-sha512-zap-unique", entries: 3306589, onDisk: "13985", inCore: "4516", meaning: PerEntry},
			{name: "DDT-blake3-zap-duplicate", entries: 3655384, onDisk: "275", inCore: "147", meaning: PerEntry},
			{name: "DDT-blake3-zap-unique", entries: 29317269, onDisk: "274", inCore: "146", meaning: PerEntry},
		},
	},
	{
		file: "12-zpool-status-D-2013-illumos-raw-per-entry.txt", eraFrom: "0.6", eraTo: "0.6",
		commands:  []string{"zpool status -D tank"},
		summaries: []wantSummary{{entries: 2459286, onDisk: "481", inCore: "392", meaning: PerEntry, sure: true}},
		tables: []wantTable{{kind: KindStatus, labels: "1 2 4 8 16 32 64 128 256 512 1K 2K",
			total: "2.35M 37.5G 20.1G 20.1G 2.51M 40.2G 21.5G 21.5G"}},
		checks: 3,
	},
	{
		file: "14-zdb-DDD-centos-pastebin-16K-refcnt.txt", eraFrom: "0.6", eraTo: "2.2",
		commands: []string{"zdb -DDD tank"},
		objects: []wantObject{
			{name: "DDT-sha256-zap-duplicate", entries: 8193, onDisk: "290", inCore: "141", meaning: PerEntry},
		},
		tables: []wantTable{
			{kind: KindObject, object: "DDT-sha256-zap-duplicate", labels: "2 16K"},
			{kind: KindAggregated, labels: "2 16K", total: "8.00K 1.00G 1.00G 1023M 40K 5G 5G 5.00G", ratios: "5.00 1.00 1.00 5.00"},
		},
		checks: 7, // rows ×2, totals, ratios, entries, classes, objects
	},
	{
		file: "16-zdb-DD-zol-2013-raidz-4T-256K-refcnt.txt", eraFrom: "0.6", eraTo: "2.2",
		commands: []string{"zdb -DD tank"},
		objects: []wantObject{
			{name: "DDT-sha256-zap-duplicate", entries: 11979918, onDisk: "396", inCore: "176", meaning: PerEntry},
			{name: "DDT-sha256-zap-unique", entries: 30419118, onDisk: "373", inCore: "163", meaning: PerEntry},
		},
		tables: []wantTable{{kind: KindAggregated, labels: "1 2 4 8 16 32 64 128 256 512 1K 2K 4K 8K 16K 256K",
			total: "40.4M 4.19T 4.19T 4.18T 69.1M 7.18T 7.18T 7.17T", ratios: "1.71 1.00 1.00 1.72"}},
		checks: 5,
	},
	{
		file: "17-zpool-status-D-2.3-totals-rootpool-lz4.txt", eraFrom: "0.7", eraTo: "master",
		commands: []string{"zpool status -D tank"},
		// Both sizes have K/M suffixes: the format alone does not say; the
		// size per entry decides (and the note says so).
		summaries: []wantSummary{{entries: 445552, onDisk: "124M", inCore: "72.1M", meaning: Total, sure: false}},
		tables: []wantTable{{kind: KindStatus, labels: "1 2 4 8 16 32 64 128 256",
			total: "435K 28.0G 17.5G 17.8G 561K 35.7G 21.8G 22.3G", ratios: "1.25 1.64 1.02 2.00"}},
		checks: 4,
	},
	{
		file: "20-seed000-zdb-S-2.txt", eraFrom: "0.6", eraTo: "master",
		commands: []string{"zdb -S dedup_test"},
		tables: []wantTable{{kind: KindSimulated, labels: "1 2 4 64 256",
			total: "81.1K 10.1G 10.1G 10.1G 81.9K 10.2G 10.2G 10.2G", ratios: "1.01 1.00 1.00 1.01"}},
		checks: 3,
	},
	{
		file: "21-seed000-zdb-S-3.txt", eraFrom: "0.6", eraTo: "master",
		commands: []string{"zdb -S compress_test"},
		tables: []wantTable{{kind: KindSimulated, labels: "1 2 4 8 16 64 128 256 1K 2K",
			total: "261K 32.7G 16.8G 17.2G 479K 59.8G 30.5G 31.3G", ratios: "1.82 1.96 1.02 3.48"}},
		checks: 3,
	},
	{
		file: "22-seed000-zdb-S-4.txt", eraFrom: "0.6", eraTo: "master",
		commands: []string{"zdb -S dedup_test"},
		tables: []wantTable{{kind: KindSimulated, labels: "1 2 4 8 16 64 128 256 1K 2K 64K",
			total: "261K 32.7G 32.7G 32.7G 571K 71.4G 71.4G 71.4G", ratios: "2.19 1.00 1.00 2.19"}},
		checks: 3,
	},
}

func parseFile(t *testing.T, p string) *Parsed {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parsed, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

func rowText(r *Row) string {
	var s []string
	for _, v := range r.Cells() {
		s = append(s, v.Text)
	}
	return strings.Join(s, " ")
}

func ratioText(rl *RatioLine) string {
	return strings.Join([]string{rl.Dedup.Text, rl.Compress.Text, rl.Copies.Text, rl.Combined.Text}, " ")
}

// checkCellIntervals checks every cell's interval against its text: the
// value the text shows (mantissa × 1024^i) lies in it, unless that value is
// an exact multiple, which prints without a fraction.
func checkCellIntervals(t *testing.T, name string, p *Parsed) {
	t.Helper()
	for _, tb := range p.Tables {
		rows := append([]Row(nil), tb.Rows...)
		if tb.Total != nil {
			rows = append(rows, *tb.Total)
		}
		for i := range rows {
			for _, v := range rows[i].Cells() {
				txt := v.Text
				i := strings.IndexByte("KMGTPE", txt[len(txt)-1]) + 1
				if i == 0 {
					n, err := strconv.ParseUint(strings.TrimSuffix(txt, "B"), 10, 64)
					if err != nil || v.Lo != n || v.Hi != n {
						t.Errorf("%s: %q parsed as [%d, %d]", name, txt, v.Lo, v.Hi)
					}
					continue
				}
				m, _ := strconv.ParseFloat(txt[:len(txt)-1], 64)
				x := m * math.Pow(1024, float64(i))
				shown := uint64(math.Round(x))
				exactMultiple := x == math.Trunc(x) && shown%(uint64(1)<<(10*i)) == 0
				switch {
				case nicenum.Format(shown, false) == txt && !v.Contains(shown):
					t.Errorf("%s: %q parsed as [%d, %d] except %d, which leaves out %d", name, txt, v.Lo, v.Hi, v.Except, shown)
				case nicenum.Format(shown, false) != txt && !(strings.Contains(txt, ".") && exactMultiple):
					t.Errorf("%s: %q: %d prints as %q", name, txt, shown, nicenum.Format(shown, false))
				case v.Contains(shown) && nicenum.Format(shown, false) != txt:
					t.Errorf("%s: %q contains %d, which prints as %q", name, txt, shown, nicenum.Format(shown, false))
				}
				if nicenum.Format(v.Lo, false) != txt || nicenum.Format(v.Hi, false) != txt {
					t.Errorf("%s: %q: the ends %d, %d print as %q, %q", name, txt, v.Lo, v.Hi, nicenum.Format(v.Lo, false), nicenum.Format(v.Hi, false))
				}
			}
		}
	}
}

// Every file of testdata/zdb-outputs parses, with its era, tables, totals,
// ratio lines, DDT objects and dedup: lines as a person reads them, with
// no unreadable line and every consistency check passing.
func TestParseZdbOutputs(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(zdbOutputs(), "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(zdbOutputFiles) {
		t.Logf("%d files in %s, %d with expected values here (TestParseZdbOutputsGeneric checks them all)", len(files), zdbOutputs(), len(zdbOutputFiles))
	}
	for _, w := range zdbOutputFiles {
		t.Run(w.file, func(t *testing.T) {
			p := parseFile(t, filepath.Join(zdbOutputs(), w.file))
			for _, d := range p.Diags {
				if d.Severity != SevNote {
					t.Errorf("diagnostic: %s", d)
				}
			}
			if p.Truncated {
				t.Error("read as truncated")
			}
			if p.Era.From != w.eraFrom || p.Era.To != w.eraTo {
				t.Errorf("era %s..%s (%s), want %s..%s", p.Era.From, p.Era.To, p.Era.Text, w.eraFrom, w.eraTo)
			}
			var cmds []string
			for _, c := range p.Commands {
				cmds = append(cmds, c.Text)
			}
			if strings.Join(cmds, "|") != strings.Join(w.commands, "|") {
				t.Errorf("commands %q, want %q", cmds, w.commands)
			}
			if len(p.Tables) != len(w.tables) {
				t.Fatalf("%d tables, want %d", len(p.Tables), len(w.tables))
			}
			for i, wt := range w.tables {
				tb := p.Tables[i]
				var labels []string
				for j := range tb.Rows {
					labels = append(labels, tb.Rows[j].Label)
					if got := nicenum.Format(tb.Rows[j].Refcnt(), false); got != tb.Rows[j].Label {
						t.Errorf("table %d: label %q read as refcnt %d", i, tb.Rows[j].Label, tb.Rows[j].Refcnt())
					}
				}
				if tb.Kind != wt.kind || tb.Object != wt.object || strings.Join(labels, " ") != wt.labels {
					t.Errorf("table %d: %s %q buckets %q, want %s %q buckets %q", i, tb.Kind, tb.Object, labels, wt.kind, wt.object, wt.labels)
				}
				switch {
				case wt.total == "" && tb.Total != nil:
					t.Errorf("table %d: unexpected Total row %q", i, rowText(tb.Total))
				case wt.total != "" && (tb.Total == nil || rowText(tb.Total) != wt.total):
					t.Errorf("table %d: Total %v, want %q", i, tb.Total, wt.total)
				}
				switch {
				case wt.ratios == "" && tb.Ratios != nil:
					t.Errorf("table %d: unexpected ratio line %q", i, ratioText(tb.Ratios))
				case wt.ratios != "" && (tb.Ratios == nil || ratioText(tb.Ratios) != wt.ratios):
					t.Errorf("table %d: ratios %v, want %q", i, tb.Ratios, wt.ratios)
				}
				if !tb.Complete() {
					t.Errorf("table %d not complete", i)
				}
			}
			if len(p.Objects) != len(w.objects) {
				t.Fatalf("%d DDT objects, want %d", len(p.Objects), len(w.objects))
			}
			for i, wo := range w.objects {
				o := p.Objects[i]
				if o.Name != wo.name || o.Entries != wo.entries || o.OnDisk.Printed.Lo != mustUint(wo.onDisk) ||
					o.InCore.Printed.Lo != mustUint(wo.inCore) || o.OnDisk.Meaning != wo.meaning || o.InCore.Meaning != wo.meaning {
					t.Errorf("object %d: %+v, want %+v", i, o, wo)
				}
				if wo.meaning == PerEntry {
					// Per-entry averages: the total lies in [avg·n, avg·n + n - 1].
					a := mustUint(wo.onDisk)
					if o.OnDisk.Total != (nicenum.Interval{Lo: a * wo.entries, Hi: a*wo.entries + wo.entries - 1}) || o.OnDisk.PerEntry != (nicenum.Interval{Lo: a, Hi: a}) {
						t.Errorf("object %d: on disk %+v", i, o.OnDisk)
					}
				} else if o.OnDisk.Total != (nicenum.Interval{Lo: wo.totalDisk, Hi: wo.totalDisk}) || o.InCore.Total != (nicenum.Interval{Lo: wo.totM, Hi: wo.totM}) ||
					o.OnDisk.PerEntry.Lo != wo.totalDisk/wo.entries {
					t.Errorf("object %d: sizes %+v %+v", i, o.OnDisk, o.InCore)
				}
			}
			if len(p.Summaries) != len(w.summaries) {
				t.Fatalf("%d dedup: lines, want %d", len(p.Summaries), len(w.summaries))
			}
			for i, ws := range w.summaries {
				s := p.Summaries[i]
				if s.Entries != ws.entries || s.OnDisk.Printed.Text != ws.onDisk || s.InCore.Printed.Text != ws.inCore ||
					s.OnDisk.Meaning != ws.meaning || s.InCore.Meaning != ws.meaning || s.OnDisk.Sure != ws.sure {
					t.Errorf("dedup: line %d: %+v, want %+v", i, s, ws)
				}
				if ws.cached != "" && (s.Cached == nil || s.Cached.Printed.Text != ws.cached || s.CachedPct == nil || s.CachedPct.Text != ws.pct) {
					t.Errorf("dedup: line %d: cached %v %v, want %s (%s%%)", i, s.Cached, s.CachedPct, ws.cached, ws.pct)
				}
			}
			if len(p.Checks) != w.checks {
				t.Errorf("%d checks ran, want %d: %+v", len(p.Checks), w.checks, p.Checks)
			}
			for _, c := range p.Failed() {
				t.Errorf("check failed: line %d %s: %s", c.Line, c.Name, c.Detail)
			}
			checkCellIntervals(t, w.file, p)
		})
	}
}

// Every file in testdata/zdb-outputs, including ones added without
// expected values: something of a DDT is read, nothing is unreadable, every
// consistency check passes, every number is a well-formed interval.
func TestParseZdbOutputsGeneric(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(zdbOutputs(), "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in %s: %v", zdbOutputs(), err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		p := parseFile(t, f)
		if !p.Usable() {
			t.Errorf("%s: nothing of a DDT read", name)
		}
		for _, d := range p.Diags {
			if d.Severity == SevError {
				t.Errorf("%s: %s", name, d)
			}
		}
		for _, c := range p.Failed() {
			t.Errorf("%s: check %s failed: %s", name, c.Name, c.Detail)
		}
		for _, tb := range p.Tables {
			if tb.Errors > 0 {
				t.Errorf("%s: table at line %d has %d unreadable rows", name, tb.Line, tb.Errors)
			}
		}
		checkCellIntervals(t, name, p)
	}
}

func mustUint(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// The 2.3 dev text of 09: the DDT header and the log lines.
func TestParseFDTHeaderAndLog(t *testing.T) {
	t.Parallel()
	p := parseFile(t, filepath.Join(zdbOutputs(), "09-zdb-D-2.3dev-FDT-log-hex.txt"))
	if len(p.Headers) != 1 {
		t.Fatalf("headers %+v", p.Headers)
	}
	h := p.Headers[0]
	if h.Checksum != "blake3" || h.Version != 1 || h.Kind != "FDT" || h.Flags != 3 || strings.Join(h.FlagText, " ") != "FLAT LOG" || h.RootObj != 65 {
		t.Errorf("header %+v", h)
	}
	want := []DDTLog{
		{Checksum: "blake3", N: 0, Flags: 1, FlagText: []string{"FLUSHING"}, Obj: 66, Len: 0, Txg: 649, Entries: 0},
		{Checksum: "blake3", N: 1, Flags: 0, Obj: 67, Len: 0x160000, Txg: 657, Entries: 360},
	}
	if len(p.Logs) != 2 {
		t.Fatalf("logs %+v", p.Logs)
	}
	for i, w := range want {
		g := p.Logs[i]
		if g.Checksum != w.Checksum || g.N != w.N || g.Flags != w.Flags || strings.Join(g.FlagText, " ") != strings.Join(w.FlagText, " ") ||
			g.Obj != w.Obj || g.Len != w.Len || g.Txg != w.Txg || g.Entries != w.Entries {
			t.Errorf("log %d: %+v, want %+v", i, g, w)
		}
	}
}

var ratioLineRe = regexp.MustCompile(`dedup = (\S+), compress = (\S+), copies = (\S+), dedup \* compress / copies = (\S+)`)

// Every golden case's real zdb -S, zdb -DD and zpool status -D texts
// parse: their Total rows and ratio lines are what the files say (read
// here with plain string handling), every check passes, nothing is left
// unread.
func TestParseGoldenTexts(t *testing.T) {
	t.Parallel()
	cases, err := golden.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, name := range []string{"zdb-S.txt", "zdb-DD.txt", "zpool-status-D.txt"} {
			raw, err := os.ReadFile(filepath.Join(c.Dir, name))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			p := ParseString(text)
			id := c.Name + "/" + name
			for _, d := range p.Diags {
				if d.Severity != SevNote {
					t.Errorf("%s: %s", id, d)
				}
			}
			for _, ch := range p.Failed() {
				t.Errorf("%s: check %s failed: %s", id, ch.Name, ch.Detail)
			}
			var totals, ratios []string
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, " Total ") {
					totals = append(totals, strings.Join(strings.Fields(l)[1:], " "))
				}
				if m := ratioLineRe.FindStringSubmatch(l); m != nil {
					ratios = append(ratios, strings.Join(m[1:], " "))
				}
			}
			var gotT, gotR []string
			for _, tb := range p.Tables {
				if tb.Total != nil {
					gotT = append(gotT, rowText(tb.Total))
				}
				if tb.Ratios != nil {
					gotR = append(gotR, ratioText(tb.Ratios))
				}
			}
			if strings.Join(gotT, "|") != strings.Join(totals, "|") || strings.Join(gotR, "|") != strings.Join(ratios, "|") {
				t.Errorf("%s: totals %q ratios %q, want %q %q", id, gotT, gotR, totals, ratios)
			}
			wantKind := map[string]TableKind{"zdb-S.txt": KindSimulated, "zdb-DD.txt": KindAggregated, "zpool-status-D.txt": KindStatus}[name]
			if pt := p.Primary(); len(totals) > 0 && (pt == nil || pt.Kind != wantKind) {
				t.Errorf("%s: primary table %+v, want kind %s", id, pt, wantKind)
			}
			checkCellIntervals(t, id, p)
		}
	}
}

// Values read by hand from the dedup cases' zdb -DD and zpool status -D.
func TestParseGoldenDDT(t *testing.T) {
	t.Parallel()
	read := func(cs, name string) *Parsed {
		c, err := golden.FindCase(cs)
		if err != nil {
			t.Fatal(err)
		}
		return parseFile(t, filepath.Join(c.Dir, name))
	}
	// 2.3.2, fast dedup: totals.
	p := read("lz4-128k-a12-dedup", "zdb-DD.txt")
	if len(p.Objects) != 2 || p.Objects[0].Entries != 116 || p.Objects[0].OnDisk.Total != (nicenum.Interval{Lo: 61440, Hi: 61440}) ||
		p.Objects[0].InCore.Total != (nicenum.Interval{Lo: 65536, Hi: 65536}) || p.Objects[1].Entries != 402 ||
		p.Objects[1].OnDisk.Total != (nicenum.Interval{Lo: 184320, Hi: 184320}) || p.Objects[1].InCore.Total != (nicenum.Interval{Lo: 163840, Hi: 163840}) ||
		p.Objects[0].OnDisk.Meaning != Total || p.Era.From != "2.3" {
		t.Errorf("lz4-128k-a12-dedup zdb -DD: %+v era %+v", p.Objects, p.Era)
	}
	if len(p.Headers) != 1 || p.Headers[0].Kind != "FDT" || p.Headers[0].RootObj != 139 || len(p.Logs) != 2 {
		t.Errorf("lz4-128k-a12-dedup zdb -DD: headers %+v logs %+v", p.Headers, p.Logs)
	}
	// " dedup: DDT entries 518, size 72K on disk, 72.8K in core": no B,
	// both with suffixes: totals, by the size per entry (not sure).
	p = read("lz4-128k-a12-dedup", "zpool-status-D.txt")
	if s := p.Summaries; len(s) != 1 || s[0].Entries != 518 || s[0].OnDisk.Printed.Text != "72K" || s[0].OnDisk.Meaning != Total ||
		s[0].OnDisk.Sure || s[0].OnDisk.Total != (nicenum.Interval{Lo: 73728, Hi: 73728}) {
		t.Errorf("lz4-128k-a12-dedup zpool status: %+v", p.Summaries)
	}
	// " dedup: DDT entries 523, size 0 on disk, 73.5K in core": a bare 0
	// beside 73.5K is zfs_nicenum: totals, sure; 2.3+.
	p = read("off-128k-a12-never-dedup", "zpool-status-D.txt")
	if s := p.Summaries; len(s) != 1 || s[0].Entries != 523 || s[0].OnDisk.Total != (nicenum.Interval{Lo: 0, Hi: 0}) || s[0].InCore.Meaning != Total ||
		!s[0].InCore.Sure || p.Era.From != "2.3" {
		t.Errorf("off-128k-a12-never-dedup zpool status: %+v era %+v", p.Summaries, p.Era)
	}
	// 2.1.11: per-entry averages, "size 525 on disk, 175 in core".
	p = read("v21-lz4-128k-a12-dedup", "zdb-DD.txt")
	if len(p.Objects) != 2 || p.Objects[0].Entries != 117 || p.Objects[0].OnDisk.PerEntry != (nicenum.Interval{Lo: 525, Hi: 525}) ||
		p.Objects[0].InCore.PerEntry != (nicenum.Interval{Lo: 175, Hi: 175}) || p.Objects[1].Entries != 405 ||
		p.Objects[1].OnDisk.PerEntry != (nicenum.Interval{Lo: 546, Hi: 546}) || !p.Objects[1].OnDisk.Sure || p.Era.To != "2.2" {
		t.Errorf("v21 zdb -DD: %+v", p.Objects)
	}
	// " dedup: DDT entries 522, size 329B on disk, 109B in core".
	p = read("v21-lz4-128k-a12-dedup", "zpool-status-D.txt")
	if s := p.Summaries; len(s) != 1 || s[0].Entries != 522 || s[0].OnDisk.PerEntry != (nicenum.Interval{Lo: 329, Hi: 329}) ||
		s[0].InCore.Total != (nicenum.Interval{Lo: 109 * 522, Hi: 110*522 - 1}) || !s[0].OnDisk.Sure || p.Era.From != "0.7" || p.Era.To != "2.2" {
		t.Errorf("v21 zpool status: %+v era %+v", p.Summaries, p.Era)
	}
}

// TestEstimateTableMarked: a table headed by ddtsim --read's ESTIMATE line
// is parsed and marked an estimate (compare refuses it); zdb's own is not.
func TestEstimateTableMarked(t *testing.T) {
	const table = "Simulated DDT histogram:\n\nbucket              allocated                       referenced          \n" +
		"______   ______________________________   ______________________________\n" +
		"refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n" +
		"------   ------   -----   -----   -----   ------   -----   -----   -----\n" +
		"     1        2    256K    256K    256K        2    256K    256K    256K\n" +
		" Total        2    256K    256K    256K        2    256K    256K    256K\n\n" +
		"dedup = 1.00, compress = 1.00, copies = 1.00, dedup * compress / copies = 1.00\n"
	for head, want := range map[string]bool{
		"": false,
		"ESTIMATE from a 5% random read of the records: not what zdb -S would print\n": true,
	} {
		p := ParseString(head + table)
		if len(p.Tables) != 1 || p.Tables[0].Estimate != want || len(p.Tables[0].Rows) != 1 {
			t.Errorf("head %q: tables %+v, want one, estimate %v", head, p.Tables, want)
		}
		var b strings.Builder
		if err := p.WriteText(&b, "x"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "ddtsim's ESTIMATE"); got != want {
			t.Errorf("head %q: the summary says estimate: %v", head, got)
		}
	}
}
