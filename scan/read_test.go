package scan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// record returns n bytes that compress about half (text-like) or not at
// all (random), by rng.
func record(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	if rng.IntN(2) == 0 {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	words := []string{"zfs ", "dedup ", "block ", "record ", "pool ", "\n"}
	var w bytes.Buffer
	for w.Len() < n {
		w.WriteString(words[rng.IntN(len(words))])
	}
	copy(b, w.Bytes())
	return b
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// harnessSets writes the harness's data sets under dir, scale records of
// 16K a set (about), and returns their paths by name.
func harnessSets(t testing.TB, dir string, scale int) map[string][]string {
	rng := rand.New(rand.NewPCG(31, 5))
	const rs = 16 << 10
	sets := map[string][]string{}
	// VM clones with few changes: 8 clones of an image, 3% of records changed each.
	base := make([][]byte, scale/8)
	for i := range base {
		base[i] = record(rng, rs)
	}
	for c := range 8 {
		var img bytes.Buffer
		for _, r := range base {
			if rng.Float64() < 0.03 {
				r = record(rng, rs)
			}
			img.Write(r)
		}
		writeFile(t, filepath.Join(dir, "clones", fmt.Sprintf("vm%d.img", c)), img.Bytes())
	}
	// Many full backups of a changing tree: 12 backups of 16 files, 5% of
	// each file's records rewritten between backups. Each file is of its
	// own size (its last record f sectors short), as the files of a tree
	// are; "same-size" is the tree of 16 files of one size, where a group
	// plan's groups (one record index of the files of one size) hold
	// every file's record: 12 groups' worth of records read in one.
	files := make([][][]byte, 16)
	for f := range files {
		files[f] = make([][]byte, scale/12/16)
		for i := range files[f] {
			files[f][i] = record(rng, rs)
		}
	}
	for b := range 12 {
		for f := range files {
			for i := range files[f] {
				if rng.Float64() < 0.05 {
					files[f][i] = record(rng, rs)
				}
			}
			data := bytes.Join(files[f], nil)
			writeFile(t, filepath.Join(dir, "same-size", fmt.Sprint(b), fmt.Sprint(f)), data)
			writeFile(t, filepath.Join(dir, "backups", fmt.Sprint(b), fmt.Sprint(f)), data[:len(data)-min(len(data), f*512)])
		}
	}
	// Unique random data.
	u := make([]byte, scale*rs)
	for i := range u {
		u[i] = byte(rng.Uint32())
	}
	writeFile(t, filepath.Join(dir, "unique", "data"), u)
	// Many small files: 512 B to 12K, a fifth of them copies of others.
	var made [][]byte
	for i := range scale {
		var d []byte
		if len(made) > 0 && rng.IntN(5) == 0 {
			d = made[rng.IntN(len(made))]
		} else {
			d = record(rng, 512*(1+rng.IntN(24)))
			made = append(made, d)
		}
		writeFile(t, filepath.Join(dir, "small", fmt.Sprint(i/100), fmt.Sprint(i)), d)
	}
	for _, n := range []string{"clones", "backups", "unique", "small"} {
		sets[n] = []string{filepath.Join(dir, n)}
		sets["mix"] = append(sets["mix"], filepath.Join(dir, n))
	}
	// A few unrelated files of one size among clones and small files: 20
	// files of random data, of scale/16 records each (a new user's 20
	// files of 2 MiB among 1.2 GB of images and small files, whose groups
	// of 20 records widened every range before strata).
	for f := range 20 {
		writeFile(t, filepath.Join(dir, "few", fmt.Sprint(f)), record(rng, rs*max(scale/16, 2)))
	}
	sets["few-large"] = []string{filepath.Join(dir, "clones"), filepath.Join(dir, "small"), filepath.Join(dir, "few")}
	sets["same-size"] = []string{filepath.Join(dir, "same-size")}
	sets["golden"] = []string{filepath.Join("..", "testdata", "golden", "inputs")}
	return sets
}

// figures are what the harness checks: the report's point figures, and
// with --read their ranges.
type figure struct {
	name string
	get  func(r *report.Report) (v float64, iv ddt.Interval)
}

var figures = []figure{
	{"dedup", func(r *report.Report) (float64, ddt.Interval) {
		return ratio(r, func(x *ddt.Ratios) float64 { return x.Dedup }), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.Dedup })
	}},
	{"compress", func(r *report.Report) (float64, ddt.Interval) {
		return ratio(r, func(x *ddt.Ratios) float64 { return x.Compress }), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.Compress })
	}},
	{"DDT entries", func(r *report.Report) (float64, ddt.Interval) {
		return float64(r.Total.Allocated.Blocks), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.Entries })
	}},
	{"on disk w/o dedup", func(r *report.Report) (float64, ddt.Interval) {
		return float64(r.Total.Referenced.DSize), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.RefDSize })
	}},
	{"on disk w/ dedup", func(r *report.Report) (float64, ddt.Interval) {
		return float64(r.Total.Allocated.DSize), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.AllocDSize })
	}},
	{"USED w/o dedup", func(r *report.Report) (float64, ddt.Interval) {
		return used(r, false, false), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.UsedWithout })
	}},
	{"USED w/ dedup", func(r *report.Report) (float64, ddt.Interval) {
		return used(r, true, false), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.UsedWith })
	}},
	{"ALLOC w/o dedup", func(r *report.Report) (float64, ddt.Interval) {
		return used(r, false, true), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.AllocWithout })
	}},
	{"ALLOC w/ dedup", func(r *report.Report) (float64, ddt.Interval) {
		return used(r, true, true), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.AllocWith })
	}},
	{"DDT RAM", func(r *report.Report) (float64, ddt.Interval) {
		return float64(r.DDT.InCore), ivOf(r, func(e *report.ReadEstimate) ddt.Interval { return e.DDTInCore })
	}},
}

func ratio(r *report.Report, f func(*ddt.Ratios) float64) float64 {
	if r.Ratios == nil {
		return 0
	}
	return f(r.Ratios)
}

func ivOf(r *report.Report, f func(*report.ReadEstimate) ddt.Interval) ddt.Interval {
	if r.Read == nil {
		return ddt.Interval{}
	}
	return f(r.Read)
}

// used is zfs list USED (alloc: zpool list ALLOC) with or without dedup,
// whichever the scan's dedup property.
func used(r *report.Report, dedup, alloc bool) float64 {
	f, on := r.SpaceByDedup()
	if dedup {
		f = on
	}
	if f == nil {
		return 0
	}
	if alloc {
		return float64(f.Alloc)
	}
	return float64(f.Used)
}

func scanReport(t testing.TB, paths []string, plan estimate.Plan) (*report.Report, uint64) {
	return scanReportWith(t, model.Settings{RecordSize: 16 << 10}, paths, plan)
}

