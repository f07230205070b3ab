package report

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"github.com/ddtsim/ddtsim/estimate"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// outputs renders s as text, JSON (decoded), CSV summary fields and HTML.
type outputs struct {
	text, html string
	json       map[string]any
	csv        map[string]string
}

func render(t *testing.T, s *Report) outputs {
	t.Helper()
	var o outputs
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	o.text = b.String()
	b.Reset()
	if err := s.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	o.html = b.String()
	b.Reset()
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b.String()), &o.json); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := s.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	tables := strings.Split(b.String(), "\n\n")
	rows, err := csv.NewReader(strings.NewReader(tables[1])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	o.csv = map[string]string{}
	for _, r := range rows[1:] {
		o.csv[r[0]] = r[1]
	}
	return o
}

// sampledScan scans paths at 1/n and turns the report into estimates, as
// the command does.
func sampledScan(t *testing.T, p *zio.Policy, n uint64, paths ...string) *Report {
	t.Helper()
	res, err := analyzer.Run(context.Background(), paths, analyzer.Options{Policy: p, Sample: n})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(p, 12, model.SparseAuto, paths, res)
	if err != nil {
		t.Fatal(err)
	}
	est := ddt.EstimateSample(func(f func(ddt.Entry) bool) {
		res.Table.Range(func(_ ddt.Key, e ddt.Entry) bool { return f(e) })
	}, n)
	if err := s.ApplySample(est, true); err != nil {
		t.Fatal(err)
	}
	s.EstimateDDT(p, 1<<30)
	return s
}

// An interrupted scan's savings are figured over the bytes it covered
// (scanned_bytes), not over every file's size: text, CSV and HTML. A
// complete scan covers every byte, and says "file data" as before.
func TestSavedOverScannedBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Files of several 8 MiB chunks: cancelled after the first chunk is
	// done, the scan has covered part of a file it knows the size of,
	// whatever the walker reached by then.
	for i, name := range []string{"a", "b"} {
		testkit.Write(t, filepath.Join(dir, name), testkit.Rand(int64(i), 20<<20))
	}
	p := testkit.Policy(t, zio.LZ4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	res, err := analyzer.Run(ctx, []string{dir}, analyzer.Options{Policy: p, Jobs: 1,
		Done: func(analyzer.FileInfo, uint64, uint64) { once.Do(cancel) }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("not interrupted: %v", err)
	}
	c := res.Counters
	if c.LogicalBytes < 20<<20 || c.ScannedBytes == 0 || c.ScannedBytes >= c.LogicalBytes {
		t.Fatalf("counters %+v", c)
	}
	s, err := New(p, 12, model.SparseAuto, []string{dir}, res)
	if err != nil {
		t.Fatal(err)
	}
	s.Partial = true
	saved, of, ok := s.Saved()
	if !ok || of != c.ScannedBytes || saved != int64(c.ScannedBytes)-int64(s.Total.Allocated.DSize) {
		t.Errorf("Saved() = %d, %d, %v", saved, of, ok)
	}
	o := render(t, s)
	want := "of the " + nicenum.IEC(c.ScannedBytes) + " of file data covered ("
	if !strings.Contains(o.text, want) || strings.Contains(o.text, "of the "+nicenum.IEC(c.LogicalBytes)+" of file data (") ||
		!strings.Contains(o.text, "  covered      "+nicenum.IEC(c.ScannedBytes)) {
		t.Errorf("text does not figure the savings over the %d bytes covered (%q):\n%s", c.ScannedBytes, want, o.text)
	}
	if o.csv["scanned_bytes"] != jsonNumber(c.ScannedBytes) {
		t.Errorf("CSV scanned_bytes %q, want %d", o.csv["scanned_bytes"], c.ScannedBytes)
	}
	if o.csv["saved_bytes"] != jsonNumber(uint64(saved)) {
		t.Errorf("CSV saved_bytes %q, want %d", o.csv["saved_bytes"], saved)
	}
	if counters := o.json["counters"].(map[string]any); counters["scanned_bytes"] != float64(c.ScannedBytes) || counters["logical_bytes"] != float64(c.LogicalBytes) {
		t.Errorf("JSON counters %v", counters)
	}
	if !strings.Contains(o.html, "<span>file data covered</span><b>"+nicenum.IEC(c.ScannedBytes)+"</b><small>of "+nicenum.IEC(c.LogicalBytes)+"</small>") {
		t.Errorf("HTML file data card:\n%s", cards(o.html))
	}

	// Complete: the same bytes, the usual wording.
	res, err = analyzer.Run(context.Background(), []string{dir}, analyzer.Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	s, err = New(p, 12, model.SparseAuto, []string{dir}, res)
	if err != nil {
		t.Fatal(err)
	}
	o = render(t, s)
	if res.Counters.ScannedBytes != res.Counters.LogicalBytes || !strings.Contains(o.text, "of the 40 MiB of file data (") ||
		strings.Contains(o.text, "covered") || !strings.Contains(o.html, "<span>file data</span><b>40 MiB</b>") {
		t.Errorf("complete scan: counters %+v\n%s", res.Counters, o.text)
	}
}

func jsonNumber(v uint64) string { b, _ := json.Marshal(v); return string(b) }

// cards is the HTML's headline cards, for messages.
func cards(html string) string {
	_, after, _ := strings.Cut(html, `<div class="cards">`)
	before, _, _ := strings.Cut(after, "</div>\n\n")
	return before
}

// A sample that kept no content says so and estimates nothing: no ratios,
// intervals, sizes or "saved" in the text, null ratios and intervals in
// JSON, none in CSV, dashes in the HTML cards.
func TestNothingSampled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "f"), testkit.Rand(5, 3<<20))
	s := sampledScan(t, testkit.Policy(t, zio.LZ4), 1<<20, dir)
	if s.Sample.Sampled != 0 || s.Counters.Unsampled == 0 {
		t.Fatalf("sample %+v, counters %+v: the test needs a sample that kept nothing", s.Sample, s.Counters)
	}
	o := render(t, s)
	if !strings.Contains(o.text, "no content fell in the 1/1048576 sample: nothing can be estimated; use a smaller N") {
		t.Errorf("text does not say nothing was sampled:\n%s", o.text)
	}
	for _, bad := range []string{"saved", "dedup        ", "compress     ", "95%", "on disk", "raw capacity", "DDT   ", "100.0%"} {
		if strings.Contains(o.text, bad) {
			t.Errorf("text shows %q although nothing can be estimated:\n%s", bad, o.text)
		}
	}
	sample := o.json["sample"].(map[string]any)
	if o.json["ratios"] != nil || sample["sampled"] != 0.0 || sample["dedup"] != nil || sample["compress"] != nil || sample["reliable"] != false {
		t.Errorf("JSON ratios %v, sample %v", o.json["ratios"], sample)
	}
	if _, ok := o.json["ddt_size"]; ok {
		t.Errorf("JSON ddt_size %v: nothing to estimate it from", o.json["ddt_size"])
	}
	for _, k := range []string{"dedup_ratio", "sample_dedup", "saved_bytes", "raw_allocated"} {
		if v, ok := o.csv[k]; ok {
			t.Errorf("CSV %s = %s although nothing can be estimated", k, v)
		}
	}
	if o.csv["sample_sampled"] != "0" || o.csv["sample_n"] != "1048576" || o.csv["unique_blocks_sampled"] != "0" {
		t.Errorf("CSV %v", o.csv)
	}
	if strings.Contains(o.html, "card good") || strings.Contains(o.html, "100.0%") || !strings.Contains(o.html, "No content fell in the 1/1048576 sample") {
		t.Errorf("HTML cards:\n%s", cards(o.html))
	}
	if n := s.EstimateNote(); !strings.Contains(n, "no content fell in the 1/1048576 sample") {
		t.Errorf("EstimateNote %q", n)
	}
}

