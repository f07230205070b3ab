package scan_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
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
	// each file's records rewritten between backups.
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
			writeFile(t, filepath.Join(dir, "backups", fmt.Sprint(b), fmt.Sprint(f)), bytes.Join(files[f], nil))
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

// used is zfs list USED (alloc: zpool list ALLOC) with or without dedup.
func used(r *report.Report, dedup, alloc bool) float64 {
	f := &r.Space.Figures
	if dedup {
		f = r.Space.Other
	}
	if alloc {
		return float64(f.Alloc)
	}
	return float64(f.Used)
}

func scanReport(t testing.TB, paths []string, plan estimate.Plan) (*report.Report, uint64) {
	t.Helper()
	set := model.Settings{RecordSize: 16 << 10}
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
	names := []string{"clones", "backups", "unique", "small", "mix", "golden"}
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
				rep, readBytes := scanReport(t, sets[name], estimate.Plan{Fraction: frac, Seed: uint64(s + 1)})
				readSum += float64(readBytes)
				for i, f := range figures {
					want, _ := f.get(truth)
					got, iv := f.get(rep)
					got = iv.Value
					if iv.Low <= want*(1+1e-9)+1e-9 && want <= iv.High*(1+1e-9)+1e-9 {
						cover[i]++
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

// TestReadMarksEstimates: a --read report says ESTIMATE in every format,
// the zdb -S text included, and its table holds only the records read.
func TestReadMarksEstimates(t *testing.T) {
	sets := harnessSets(t, t.TempDir(), 64)
	rep, _ := scanReport(t, sets["clones"], estimate.Plan{Fraction: 0.15, Seed: 3})
	var text, js, csv, html bytes.Buffer
	for _, w := range []struct {
		b  *bytes.Buffer
		fn func() error
	}{{&text, func() error { return rep.WriteText(&text) }}, {&js, func() error { return rep.WriteJSON(&js) }},
		{&csv, func() error { return rep.WriteCSV(&csv) }}, {&html, func() error { return rep.WriteHTML(&html) }}} {
		if err := w.fn(); err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"text": text.String(), "html": html.String(), "zdb": rep.Zdb} {
		if !strings.Contains(out, "ESTIMATE") {
			t.Errorf("%s output does not say ESTIMATE", name)
		}
	}
	if !strings.Contains(js.String(), `"read_estimate"`) || !strings.Contains(csv.String(), "estimate,true") {
		t.Errorf("JSON or CSV does not mark the estimate:\n%s", csv.String())
	}
	if !strings.HasPrefix(rep.Zdb, "ESTIMATE") {
		t.Errorf("zdb text not headed as an estimate: %.80q", rep.Zdb)
	}
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
	if !strings.Contains(text.String(), "  saved        about ") || strings.Contains(text.String(), "\n    by ") {
		t.Errorf("saved line not marked an estimate, or causes credited:\n%s", text.String())
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > report.TextWidth && !strings.Contains(rep.Zdb, l) {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	c := rep.Counters
	if c.Unread == 0 || c.Stored+c.Unread+c.Holes+c.Embedded != c.Records {
		t.Errorf("counters: %d records, %d unread, %d stored, %d holes", c.Records, c.Unread, c.Stored, c.Holes)
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
	}
	set := model.Settings{RecordSize: 16 << 10, Compression: "off", Sparse: model.SparseNever}
	report := func(plan estimate.Plan) *report.Report {
		res, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{Read: plan, Jobs: 2})
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
	truth := report(estimate.Plan{})
	if truth.Counters.ZeroBlocks == 0 {
		t.Fatalf("the full scan stored no zero blocks: %+v", truth.Counters)
	}
	for s := range 8 {
		rep := report(estimate.Plan{Fraction: 0.05, Seed: uint64(s + 1)})
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