// scanReportWith is scanReport with the settings set.
func scanReportWith(t testing.TB, set model.Settings, paths []string, plan estimate.Plan) (*report.Report, uint64) {
	t.Helper()
	res, err := scan.Run(context.Background(), set, paths, scan.Options{Read: plan, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	rep, err := res.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	return rep, res.Analysis.Counters.ReadBytes
}

// TestReadHarness is the validation harness of --read: data sets of
// known truth (a full scan), read at 1%, 5% and 15% with many seeds; per
// figure the median relative error and the coverage of the 95% ranges,
// which must be at least 90%, and the bytes read within 1.5× of the
// fraction. Small by default; DDTSIM_STRESS=1 runs larger sets and 50
// seeds and prints the table the README shows.
func TestReadHarness(t *testing.T) {
	scale, seeds := 256, 6
	if stress.On() {
		scale, seeds = 2048, 50
	}
	names := []string{"clones", "backups", "same-size", "unique", "small", "mix", "few-large", "golden"}
	fracs := []float64{0.01, 0.05, 0.15}
	scale, seeds, names, fracs = harnessEnv(t, scale, seeds, names, fracs)
	sets := harnessSets(t, t.TempDir(), scale)
	var table strings.Builder
	fmt.Fprintf(&table, "| data set | read | records | bytes read / asked |")
	for _, f := range figures {
		fmt.Fprintf(&table, " %s |", f.name)
	}
	table.WriteString("\n|---|---|---|---|" + strings.Repeat("---|", len(figures)) + "\n")
	for _, name := range names {
		truth, full := scanReport(t, sets[name], estimate.Plan{})
		for _, frac := range fracs {
			errs := make([][]float64, len(figures))
			cover := make([]int, len(figures))
			var readSum float64
			for s := range seeds {
				rep, readBytes := scanReport(t, sets[name], estimate.Plan{Fraction: frac, Seed: uint64(s + 1), Groups: true})
				// The verdict agrees with the full scan's wherever the
				// range does not straddle the rule (it said "worth it"
				// on unique data when it took the wrong end: found by a
				// new user).
				if v := rep.Read.Verdict; truth.Decision != nil && (v == "worth it" && !truth.Decision.WorthIt || strings.Contains(v, "not worth it") && truth.Decision.WorthIt) {
					t.Errorf("%s at %g%%, seed %d: verdict %q, the full scan's %q", name, 100*frac, s+1, v, truth.Decision.Text)
				}
				// The JSON's decision says undecided where the words do
				// (found by a new user: worth_it false, as for "not worth
				// it").
				if d := rep.Decision; d != nil && (d.Undecided == nil || *d.Undecided != strings.HasPrefix(rep.Read.Verdict, "undecided")) {
					t.Errorf("%s at %g%%, seed %d: verdict %q, decision.undecided %v", name, 100*frac, s+1, rep.Read.Verdict, d.Undecided)
				}
				// Dedup never allocates more than it references: no
				// saving below 0% (found by a new user: "dedup saves
				// -103206.7% to 97.8%" in the JSON and CSV decision).
				if d := rep.Decision; d != nil && rep.Read != nil {
					var lo, hi float64
					if _, err := fmt.Sscanf(d.Text[strings.Index(d.Text, "dedup saves "):], "dedup saves %f%% to %f%%", &lo, &hi); err != nil || lo < 0 || hi > 100 || lo > hi {
						t.Errorf("%s at %g%%, seed %d: %q (%v)", name, 100*frac, s+1, d.Text, err)
					}
				}
				// No more than every record uncompressed (found by a new
				// user: USED up to 245 MiB for 129 MiB of files).
				// A content read is an entry: the table takes RAM at
				// either end (found by a new user: DDT RAM from 0 B).
				if r := rep.Read; r != nil && r.Entries.Low >= 1 && r.DDTInCore.Low <= 0 {
					t.Errorf("%s at %g%%, seed %d: DDT RAM %+v with entries %+v", name, 100*frac, s+1, r.DDTInCore, r.Entries)
				}
				if r := rep.Read; r != nil && r.RefDSize.High > float64(rep.Counters.DataMaxDSize) {
					t.Errorf("%s at %g%%, seed %d: referenced DSIZE up to %.0f, above the records' %d uncompressed", name, 100*frac, s+1, r.RefDSize.High, rep.Counters.DataMaxDSize)
				}
				readSum += float64(readBytes)
				for i, f := range figures {
					want, _ := f.get(truth)
					got, iv := f.get(rep)
					got = iv.Value
					if iv.Low <= want*(1+1e-9)+1e-9 && want <= iv.High*(1+1e-9)+1e-9 {
						cover[i]++
					} else {
						t.Logf("%s at %g%%, seed %d: %s's range %.6g to %.6g missed the truth %.6g (entries %.6g to %.6g, truth %d; %d records read)",
							name, 100*frac, s+1, f.name, iv.Low, iv.High, want, rep.Read.Entries.Low, rep.Read.Entries.High, truth.Counters.UniqueBlocks, rep.Read.Read)
					}
					if want != 0 {
						errs[i] = append(errs[i], math.Abs(got/want-1))
					}
				}
			}
			ratioRead := readSum / float64(seeds) / (frac * float64(full))
			if (ratioRead > 1.5 || ratioRead < 1/1.5) && float64(full)*frac > 4<<20 {
				t.Errorf("%s at %.0f%%: read %.2f× the fraction asked", name, 100*frac, ratioRead)
			}
			fmt.Fprintf(&table, "| %s | %g%% | %d | %.2f |", name, 100*frac, truth.Counters.Records, ratioRead)
			for i, f := range figures {
				cov := float64(cover[i]) / float64(seeds)
				fmt.Fprintf(&table, " %.1f%% / %.0f%% |", 100*median(errs[i]), 100*cov)
				if cov < 0.9 {
					t.Errorf("%s at %.0f%%: %s: the 95%% range held the truth in %d of %d runs", name, 100*frac, f.name, cover[i], seeds)
				}
				// Issue 31's accuracy at 5% on clones and backups, on
				// sets of the size its table is quoted at (32K records):
				// dedup within 10%, compression within 2% in the median.
				limit := map[string]float64{"dedup": 0.10, "compress": 0.02}[f.name]
				if scale >= 32<<10 && frac == 0.05 && (name == "clones" || name == "backups") && limit > 0 && median(errs[i]) > limit {
					t.Errorf("%s at 5%%: %s's median error %.1f%%, above %.0f%%", name, f.name, 100*median(errs[i]), 100*limit)
				}
			}
			table.WriteString("\n")
		}
	}
	t.Logf("median relative error / coverage of the 95%% ranges, %d seeds:\n%s", seeds, table.String())
}

// harnessEnv lets a run of the harness choose its size, seeds, data sets
// and fractions (for the larger tables of docs/read-estimates.md):
// DDTSIM_HARNESS="scale=32768 seeds=20 sets=clones,backups read=1,5".
func harnessEnv(t *testing.T, scale, seeds int, names []string, fracs []float64) (int, int, []string, []float64) {
	for _, kv := range strings.Fields(os.Getenv("DDTSIM_HARNESS")) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "scale":
			scale, err = strconv.Atoi(v)
		case "seeds":
			seeds, err = strconv.Atoi(v)
		case "sets":
			names = strings.Split(v, ",")
		case "read":
			fracs = nil
			for _, f := range strings.Split(v, ",") {
				var x float64
				x, err = strconv.ParseFloat(f, 64)
				fracs = append(fracs, x/100)
			}
		default:
			err = fmt.Errorf("unknown key")
		}
		if err != nil {
			t.Fatalf("DDTSIM_HARNESS: %s: %v", kv, err)
		}
	}
	return scale, seeds, names, fracs
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// markedEstimate checks that the --read report rep says it is an
// estimate in every format: ESTIMATE in the text, the HTML and the zdb
// -S text (its heading), read_estimate in the JSON, estimate,true in the
// CSV. It returns the text.
func markedEstimate(t *testing.T, what string, rep *report.Report) string {
	t.Helper()
	text, js, csv, html := writeReport(t, rep)
	for name, out := range map[string]string{"text": text, "html": html, "zdb": rep.Zdb} {
		if !strings.Contains(out, "ESTIMATE") {
			t.Errorf("%s: %s output does not say ESTIMATE", what, name)
		}
	}
	if !strings.Contains(js, `"read_estimate"`) || !strings.Contains(csv, "estimate,true") {
		t.Errorf("%s: JSON or CSV does not mark the estimate:\n%s", what, csv)
	}
	if !strings.HasPrefix(rep.Zdb, "ESTIMATE") {
		t.Errorf("%s: zdb text not headed as an estimate: %.80q", what, rep.Zdb)
	}
	// The CSV's first table, the histogram, marks every row (it had no
	// mark: only the summary's estimate row said so).
	hist, _, _ := strings.Cut(csv, "\n\n")
	lines := strings.Split(hist, "\n")
	if !strings.HasSuffix(lines[0], ",referenced_dsize,estimate") || len(lines) < 3 {
		t.Errorf("%s: CSV histogram header %q: no estimate column", what, lines[0])
	}
	for _, l := range lines[1:] {
		if !strings.HasSuffix(l, ",true") || strings.Count(l, ",") != 9 {
			t.Errorf("%s: CSV histogram row %q not marked an estimate", what, l)
		}
	}
	// A group plan's inputs (one entry per group read) are no figures of
	// the report.
	if strings.Contains(js, "read_groups") || strings.Contains(js, "size_files") {
		t.Errorf("%s: the JSON lists the groups read", what)
	}
	// Found by a new user: the JSON had no flag at its top, and the HTML
	// page's footer called its figures exact.
	if !strings.Contains(js, "\n  \"estimate\": true,") || strings.Contains(html, "are exact") {
		t.Errorf("%s: JSON without \"estimate\": true at its top, or HTML calling figures exact", what)
	}
	return text
}

// TestReadMarksEstimates: a --read report says ESTIMATE in every format,
// the zdb -S text included, and its table holds only the records read.
func TestReadMarksEstimates(t *testing.T) {
	sets := harnessSets(t, t.TempDir(), 64)
	rep, _ := scanReport(t, sets["clones"], estimate.Plan{Fraction: 0.15, Seed: 3, Groups: true})
	mixed, _ := scanReport(t, harnessSets(t, t.TempDir(), 256)["mix"], estimate.Plan{Fraction: 0.05, Seed: 2, Groups: true})
	text := markedEstimate(t, "one scan", rep)
	// The headline gives ranges and says ESTIMATE on each line; no line
	// of the text outside the zdb table is wider than report.TextWidth.
	head := rep.Headline()
	if len(head) != 3 || !strings.HasPrefix(head[2], "Verdict (ESTIMATE, 15% read): ") {
		t.Errorf("headline %q", head)
	}
	for _, l := range head {
		if !strings.Contains(l, "ESTIMATE") || (!strings.HasPrefix(l, "Verdict") && !strings.Contains(l, "–")) {
			t.Errorf("headline line %q: not marked, or no range", l)
		}
	}
	// The estimate's own lines: the zdb text's heading fits too; the
	// saved line says "about" and names no causes (sampling noise).
	if first, _, _ := strings.Cut(rep.Zdb, "\n"); utf8.RuneCountInString(first) > report.TextWidth {
		t.Errorf("zdb heading of %d columns: %q", utf8.RuneCountInString(first), first)
	}
	if !strings.Contains(text, "  saved        about ") || strings.Contains(text, "\n    by ") {
		t.Errorf("saved line not marked an estimate, or causes credited:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > report.TextWidth && !strings.Contains(rep.Zdb, l) {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	// With --bytes the text gives every size range's ends as the CSV
	// does, to the byte (found by a new user: 193836844 in the text,
	// 193836845 in the CSV).
	for _, r := range []*report.Report{rep, mixed} {
		r.Bytes = true
		bt, _, csv, _ := writeReport(t, r)
		bt = strings.Join(strings.Fields(bt), " ") // lines wrap inside "(N bytes)"
		r.Bytes = false
		for _, k := range []string{"referenced_dsize", "allocated_dsize", "used_without_dedup", "alloc_with_dedup"} {
			for _, end := range []string{"", "_low", "_high"} {
				_, rest, _ := strings.Cut(csv, "\nestimate_"+k+end+",")
				v, _, _ := strings.Cut(rest, "\n")
				if v == "" || !strings.Contains(bt, "("+v+" bytes)") {
					t.Errorf("CSV estimate_%s%s %q is not in the --bytes text", k, end, v)
				}
			}
		}
	}
	// Every estimate of the JSON is in the CSV (found by a new user: the
	// stored blocks and referenced LSIZE and PSIZE were not).
	_, js, csv, _ := writeReport(t, rep)
	for _, k := range []string{"stored_blocks", "referenced_lsize", "referenced_psize", "referenced_dsize", "ddt_entries"} {
		if !strings.Contains(js, `"`+k+`"`) || !strings.Contains(csv, "\nestimate_"+k+",") || !strings.Contains(csv, "\nestimate_"+k+"_high,") {
			t.Errorf("estimate %s: in the JSON %v, not in the CSV", k, strings.Contains(js, `"`+k+`"`))
		}
	}
	c := rep.Counters
	if c.Unread == 0 || c.Stored+c.Unread+c.Holes+c.Embedded != c.Records {
		t.Errorf("counters: %d records, %d unread, %d stored, %d holes", c.Records, c.Unread, c.Stored, c.Holes)
	}
}

// writeReport is rep in every format: text, JSON, CSV, HTML.
func writeReport(t testing.TB, rep *report.Report) (text, js, csv, html string) {
	t.Helper()
	var b [4]bytes.Buffer
	for _, fn := range []func() error{func() error { return rep.WriteText(&b[0]) }, func() error { return rep.WriteJSON(&b[1]) },
		func() error { return rep.WriteCSV(&b[2]) }, func() error { return rep.WriteHTML(&b[3]) }} {
		if err := fn(); err != nil {
			t.Fatal(err)
		}
	}
	return b[0].String(), b[1].String(), b[2].String(), b[3].String()
}

// sameOutside is want == got but for the lines of the figures that a
// merge does not share with one scan whatever the plan: the table's
// memory (a merge streams the tables: its readers' memory) and the
// compressor runs (each shard compresses the first copy of a content it
// meets), which TestShardsMergedEqualOneScan leaves out too.
func sameOutside(t *testing.T, name, want, got string) {
	t.Helper()
	// The memory line (a merge has no table of its own: none there) and
	// what ends on it (the HTML's </pre>) goes to the line before.
	memory := regexp.MustCompile(`\n  memory       [^\n<]*`)
	keep := func(s string) []string {
		var out []string
		for _, l := range strings.Split(memory.ReplaceAllString(s, ""), "\n") {
			if !strings.Contains(l, "table_bytes") && !strings.Contains(l, "compressed_runs") {
				out = append(out, l)
			}
		}
		return out
	}
	if d := cmp.Diff(keep(want), keep(got)); d != "" {
		t.Errorf("%s differs (-one scan +merged shards):\n%s", name, d)
	}
}

// The shards of a --read scan, saved and merged, are the sample of the
// one scan with the same plan: the same records read, the same counters,
// and the estimate computed once from the merged table gives the one
// scan's report, the same text, JSON, CSV and HTML (but for the table's
// memory and the compressor runs: sameOutside). With files larger than
// 256 KiB split between the shards, a split file has the indirect
// blocks of each piece counted (analyzer.Counters), which moves zfs list
// USED: there the estimate itself and the zdb -S text are the one scan's.
func TestReadShardsMergedEqualOneScan(t *testing.T) {
	t.Parallel()
	sets := harnessSets(t, t.TempDir(), 128)
	set := model.Settings{RecordSize: 16 << 10}
	plan := estimate.Plan{Fraction: 0.15, Seed: 3, Groups: true}
	single, err := scan.Run(context.Background(), set, sets["mix"], scan.Options{Read: plan})
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	want, err := single.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n     uint32
		split bool
	}{{1, false}, {3, false}, {3, true}} {
		t.Run(fmt.Sprintf("%d-split-%v", c.n, c.split), func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			readers := map[string]map[uint32]bool{}
			var mu sync.Mutex
			for i := range c.n {
				f := filepath.Join(dir, fmt.Sprint(i))
				opts := scan.Options{Read: plan, Shard: source.Shard{Index: i, Count: c.n}, Save: f,
					Done: func(fi analyzer.FileInfo, first, end uint64) {
						mu.Lock()
						defer mu.Unlock()
						if readers[fi.Path] == nil {
							readers[fi.Path] = map[uint32]bool{}
						}
						readers[fi.Path][i] = true
					}}
				if c.split {
					opts.Faults = splitSmall()
				}
				res, err := scan.Run(context.Background(), set, sets["mix"], opts)
				if err != nil {
					t.Fatal(err)
				}
				res.Close()
				files = append(files, f)
			}
			shared := 0
			for _, r := range readers {
				if len(r) > 1 {
					shared++
				}
			}
			if c.split != (shared > 0) {
				t.Errorf("%d files split between shards", shared)
			}
			merged := mergeShards(t, files)
			got, err := merged.Report(0)
			if err != nil {
				t.Fatal(err)
			}
			if got.Read == nil {
				t.Fatal("the merged report has no estimate")
			}
			markedEstimate(t, "merged shards", got)
			sameCounters(t, single.Analysis.Counters, merged.Analysis.Counters)
			if !reflect.DeepEqual(got.Read.Estimate, want.Read.Estimate) || got.Zdb != want.Zdb {
				t.Errorf("estimate of the merged shards %+v, of one scan %+v", got.Read.Estimate, want.Read.Estimate)
			}
			if c.split {
				return
			}
			wt, wj, wc, wh := writeReport(t, want)
			gt, gj, gc, gh := writeReport(t, got)
			sameOutside(t, "text", wt, gt)
			sameOutside(t, "JSON", wj, gj)
			sameOutside(t, "CSV", wc, gc)
			sameOutside(t, "HTML", wh, gh)
		})
	}
}

// A resumed scan goes on with its saved plan: another plan given, or one
// for a scan saved without, is refused before anything is read.
func TestReadResumeKeepsPlan(t *testing.T) {
	saved5 := estimate.Plan{Fraction: 0.05, Seed: 1, Groups: true}
	for _, c := range []struct {
		saved, given *estimate.Plan
		want         string
	}{
		{&saved5, &estimate.Plan{Fraction: 0.05, Seed: 2, Groups: true}, "--read 5% of the groups of records, seed 2: the saved scan read 5% of the groups of records, seed 1: a resumed scan goes on with its own plan"},
		{&saved5, &estimate.Plan{Fraction: 0.15, Seed: 1, Groups: true}, "--read 15% of the groups of records, seed 1: the saved scan read 5% of the groups of records, seed 1"},
		{nil, &saved5, "--read 5% of the groups of records, seed 1: the saved scan read every record"},
		{&saved5, &saved5, ""},
		{&saved5, nil, ""},
	} {
		opts := scan.Options{Resume: &saved.Scan{Header: saved.Header{Read: c.saved}}}
		if c.given != nil {
			opts.Read = *c.given
		}
		err := opts.Validate(model.Settings{}, []string{"."})
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("saved %+v, given %+v: %v; want %q", c.saved, c.given, err, c.want)
		}
	}
}