// A sample with few contents gives intervals that may be 0 wide; it is
// never shown without the warning that they are not reliable, and
// every output marks the figures as estimates: JSON reliable false, CSV
// sample fields and sampled counters, HTML cards, the --zdb note.
func TestFewSampledMarkedEstimate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "f"), testkit.Rand(6, 8<<20))
	p := testkit.Policy(t, zio.LZ4)
	p.RecordSize = 4096
	s := sampledScan(t, p, 64, dir)
	e := s.Sample
	if e.Sampled == 0 || e.Reliable {
		t.Fatalf("sample %+v: the test needs a few contents", e)
	}
	o := render(t, s)
	if !strings.Contains(o.text, "WARNING      only ") || !strings.Contains(o.text, "not reliable") {
		t.Errorf("text has no warning:\n%s", o.text)
	}
	if sample := o.json["sample"].(map[string]any); sample["reliable"] != false || sample["sampled"] != float64(e.Sampled) {
		t.Errorf("JSON sample %v", sample)
	}
	for k, want := range map[string]string{"sample_n": "64", "sample_reliable": "false", "unique_blocks_sampled": jsonNumber(e.Sampled),
		"sample_dedup": "1", "sample_dedup_low": "1", "sample_dedup_high": "1"} {
		if o.csv[k] != want {
			t.Errorf("CSV %s = %q, want %q", k, o.csv[k], want)
		}
	}
	for _, k := range []string{"sample_compress", "sample_compress_low", "sample_compress_high", "sample_entries_low", "sample_allocated_dsize_high"} {
		if o.csv[k] == "" {
			t.Errorf("CSV has no %s", k)
		}
	}
	if _, ok := o.csv["unique_blocks"]; ok {
		t.Errorf("CSV labels the sampled count unique_blocks")
	}
	if !strings.Contains(o.html, "<small>estimated, 1/64 sample</small>") || !strings.Contains(o.html, "<small>95%: 1.00 to 1.00</small>") ||
		!strings.Contains(o.html, "not reliable") {
		t.Errorf("HTML does not mark the estimates:\n%s", cards(o.html))
	}
	if n := s.EstimateNote(); !strings.Contains(n, "estimate from a 1/64 sample") || !strings.Contains(n, "not reliable") || strings.Contains(n, "\n") {
		t.Errorf("EstimateNote %q", n)
	}
	// An exact scan has no note.
	res, err := analyzer.Run(context.Background(), []string{dir}, analyzer.Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := New(p, 12, model.SparseAuto, []string{dir}, res)
	if n := exact.EstimateNote(); n != "" {
		t.Errorf("exact scan: EstimateNote %q", n)
	}
	if o := render(t, exact); strings.Contains(o.html, "estimated") || o.csv["unique_blocks"] == "" {
		t.Errorf("exact scan marked as an estimate")
	}
}