// covers checks that each figure the harness holds to 90% of the --read
// report rep has a range that holds its value in truth, a full scan's
// report.
func covers(t *testing.T, what string, truth, rep *report.Report) {
	t.Helper()
	if rep.Read == nil {
		t.Fatalf("%s: no estimate", what)
	}
	for _, f := range figures {
		want, _ := f.get(truth)
		_, iv := f.get(rep)
		if !(iv.Low <= want*(1+1e-9) && want <= iv.High*(1+1e-9)) || want == 0 {
			t.Errorf("%s: %s %v not in the range %v–%v", what, f.name, want, iv.Low, iv.High)
		}
	}
}

// cloneImages writes n raw disk images of 4 MiB under dir: one base of
// 64K records, half of them text-like (compressible), in each image one
// MiB of its own and one MiB of zeros (holes with --guest's sparse copy,
// a zero block otherwise), the rest the base's.
func cloneImages(t *testing.T, dir string, n int) []string {
	rng := rand.New(rand.NewPCG(8, 9))
	var base []byte
	for range 64 {
		base = append(base, record(rng, 64<<10)...)
	}
	var paths []string
	for i := range n {
		img := append([]byte(nil), base...)
		for o := (i % 3) << 20; o < (i%3+1)<<20; o += 64 << 10 {
			copy(img[o:], record(rng, 64<<10))
		}
		clear(img[3<<20:])
		p := filepath.Join(dir, fmt.Sprintf("vm%d.img", i))
		writeFile(t, p, img)
		paths = append(paths, p)
	}
	return paths
}