// The HTML "saved" card is green only for a real saving: a tiny file with
// copies=3 takes more on disk than its bytes.
func TestHTMLSavedCardClass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "tiny"), testkit.Rand(7, 1000))
	testkit.Write(t, filepath.Join(dir, "big"), make([]byte, 1<<20))
	for _, c := range []struct {
		copies int
		path   string
		class  string
	}{
		{3, filepath.Join(dir, "tiny"), `<div class="card warn"><span>saved</span><b>-1128.8%</b>`},
		{1, filepath.Join(dir, "big"), `<div class="card good"><span>saved</span><b>100.0%</b>`},
	} {
		p := testkit.Policy(t, zio.LZ4)
		p.Copies = c.copies
		res, err := analyzer.Run(context.Background(), []string{c.path}, analyzer.Options{Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := New(p, 12, model.SparseAuto, []string{c.path}, res)
		if o := render(t, s); !strings.Contains(o.html, c.class) {
			t.Errorf("copies=%d: want %s in\n%s", c.copies, c.class, cards(o.html))
		}
	}
}

// The CSV's sample estimates of counts and bytes (entries, allocated
// DSIZE) are whole numbers with their intervals, as every count in the
// CSV; the ratios stay decimals.
func TestCSVSampleCountsAreIntegers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "f"), testkit.Rand(8, 1<<20))
	s := sampledScan(t, testkit.Policy(t, zio.LZ4), 1, dir)
	s.Sample = &ddt.SampleEstimate{N: 4, Sampled: 400, Reliable: true,
		Entries:   ddt.Interval{Value: 1600, Low: 1512.37, High: 1687.5},
		Dedup:     ddt.Interval{Value: 1.25, Low: 1.125, High: 1.375},
		Compress:  ddt.Interval{Value: 1.5, Low: 1.25, High: 1.75},
		Combined:  ddt.Interval{Value: 1.875, Low: 1.5, High: 2.25},
		Allocated: ddt.Interval{Value: 838860.8, Low: 700000.4, High: 977721.6}}
	o := render(t, s)
	for k, want := range map[string]string{
		"sample_entries": "1600", "sample_entries_low": "1512", "sample_entries_high": "1688",
		"sample_allocated_dsize": "838861", "sample_allocated_dsize_low": "700000", "sample_allocated_dsize_high": "977722",
		"sample_dedup": "1.25", "sample_dedup_low": "1.125", "sample_compress_high": "1.75", "sample_combined": "1.875",
	} {
		if o.csv[k] != want {
			t.Errorf("CSV %s = %q, want %q", k, o.csv[k], want)
		}
	}
}

// With --ram, the --read headline says the ARC verdict over the range of
// the table's size, at each end when they differ.
func TestReadARCText(t *testing.T) {
	t.Parallel()
	r := &ReadEstimate{DDTInCore: ddt.Interval{Value: 20 << 20, Low: 7 << 20, High: 62 << 20}, RAM: 64 << 20,
		ARCAtLow: ddtsize.VerdictFits, ARCAtHigh: ddtsize.VerdictNoFit}
	if got, want := r.arcText(), "; in 64 MiB of RAM: fits at one end only"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r.ARCAtHigh = ddtsize.VerdictFits
	if got, want := r.arcText(), "; in 64 MiB of RAM: fits in the ARC"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (&ReadEstimate{}).arcText(); got != "" {
		t.Errorf("without --ram: %q", got)
	}
	// The headline's RAM line fits TextWidth with the widest sizes and
	// every pair of verdicts (found by a new user: 107 columns).
	wide := uint64(1<<30 + 1<<29 + 12345)
	verdicts := []string{ddtsize.VerdictFits, ddtsize.VerdictTight, ddtsize.VerdictNoFit}
	for _, lo := range verdicts {
		for _, hi := range verdicts {
			s := &Report{Read: &ReadEstimate{DDTInCore: ddt.Interval{Value: float64(wide), Low: float64(wide), High: float64(wide)}, RAM: wide,
				ARCAtLow: lo, ARCAtHigh: hi, Verdict: "undecided"}}
			s.Read.Estimate = &estimate.Estimate{Fraction: 0.05}
			for _, l := range s.Headline() {
				if n := utf8.RuneCountInString(l); n > TextWidth {
					t.Errorf("%s, %s: %d columns: %q", lo, hi, n, l)
				}
			}
		}
	}
	r.ARCAtLow = ddtsize.VerdictTight
	if got, want := r.arcText(), "; in 64 MiB of RAM: fits, tightly at one end"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