// --read with --zvol and with --guest: the ranges of the estimates hold
// a full scan's figures; a --guest scan interrupted in its second image
// and resumed gives the uninterrupted one's estimate, and a --zvol scan
// in 3 shards merged too.
func TestReadZvolAndGuest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raws := cloneImages(t, dir, 6)
	zset, err := model.Parse(model.Text{Zvol: true, VolBlockSize: "16K", Properties: []string{"dedup=on"}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(set model.Settings, opts scan.Options, paths []string) *report.Report {
		t.Helper()
		res, err := scan.Run(context.Background(), set, paths, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		rep, err := res.Report(0)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	truth := run(zset, scan.Options{}, raws)
	if truth.Ratios == nil || truth.Ratios.Dedup < 2 || truth.Ratios.Compress < 1.2 {
		t.Fatalf("the volumes neither dedup nor compress: %+v", truth.Ratios)
	}
	plan := estimate.Plan{Fraction: 0.15, Seed: 11, Groups: true}
	for seed := range uint64(3) {
		covers(t, fmt.Sprintf("--zvol, seed %d", seed), truth, run(zset, scan.Options{Read: estimate.Plan{Fraction: 0.15, Seed: seed, Groups: true}}, raws))
	}
	// In 3 shards, the volumes split between them (chunks of 256 KiB).
	one := run(zset, scan.Options{Read: plan}, raws)
	var shards []string
	for i := range uint32(3) {
		f := filepath.Join(t.TempDir(), "shard")
		run(zset, scan.Options{Read: plan, Save: f, Faults: splitSmall(), Shard: source.Shard{Index: i, Count: 3}}, raws)
		shards = append(shards, f)
	}
	merged, err := mergeShards(t, shards).Report(0)
	if err != nil {
		t.Fatal(err)
	}
	markedEstimate(t, "--zvol shards merged", merged)
	if !reflect.DeepEqual(merged.Read.Estimate, one.Read.Estimate) || merged.Zdb != one.Zdb {
		t.Errorf("--zvol: the merged shards' estimate %+v, one scan's %+v", merged.Read.Estimate, one.Read.Estimate)
	}

	vdisktest.QemuImg(t)
	gdir := t.TempDir()
	for i, raw := range raws {
		args := [][]string{{"-O", "qcow2"}, {"-O", "vmdk", "-o", "subformat=streamOptimized"}, {"-O", "vhdx"}}[i%3]
		vdisktest.Run(t, append(append([]string{"convert", "-q", "-f", "raw"}, args...), raw, filepath.Join(gdir, fmt.Sprintf("vm%d.%s", i, args[1])))...)
	}
	gset := guestSettings(t)
	gset.Compression = "lz4"
	gtruth := run(gset, scan.Options{}, []string{gdir})
	if gtruth.Counters.Files != 6 || gtruth.Counters.SourceHoles == 0 {
		t.Fatalf("guest images: %d files, %d records in holes", gtruth.Counters.Files, gtruth.Counters.SourceHoles)
	}
	for seed := range uint64(3) {
		covers(t, fmt.Sprintf("--guest, seed %d", seed), gtruth, run(gset, scan.Options{Read: estimate.Plan{Fraction: 0.15, Seed: seed, Groups: true}}, []string{gdir}))
	}
	// Interrupted in its second image, saved, resumed.
	want := run(gset, scan.Options{Read: plan, Jobs: 1}, []string{gdir})
	save := filepath.Join(t.TempDir(), "scan")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	part, err := scan.Run(ctx, gset, []string{gdir}, scan.Options{Read: plan, Jobs: 1, Save: save, Done: func(f analyzer.FileInfo, first, end uint64) {
		if filepath.Base(f.Path) == "vm1.vmdk" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || !part.Partial {
		t.Fatalf("interrupted scan: %v", err)
	}
	part.Close()
	sc, err := saved.Read(save, saved.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Complete || sc.Read == nil || *sc.Read != plan {
		t.Fatalf("saved: complete %v, plan %+v", sc.Complete, sc.Read)
	}
	again, err := scan.Resumable(sc, save)
	if err != nil {
		t.Fatal(err)
	}
	got := run(again, scan.Options{Save: save, Resume: sc}, []string{gdir})
	markedEstimate(t, "--guest resumed", got)
	if !reflect.DeepEqual(got.Read.Estimate, want.Read.Estimate) || got.Zdb != want.Zdb {
		t.Errorf("--guest: the resumed estimate %+v, the uninterrupted one's %+v", got.Read.Estimate, want.Read.Estimate)
	}
}

// TestReadSparseNever: with compression=off and files copied without
// holes (cp --sparse=never), ZFS stores the zeros of a source file's holes
// as blocks; --read samples them like data. Before, they went into the
// table in full while the estimator took it for a sample: a file of 64M
// of data and 192M of hole, with a copy, gave USED 160–161 MiB for a
// truth of 545 MiB. The ranges hold the full scan's figures.
func TestReadSparseNever(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 8))
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, name := range []string{"a", "b"} {
		p := filepath.Join(dir, name)
		writeFile(t, p, data)
		if err := os.Truncate(p, 40<<20); err != nil {
			t.Fatal(err)
		}
		testkit.NeedSparse(t, p)
	}
	set := model.Settings{RecordSize: 16 << 10, Compression: "off", Sparse: model.SparseNever}
	report := func(plan estimate.Plan) *report.Report {
		rep, _ := scanReportWith(t, set, []string{dir}, plan)
		return rep
	}
	truth := report(estimate.Plan{})
	if truth.Counters.ZeroBlocks == 0 {
		t.Fatalf("the full scan stored no zero blocks: %+v", truth.Counters)
	}
	for s := range 8 {
		rep := report(estimate.Plan{Fraction: 0.05, Seed: uint64(s + 1), Groups: true})
		for _, f := range figures {
			want, _ := f.get(truth)
			_, iv := f.get(rep)
			if !(iv.Low <= want*(1+1e-9)+1e-9 && want <= iv.High*(1+1e-9)+1e-9) {
				t.Errorf("seed %d: %s %.0f outside its range [%.0f, %.0f]", s+1, f.name, want, iv.Low, iv.High)
			}
		}
		if got, max := rep.Counters.ReadBytes, uint64(16<<20)/10+(1<<20); got > max {
			t.Errorf("seed %d: read %d bytes, more than twice 5%% of the data", s+1, got)
		}
	}
}

// TestReadGroupsSparse: sparse images (their holes left holes by ZFS)
// read by groups: every range holds the full scan's figure, and the
// groups' records read are the records read of the population (found by
// a new user: the holes' records were counted in their groups, and 50%
// of one sparse image printed 32 DDT entries, range 32 to 33, of 128).
func TestReadGroupsSparse(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(9, 9))
	base := make([]byte, 2<<20)
	for i := range base {
		base[i] = byte(rng.Uint32())
	}
	for c := range 4 {
		img := bytes.Clone(base)
		copy(img[c*(64<<10):], record(rng, 16<<10)) // a changed record each
		p := filepath.Join(dir, fmt.Sprint("vm", c, ".img"))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(img, 8<<20); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(32 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
		testkit.NeedSparse(t, p)
	}
	truth, _ := scanReport(t, []string{dir}, estimate.Plan{})
	for _, frac := range []float64{0.2, 0.5} {
		for s := range 6 {
			plan := estimate.Plan{Fraction: frac, Seed: uint64(s + 1), Groups: true}
			res, err := scan.Run(context.Background(), model.Settings{RecordSize: 16 << 10}, []string{dir}, scan.Options{Read: plan, Jobs: 2})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Analysis.Counters
			var recs uint64
			if gs := res.Analysis.Groups; gs != nil {
				if recs, err = gs.Records(); err != nil {
					t.Fatal(err)
				}
			}
			if recs != c.Population-c.Unread {
				t.Errorf("%v: the groups hold %d records read, the population's read are %d", plan, recs, c.Population-c.Unread)
			}
			rep, err := res.Report(0)
			res.Close()
			if err != nil {
				t.Fatal(err)
			}
			if rep.Read == nil {
				continue // every record read: the full scan's report
			}
			for _, f := range figures {
				want, _ := f.get(truth)
				_, iv := f.get(rep)
				if !(iv.Low <= want*(1+1e-9)+1e-9 && want <= iv.High*(1+1e-9)+1e-9) {
					t.Errorf("%v: %s %.0f outside its range [%.0f, %.0f]", plan, f.name, want, iv.Low, iv.High)
				}
			}
		}
	}
}

// TestReadGroupsNearlyAll: a group plan that read nearly every group
// gives ranges about as narrow as its few unread records allow: the
// bounds' finite-population factor counts the data's groups, not its
// records (found by a new user: 99% of a tree of backups read, 2 records
// unread, compression "1.00 to 12.31").
func TestReadGroupsNearlyAll(t *testing.T) {
	sets := harnessSets(t, t.TempDir(), 1024)
	for s := range 3 {
		rep, _ := scanReport(t, sets["backups"], estimate.Plan{Fraction: 0.97, Seed: uint64(s + 1), Groups: true})
		if rep.Read == nil {
			continue // every record read: the full scan's report
		}
		// The sizes' figures: the entries' and the dedup ratio's range
		// must allow each record unread to be a content of its own.
		for _, f := range []figure{figures[1], figures[3]} { // compress, on disk w/o dedup
			_, iv := f.get(rep)
			// 4–13% wide; 45–49% with the records taken for the groups.
			if w := (iv.High - iv.Low) / iv.Value; w > 0.2 {
				t.Errorf("seed %d, %d of %d records read: %s %.4g, range %.4g to %.4g (%.0f%% wide)",
					s+1, rep.Read.Read, rep.Read.Records, f.name, iv.Value, iv.Low, iv.High, 100*w)
			}
		}
	}
}

// TestReadOpensOnlyFilesRead: --read opens only the files of which it
// reads a record (and those that look sparse): 400 one-record files at 5%
// open about 20, and the estimate is the one of a walk that opens them
// all (the same records are read).
func TestReadOpensOnlyFilesRead(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 400 {
		writeFile(t, filepath.Join(dir, fmt.Sprint(i)), record(rng, 4096))
	}
	var mu sync.Mutex
	opens := 0
	faults := &source.Faults{BeforeOpen: func(string) { mu.Lock(); opens++; mu.Unlock() }}
	plan := estimate.Plan{Fraction: 0.05, Seed: 9, Groups: true}
	res, err := scan.Run(context.Background(), model.Settings{}, []string{dir}, scan.Options{Read: plan, Jobs: 2, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	c := res.Analysis.Counters
	read := c.Population - c.Unread
	if c.Files != 400 || read == 0 || uint64(opens) != read {
		t.Errorf("%d files, %d records read, %d opened; want 400 files, one opened for each record read", c.Files, read, opens)
	}
	if read > 40 {
		t.Errorf("read %d of 400 records at 5%%", read)
	}
}

// TestReadNothingReadOrPartial: a --read that read no record says so in
// the verdict and the saved line, with no point figure for the savings
// nor for the estimates
// (found by a new user: "saved about 17.4 MiB of the 18.0 MiB (96.7%)"
// from 0 records read); a partial one says partial in its verdict, as a
// full scan's does.
func TestReadNothingReadOrPartial(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(6, 6))
	for i := range 20 {
		writeFile(t, filepath.Join(dir, fmt.Sprint(i)), record(rng, 4096))
	}
	rep, _ := scanReport(t, []string{dir}, estimate.Plan{Fraction: estimate.MinFraction, Seed: 1, Groups: true})
	if rep.Read.Read != 0 {
		t.Fatalf("read %d records at %g", rep.Read.Read, estimate.MinFraction)
	}
	text, js, csv, html := writeReport(t, rep)
	head := rep.Headline()
	if v := head[len(head)-1]; !strings.Contains(v, "none: no record was read (0 of 20)") {
		t.Errorf("verdict %q", v)
	}
	if !strings.Contains(text, "saved        not estimated: no record was read (0 of 20)") {
		t.Errorf("no saved line saying nothing was read:\n%s", text)
	}
	// No point, only the ranges (found by a new user: "on disk 0 B" for
	// 400 MiB read at 0.001%).
	for _, want := range []string{"dedup      unknown (95%: 1.00 to ", "on disk    unknown (95%: 0 B to ", "entries    unknown (95%: 0 to 20 DDT entries)"} {
		if !strings.Contains(text, want) {
			t.Errorf("no line %q:\n%s", want, text)
		}
	}
	// Nor in the other formats, nor from the (empty) table: no zfs list
	// figure, no saved share, no decision.
	for _, no := range []string{"zfs list     USED", "data blocks"} {
		if strings.Contains(text, no) {
			t.Errorf("a point line %q:\n%s", no, text)
		}
	}
	var doc struct {
		Read     map[string]json.RawMessage `json:"read_estimate"`
		Space    json.RawMessage            `json:"space"`
		Decision json.RawMessage            `json:"decision"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	var dedup map[string]*float64
	if err := json.Unmarshal(doc.Read["dedup"], &dedup); err != nil || dedup["value"] != nil || dedup["high"] == nil {
		t.Errorf("JSON read_estimate.dedup %s (%v), want no value and a range", doc.Read["dedup"], err)
	}
	if !strings.Contains(string(doc.Read["verdict"]), "no record was read") || doc.Space != nil || doc.Decision != nil {
		t.Errorf("JSON verdict %s, space %s, decision %s", doc.Read["verdict"], doc.Space, doc.Decision)
	}
	if !strings.Contains(csv, "\nestimate_dedup,\n") || strings.Contains(csv, "\nsaved_bytes,") || strings.Contains(csv, "\nzfs_used,") {
		t.Errorf("CSV with a point:\n%s", csv)
	}
	if strings.Contains(html, "Verdict: .") || !strings.Contains(html, "no record was read") {
		t.Errorf("HTML verdict missing")
	}
	rep, _ = scanReport(t, []string{dir}, estimate.Plan{Fraction: 0.5, Seed: 1, Groups: true})
	rep.Partial = true
	head = rep.Headline()
	if v := head[len(head)-1]; !strings.HasPrefix(v, "Verdict (ESTIMATE, 50% read, partial): ") {
		t.Errorf("partial verdict %q", v)
	}
}

// TestReadScalesTheSavingsBreakdown: with --read the breakdown of the
// savings (JSON and CSV decision: holes, embedded records, compression)
// is the whole data's, the records read scaled by the fraction; found by a
// new user: 44 holes read reported as the holes' saving, for 813 in all.
func TestReadScalesTheSavingsBreakdown(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 22))
	const rs = 16 << 10
	for f := range 4 {
		var data []byte
		for i := range 200 {
			switch {
			case i%2 == 0:
				data = append(data, make([]byte, rs)...) // zeros, written
			case i%10 == 1:
				b := make([]byte, rs)
				copy(b, "tiny") // embedded (compresses below 112 bytes)
				data = append(data, b...)
			default:
				data = append(data, record(rng, rs)...)
			}
		}
		writeFile(t, filepath.Join(dir, fmt.Sprint(f)), data)
	}
	set := model.Settings{RecordSize: rs, Compression: "lz4", Sparse: model.SparseAlways}
	report := func(plan estimate.Plan) *report.Decision {
		rep, _ := scanReportWith(t, set, []string{dir}, plan)
		if rep.Decision == nil {
			t.Fatalf("no decision: %+v", rep.Counters)
		}
		return rep.Decision
	}
	truth := report(estimate.Plan{})
	if truth.HolesSaves != 400*rs || truth.EmbeddedSaves != 80*rs {
		t.Fatalf("full scan: holes %d, embedded %d; want %d and %d", truth.HolesSaves, truth.EmbeddedSaves, 400*rs, 80*rs)
	}
	var holes, emb []float64
	for s := range 8 {
		d := report(estimate.Plan{Fraction: 0.25, Seed: uint64(s + 1), Groups: true})
		holes = append(holes, float64(d.HolesSaves)/float64(truth.HolesSaves))
		emb = append(emb, float64(d.EmbeddedSaves)/float64(truth.EmbeddedSaves))
	}
	slices.Sort(holes)
	slices.Sort(emb)
	// 25% of 400 zero records: about 100 read, a standard deviation of
	// 8.7%; of 80 embedded ones, 20 read, 19%.
	if m := holes[4]; m < 0.85 || m > 1.15 {
		t.Errorf("holes' saving over the truth, sorted: %.3f; median %.3f, want within 15%%", holes, m)
	}
	if m := emb[4]; m < 0.7 || m > 1.3 {
		t.Errorf("embedded records' saving over the truth, sorted: %.3f; median %.3f, want within 30%%", emb, m)
	}
}

// TestReadEveryRecordIsExact: a plan that happens to read every record (a
// fraction near 1) gives the full scan's table, with ranges of width 0
// (found by a new user: --read 99.9999% of 3600 records, all read,
// printed a refcnt-8 row the data has not and ranges 4% wide); and the
// USED and ALLOC ranges never fall below the file data's blocks.
func TestReadEveryRecordIsExact(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(31, 32))
	for i := range 6 {
		var data []byte
		for j := range 40 {
			if j%2 == 0 {
				data = append(data, record(rand.New(rand.NewPCG(uint64(j), 0)), 16<<10)...) // shared
			} else {
				data = append(data, record(rng, 16<<10)...)
			}
		}
		writeFile(t, filepath.Join(dir, fmt.Sprint(i)), data)
	}
	full, _ := scanReport(t, []string{dir}, estimate.Plan{})
	rep, _ := scanReport(t, []string{dir}, estimate.Plan{Fraction: 1 - 1e-9, Seed: 1, Groups: true})
	// Every record read: the report is the full scan's, no range (found
	// by a new user: --read 99.9999999% printed USED 2.12 to 2.15 MiB).
	if rep.Read != nil || rep.Estimate || rep.Counters.Unread != 0 || rep.Counters.Population != full.Counters.Records-full.Counters.SourceHoles {
		t.Fatalf("read %+v, estimate %v, population %d, unread %d", rep.Read, rep.Estimate, rep.Counters.Population, rep.Counters.Unread)
	}
	ft, _, _, _ := writeReport(t, full)
	rt, _, _, _ := writeReport(t, rep)
	if !reflect.DeepEqual(rep.Histogram, full.Histogram) || !reflect.DeepEqual(rep.Space, full.Space) {
		t.Errorf("every record read:\n%s\nthe full scan:\n%s", rt, ft)
	}
	// But for the table's memory: a group plan's table holds a content
	// once per group it was read in.
	sameOutside(t, "every record read", ft, rt)

	// No record at all (empty files): nothing to estimate, the full
	// scan's report (found by a new user: JSON dedup 0, text "unknown
	// (95%: 0.00 to 0.00)").
	empty := t.TempDir()
	for i := range 3 {
		writeFile(t, filepath.Join(empty, fmt.Sprint(i)), nil)
	}
	full, _ = scanReport(t, []string{empty}, estimate.Plan{})
	rep, _ = scanReport(t, []string{empty}, estimate.Plan{Fraction: 0.05, Seed: 1, Groups: true})
	if rep.Read != nil || rep.Estimate {
		t.Fatalf("empty files: read %+v, estimate %v", rep.Read, rep.Estimate)
	}
	ft, fj, _, _ := writeReport(t, full)
	rt, rj, _, _ := writeReport(t, rep)
	sameOutside(t, "empty files, text", ft, rt)
	sameOutside(t, "empty files, JSON", fj, rj)
}

// TestReadPrefetchesRecordsRead: --read asks the system to start reading
// each record it will read (POSIX_FADV_WILLNEED, source.File.Prefetch) as
// its chunk is queued, before a worker reads it, and no record it leaves
// unread: the disk then gets the reads of every chunk queued at once
// (on scripts/bench-read.sh's estate at 1%, the workers' reading went from
// 0.85 s to 0.28 s).
func TestReadPrefetchesRecordsRead(t *testing.T) {
	const willneed = 3 // POSIX_FADV_WILLNEED on Linux and FreeBSD, and ddtsim's value elsewhere
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	const size = 3000<<10 + 100 // 188 records of 16K, the last of 100 bytes
	writeFile(t, filepath.Join(dir, "big"), record(rng, size))
	for i := range 40 {
		writeFile(t, filepath.Join(dir, fmt.Sprint("small", i)), record(rng, 5000))
	}
	type span struct{ off, n uint64 }
	var mu sync.Mutex
	var asked, read []span // in order
	faults := &source.Faults{
		Fadvise: func(fd, advice int, off, n uint64) {
			if advice == willneed {
				mu.Lock()
				asked = append(asked, span{off, n})
				mu.Unlock()
			}
		},
		Read: func(path string, off uint64, n int) source.Fault {
			mu.Lock()
			if len(asked) == 0 || !slices.ContainsFunc(asked, func(s span) bool { return s.off == off }) {
				t.Errorf("%s: read at %d before it was prefetched", path, off)
			}
			read = append(read, span{off, uint64(n)})
			mu.Unlock()
			return source.Fault{}
		},
	}
	plan := estimate.Plan{Fraction: 0.2, Seed: 3, Groups: true}
	set := model.Settings{RecordSize: 16 << 10, Compression: "lz4"}
	res, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{Read: plan, Jobs: 2, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	c := res.Analysis.Counters
	if n := c.Population - c.Unread; n < 20 || uint64(len(read)) != n {
		t.Fatalf("%d reads for %d records read", len(read), n)
	}
	// The same records (offsets), each prefetched once, as many bytes as
	// the file holds there: a record's LSIZE is read, up to the file's end.
	offs := func(l []span) []uint64 {
		o := make([]uint64, len(l))
		for i, s := range l {
			o[i] = s.off
		}
		slices.Sort(o)
		return o
	}
	if a, r := offs(asked), offs(read); !slices.Equal(a, r) {
		t.Errorf("prefetched at %v, read at %v", a, r)
	}
	for _, s := range asked {
		if want := min(16<<10, uint64(size)-s.off); s.n != want && !(s.off == 0 && s.n == 5000) {
			t.Errorf("prefetched %d bytes at %d, want %d", s.n, s.off, want)
		}
	}
}

// A partial --read result says so in its decision text too (JSON, CSV), as
// its verdict line does (found by a new user: "(ESTIMATE, 50% read,
// partial)" in the text, no "partial" in the JSON's decision.text): here
// two shards of three merged.
func TestReadPartialDecision(t *testing.T) {
	t.Parallel()
	sets := harnessSets(t, t.TempDir(), 64)
	set := model.Settings{RecordSize: 16 << 10}
	plan := estimate.Plan{Fraction: 0.5, Seed: 2, Groups: true}
	dir := t.TempDir()
	var files []string
	for i := range uint32(2) {
		f := filepath.Join(dir, fmt.Sprint(i))
		res, err := scan.Run(context.Background(), set, sets["clones"], scan.Options{Read: plan, Shard: source.Shard{Index: i, Count: 3}, Save: f})
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		files = append(files, f)
	}
	rep, err := mergeShards(t, files).Report(0)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Partial || rep.Decision == nil || !strings.HasPrefix(rep.Decision.Text, "Decision (ESTIMATE from a 50% read, partial, 95% range): ") {
		t.Errorf("partial %v, decision %+v", rep.Partial, rep.Decision)
	}
}

// A group plan's sample gathered from a table spilled to disk is the one
// gathered in memory: the table gives each content's groups in a row
// either way (ddt.Table.RangeGrouped), which GroupSample needs.
func TestReadGroupsSpilled(t *testing.T) {
	t.Parallel()
	sets := harnessSets(t, t.TempDir(), 4096)
	set := model.Settings{RecordSize: 1 << 10}
	plan := estimate.Plan{Fraction: 0.4, Seed: 5, Groups: true}
	var texts [2]string
	var inMemory *report.Report
	for i, mem := range []int64{0, 128 << 10} {
		opts := scan.Options{Read: plan, Jobs: 2}
		if mem != 0 {
			opts.Mem, opts.TmpDir = mem, t.TempDir()
		}
		res, err := scan.Run(context.Background(), set, sets["mix"], opts)
		if err != nil {
			t.Fatal(err)
		}
		if runs := res.Analysis.Counters.SpillRuns; (mem != 0) != (runs > 0) {
			t.Fatalf("mem %d: %d spill runs", mem, runs)
		}
		rep, err := res.Report(0)
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		text, _, _, _ := writeReport(t, rep)
		texts[i] = regexp.MustCompile(`(?m)^ +memory .*$`).ReplaceAllString(text, "")
		if mem == 0 {
			inMemory = rep
		}
	}
	if texts[0] != texts[1] {
		t.Errorf("spilled:\n%s\nin memory:\n%s", texts[1], texts[0])
	}
	// Three shards merged under --mem: the merge's groups spill too (in
	// tmp, left empty by Close), and its estimate is the one scan's.
	dir, tmp := t.TempDir(), t.TempDir()
	var files []string
	for i := range uint32(3) {
		f := filepath.Join(dir, fmt.Sprint(i))
		res, err := scan.Run(context.Background(), set, sets["mix"], scan.Options{Read: plan, Jobs: 2, Shard: source.Shard{Index: i, Count: 3}, Save: f})
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		files = append(files, f)
	}
	m, err := saved.Merge(files, saved.MergeOptions{Mem: 1, TmpDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := scan.FromMerged(m)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := merged.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	if runs, _ := filepath.Glob(filepath.Join(tmp, "*")); len(runs) == 0 {
		t.Errorf("the merge spilled no groups")
	}
	merged.Close()
	if runs, _ := filepath.Glob(filepath.Join(tmp, "*")); len(runs) != 0 {
		t.Errorf("runs left after Close: %v", runs)
	}
	if !reflect.DeepEqual(rep.Read.Estimate, inMemory.Read.Estimate) || rep.Zdb != inMemory.Zdb {
		t.Errorf("estimate of the shards merged under --mem %+v, of one scan in memory %+v", rep.Read.Estimate, inMemory.Read.Estimate)
	}
}

// The JSON's ranges of counts and bytes are whole numbers, rounded
// outward (found by a new user: "low": 368164945.5880391 bytes); the
// ratios' are not rounded.
func TestReadJSONWholeBytes(t *testing.T) {
	t.Parallel()
	sets := harnessSets(t, t.TempDir(), 256)
	for seed := range uint64(4) {
		rep, _ := scanReport(t, sets["mix"], estimate.Plan{Fraction: 0.15, Seed: seed + 1, Groups: true})
		_, js, _, _ := writeReport(t, rep)
		var doc struct {
			Read map[string]json.RawMessage `json:"read_estimate"`
		}
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatal(err)
		}
		fractional := 0
		for name, raw := range doc.Read {
			var iv ddt.Interval
			if json.Unmarshal(raw, &iv) != nil || iv == (ddt.Interval{}) {
				continue // not a range
			}
			switch name {
			case "dedup", "compress", "combined":
				if iv.Low != math.Trunc(iv.Low) || iv.High != math.Trunc(iv.High) {
					fractional++
				}
				continue
			}
			for _, v := range []float64{iv.Value, iv.Low, iv.High} {
				if v != math.Trunc(v) {
					t.Errorf("seed %d: %s %+v: not whole", seed+1, name, iv)
				}
			}
		}
		if len(doc.Read) < 10 || fractional == 0 {
			t.Errorf("seed %d: %d figures, %d ratios' ranges fractional: not the estimate's JSON?", seed+1, len(doc.Read), fractional)
		}
	}
}

// TestReadStrataPlaceEveryRecord: a group plan's scan counts, per size,
// the files and their records left holes, and the files of one record
// per LSIZE, so that the strata (estimate.Strata) place every record of
// the population: sparse images of one size (their holes at the same
// places), files of one size, a file of a size of its own, small files.
func TestReadStrataPlaceEveryRecord(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(4, 2))
	const rs = 16 << 10
	for i := range 4 {
		p := filepath.Join(dir, "img", fmt.Sprint(i))
		writeFile(t, p, record(rng, 256<<10))
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(record(rng, 512<<10), 3<<20/2); err != nil {
			t.Fatal(err)
		}
		f.Close()
		testkit.NeedSparse(t, p)
	}
	for i := range 3 {
		writeFile(t, filepath.Join(dir, "same", fmt.Sprint(i)), record(rng, 1<<20))
	}
	writeFile(t, filepath.Join(dir, "own"), record(rng, 700<<10))
	for i, n := range []int{1000, 3000, 9000, 16 << 10, 700} {
		writeFile(t, filepath.Join(dir, "small", fmt.Sprint(i)), record(rng, n))
	}
	set := model.Settings{RecordSize: rs}
	plan := estimate.Plan{Fraction: 0.05, Seed: 7, Groups: true}
	res, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{Read: plan, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	c := res.Analysis.Counters
	// The images' records in the hole: 2M, of which 256K and 512K data.
	if got, want := c.SizeHoles[2<<20], uint64(4*(2<<20-(256<<10)-(512<<10))/rs); got != want {
		t.Errorf("records in holes of the 2M images: %d, want %d (%v)", got, want, c.SizeHoles)
	}
	if want := map[uint64]uint64{1024: 2, 3072: 1, 9216: 1, 16 << 10: 1}; !maps.Equal(c.OneRecordSizes, want) {
		t.Errorf("files of one record per LSIZE: %v, want %v", c.OneRecordSizes, want)
	}
	st := c.Strata(plan, func(size uint64) (uint32, uint64) { return zio.FileRecords(size, rs) }, res.Policy.DSize)
	if st == nil {
		t.Fatalf("no strata: the counts do not place every record (%+v)", c)
	}
	var recs, ls uint64
	caps := map[uint64]bool{}
	for _, s := range st.List {
		recs += s.Records
		ls += s.LSize
		caps[s.Cap] = true
	}
	if recs != c.Population || ls != c.DataLSize || !caps[1] || !caps[4] || len(caps) != 2 {
		t.Errorf("strata of %d records, %d bytes, capacities %v; want %d records, %d bytes, capacities 1 and 4 (3 and 4 files of a size)", recs, ls, caps, c.Population, c.DataLSize)
	}
}

// TestReadOneDuplicate: data with a single duplicated block, which a
// sample may miss. The DDT then has a second object (the duplicate
// class's), whose blocks the ranges built on the table must allow for:
// before, DDT RAM's range held only tables of all-unique entries (or of
// the classes split in fixed shares) and missed the full scan's in 10 of
// 10 seeds at 5% and 3 of 10 at 90% (found by a new user); likewise
// USED with dedup under --release 2.2.7, by the duplicate object's
// blocks on disk.
func TestReadOneDuplicate(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 1))
	const rs = 16 << 10
	shared := make([]byte, rs)
	for i := range shared {
		shared[i] = byte(rng.Uint32())
	}
	for i := range 40 {
		d := make([]byte, (i+3)*rs)
		for j := range d {
			d[j] = byte(rng.Uint32())
		}
		if i == 5 || i == 17 {
			copy(d[rs:], shared)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprint(i)), d)
	}
	nothing := 0 // runs that read no record: the ranges of all that may be
	for _, release := range []string{"", "2.2.7"} {
		set := model.Settings{RecordSize: rs, Release: release}
		truth, _ := scanReportWith(t, set, []string{dir}, estimate.Plan{})
		if truth.DDT == nil || truth.Counters.UniqueBlocks+1 != truth.Counters.Stored {
			t.Fatalf("the full scan: %d blocks, %d entries; want one duplicate", truth.Counters.Stored, truth.Counters.UniqueBlocks)
		}
		for _, frac := range []float64{0.002, 0.05, 0.3, 0.9} {
			for seed := range uint64(10) {
				rep, _ := scanReportWith(t, set, []string{dir}, estimate.Plan{Fraction: frac, Seed: seed + 1, Groups: true})
				if rep.Read == nil {
					continue // every record read: the full scan's report
				}
				if rep.Read.Read == 0 {
					nothing++
				}
				for _, f := range figures {
					want, _ := f.get(truth)
					_, iv := f.get(rep)
					if !(iv.Low <= want*(1+1e-9)+1e-9 && want <= iv.High*(1+1e-9)+1e-9) {
						t.Errorf("release %q, %g%%, seed %d: %s %.0f outside its range [%.0f, %.0f]", release, 100*frac, seed+1, f.name, want, iv.Low, iv.High)
					}
				}
			}
		}
	}
	if nothing == 0 {
		t.Error("no run read nothing: the case of a range of all that may be is not tested")
	}
}

// TestReadFewGroupsSaysSo: a group plan whose sample holds few groups
// says that its ranges are wide for it and names --read-by records (found
// by a new user: 300 files of 1 MiB, 8 groups, compression 1.00 to 256 at
// 5%); one of many groups does not.
func TestReadFewGroupsSaysSo(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range 40 {
		writeFile(t, filepath.Join(dir, "same", fmt.Sprint(i)), record(rng, 8<<14)) // 8 groups
	}
	sets := harnessSets(t, t.TempDir(), 2048)
	for _, c := range []struct {
		paths []string
		few   bool
	}{{[]string{filepath.Join(dir, "same")}, true}, {sets["small"], false}} {
		rep, _ := scanReport(t, c.paths, estimate.Plan{Fraction: 0.3, Seed: 1, Groups: true})
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "too few for narrow ranges; --read-by records reads single records"); got != c.few ||
			rep.Read == nil || c.few != (rep.Read.GroupsRead < report.FewGroups) {
			t.Errorf("%v: says few groups %v, want %v (%d groups read):\n%s", c.paths, got, c.few, rep.Read.GroupsRead, b.String())
		}
	}
}
