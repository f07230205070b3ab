package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/zfs/ddt"
)

const sampleDir = "../../testdata/sample"

// csvSections splits --csv output into its tables.
func csvSections(t *testing.T, out string) [][][]string {
	t.Helper()
	var tables [][][]string
	for _, sec := range strings.Split(strings.TrimSuffix(out, "\n"), "\n\n") {
		r := csv.NewReader(strings.NewReader(sec))
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("CSV does not parse: %v\n%s", err, sec)
		}
		tables = append(tables, recs)
	}
	return tables
}

func u64(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not a whole number", s)
	}
	return v
}

func statOf(t *testing.T, f []string) ddt.Stat {
	t.Helper()
	return ddt.Stat{Blocks: u64(t, f[0]), LSize: u64(t, f[1]), PSize: u64(t, f[2]), DSize: u64(t, f[3])}
}

// The CSV views carry the same numbers as the JSON, and the breakdown's
// parts add up to its total row and to the histogram's Total.
func TestCSVMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, by := range breakdown.Kinds {
		code, js, errs := runT("--json", "--by", by, sampleDir)
		if code != 0 {
			t.Fatalf("--json --by %s: exit %d: %s", by, code, errs)
		}
		var doc report.Report
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		json.Unmarshal([]byte(js), &raw)
		for _, k := range []string{"breakdown", "breakdown_by", "breakdown_total", "breakdown_rule", "zeros"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("--json --by %s: no %q", by, k)
			}
		}
		if doc.Breakdown == nil || doc.By != by || len(doc.Groups) == 0 {
			t.Fatalf("--json --by %s: no breakdown", by)
		}
		code, out, errs := runT("--csv", "--by", by, sampleDir)
		if code != 0 {
			t.Fatalf("--csv --by %s: exit %d: %s", by, code, errs)
		}
		tables := csvSections(t, out)
		if len(tables) != 3 {
			t.Fatalf("--csv --by %s: %d tables, want 3 (histogram, summary, breakdown)", by, len(tables))
		}
		hist, summary, bd := tables[0], tables[1], tables[2]
		if hist[0][0] != "refcnt" || summary[0][0] != "field" || bd[0][0] != "group" {
			t.Fatalf("headers %q, %q, %q", hist[0], summary[0], bd[0])
		}
		// Histogram rows, then Total.
		if len(hist) != len(doc.Histogram)+2 {
			t.Fatalf("histogram: %d rows, JSON has %d buckets", len(hist)-2, len(doc.Histogram))
		}
		for i, r := range doc.Histogram {
			row := hist[i+1]
			if u64(t, row[0]) != r.RefcntMin || statOf(t, row[1:5]) != r.Allocated || statOf(t, row[5:9]) != r.Referenced {
				t.Errorf("histogram row %q ≠ JSON %+v", row, r)
			}
		}
		if last := hist[len(hist)-1]; last[0] != "Total" || statOf(t, last[1:5]) != doc.Total.Allocated || statOf(t, last[5:9]) != doc.Total.Referenced {
			t.Errorf("Total row %q ≠ JSON %+v", last, doc.Total)
		}
		// Summary.
		fields := map[string]string{}
		for _, r := range summary[1:] {
			fields[r[0]] = r[1]
		}
		for k, want := range map[string]uint64{"files": doc.Counters.Files, "logical_bytes": doc.Counters.LogicalBytes,
			"holes": doc.Counters.Holes, "unique_blocks": doc.Counters.UniqueBlocks, "raw_allocated": doc.Raw.Allocated,
			"zero_hole_lsize": doc.Zeros.HoleLSize, "zero_hole_bytes": doc.Zeros.HoleBytes, "zero_saved": doc.Zeros.Saved} {
			if u64(t, fields[k]) != want {
				t.Errorf("summary %s = %s, JSON %d", k, fields[k], want)
			}
		}
		if d, _ := strconv.ParseFloat(fields["dedup_ratio"], 64); d != doc.Ratios.Dedup {
			t.Errorf("dedup_ratio %s, JSON %v", fields["dedup_ratio"], doc.Ratios.Dedup)
		}
		// Breakdown: one row per JSON group, then (total).
		if len(bd) != len(doc.Groups)+2 {
			t.Fatalf("breakdown: %d rows, JSON has %d groups", len(bd)-2, len(doc.Groups))
		}
		var sum [24]uint64
		for i, row := range bd[1:] {
			g := doc.Breakdown.Sum
			if i < len(doc.Groups) {
				g = doc.Groups[i]
			}
			want := []uint64{g.Files, g.LogicalBytes, g.Records, g.Holes, g.HoleLSize, g.ZeroBlocks, g.Embedded}
			for _, st := range []ddt.Stat{g.Referenced, g.Allocated, g.Unique, g.Shared} {
				want = append(want, st.Blocks, st.LSize, st.PSize, st.DSize)
			}
			if row[0] != g.Name || len(row) != len(want)+1 {
				t.Fatalf("breakdown row %q for group %q", row, g.Name)
			}
			for j, w := range want {
				v := u64(t, row[j+1])
				if v != w {
					t.Errorf("--by %s, %s, %s: CSV %d, JSON %d", by, g.Name, bd[0][j+1], v, w)
				}
				if i < len(doc.Groups) {
					sum[j] += v
				} else if j < 15 && sum[j] != v { // up to allocated_dsize, parts add up to the total row
					t.Errorf("--by %s, %s: the groups add up to %d, the total row says %d", by, bd[0][j+1], sum[j], v)
				}
			}
		}
		tot := bd[len(bd)-1]
		if tot[0] != breakdown.TotalName || statOf(t, tot[8:12]) != doc.Total.Referenced || statOf(t, tot[12:16]) != doc.Total.Allocated {
			t.Errorf("--by %s: total row %q ≠ histogram Total %+v", by, tot, doc.Total)
		}
	}
	// Without --by: two tables.
	code, out, _ := runT("--csv", sampleDir)
	if code != 0 || len(csvSections(t, out)) != 2 {
		t.Errorf("--csv without --by: exit %d, want 2 tables:\n%s", code, out)
	}
}

func TestBreakdownFlagErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "owner", sampleDir}, "accepted: dir, ext, size, file"},
		{[]string{"--by", "dir", "--sample", "1/4", sampleDir}, "--sample"},
		{[]string{"--csv", "--json", sampleDir}, "can't be used together"},
		{[]string{"compare", "--zdb-output", "x", "--by", "dir", sampleDir}, "belong to the scan command"},
	} {
		code, out, errs := runT(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %d bytes; want exit 2 saying %q", c.args, code, errs, len(out), c.want)
		}
	}
	// Checked before the scan (see TestHTMLUnwritableRefusedBeforeScan).
	code, out, errs := runT("--html", filepath.Join(t.TempDir(), "no", "such", "dir", "r.html"), sampleDir)
	if code != exitUsage || out != "" || !strings.Contains(errs, "cannot write there: "+testkit.NoParentText(t)) {
		t.Errorf("--html into a missing directory: exit %d, %q", code, errs)
	}
}

// htmlReport writes the sample's HTML report and returns its path and
// text.
func htmlReport(t *testing.T) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.html")
	code, out, errs := runT("--by", "dir", "--html", path, sampleDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, plain, _ := runT("--by", "dir", sampleDir)
	if withoutMemory(out) != withoutMemory(plain) { // peak RSS differs from run to run
		t.Errorf("--html changed standard output")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, string(b)
}

func TestHTMLReportSelfContained(t *testing.T) {
	t.Parallel()
	_, page := htmlReport(t)
	_, zdb, _ := runT("--zdb", sampleDir)
	lower := strings.ToLower(page)
	for _, bad := range []string{"http://", "https://", "<script", "src=", "url(", "@import", "<link"} {
		if strings.Contains(lower, bad) {
			t.Errorf("the page contains %q: it must load nothing", bad)
		}
	}
	for _, want := range []string{"<!DOCTYPE html>", "<svg", zdb, filepath.FromSlash("testdata/sample/docs-backup"), breakdown.TotalName, "largest remainder", "zeros: 4 holes"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// chromium finds a headless-capable Chromium, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (.ci/run installs it: apt-get install chromium)")
	return ""
}

// TestHTMLRendersInChromium renders the report in headless Chromium and
// requires a screenshot that is not blank: plenty of non-white pixels,
// several colours, and the chart's bars.
func TestHTMLRendersInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	path, _ := htmlReport(t)
	shot := filepath.Join(t.TempDir(), "shot.png")
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--window-size=1200,1600", "file://"+abs)
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	bounds := img.Bounds()
	colours := map[uint32]bool{}
	var ink, dark, bars, total int
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			total++
			if r < 240 || g < 240 || b < 240 {
				ink++
			}
			if max(r, g, b) < 200 { // text, bars, rules: not the page's light background
				dark++
			}
			colours[(r>>4)<<8|(g>>4)<<4|b>>4] = true
			// The allocated bars' colour, #1f5fa8.
			if near(r, 0x1f) && near(g, 0x5f) && near(b, 0xa8) {
				bars++
			}
		}
	}
	t.Logf("%dx%d: %d non-white pixels, %d dark ones, %d colours, %d bar pixels", bounds.Dx(), bounds.Dy(), ink, dark, len(colours), bars)
	if bounds.Dx() < 800 || bounds.Dy() < 800 {
		t.Errorf("screenshot %dx%d, want 1200x1600", bounds.Dx(), bounds.Dy())
	}
	if ink < total/10 || dark < total/100 {
		t.Errorf("only %d of %d pixels are not white, %d dark: blank page?", ink, total, dark)
	}
	if len(colours) < 8 {
		t.Errorf("only %d distinct colours", len(colours))
	}
	if bars < 1000 {
		t.Errorf("only %d pixels of the bars' colour: the SVG chart did not render", bars)
	}
}

func near(v, want uint32) bool { return v+6 >= want && v <= want+6 }

// The CSV summary carries the DDT size and the ARC verdict, as the JSON
// (found by a new user: --csv left them out).
func TestCSVHasDDT(t *testing.T) {
	t.Parallel()
	args := []string{"-o", "dedup=on", "--ram", "4G", sampleDir}
	_, js, _ := runT(append([]string{"--json"}, args...)...)
	var doc report.Report
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.DDT == nil || doc.DDT.ARC == nil {
		t.Fatalf("JSON: %v %+v", err, doc.DDT)
	}
	code, out, errs := runT(append([]string{"--csv"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	fields := map[string]string{}
	for _, r := range csvSections(t, out)[1][1:] {
		fields[r[0]] = r[1]
	}
	d := doc.DDT
	for k, want := range map[string]uint64{"ddt_entries": d.Entries, "ddt_unique": d.Unique, "ddt_duplicate": d.Duplicate,
		"ddt_on_disk": d.OnDisk, "ddt_in_core": d.InCore, "ddt_log_in_core": d.LogInCore, "arc_ram": d.ARC.RAM, "arc_limit": d.ARC.Limit} {
		if u64(t, fields[k]) != want {
			t.Errorf("%s = %q, JSON %d", k, fields[k], want)
		}
	}
	if fields["ddt_format"] != d.Format || fields["arc_verdict"] != d.ARC.Verdict {
		t.Errorf("format %q verdict %q, JSON %q %q", fields["ddt_format"], fields["arc_verdict"], d.Format, d.ARC.Verdict)
	}
}

// No block of the HTML report scrolls sideways (issue 29: the summary was
// a horizontally scrolling block), in headless Chromium at a laptop's
// width: a copy of the page, with a script added, lists every element
// wider than its box, and --dump-dom prints the list. The page also leads
// with the headline (space, RAM, verdict) before the histogram.
func TestHTMLNoHorizontalScroll(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	_, page := htmlReport(t)
	head, hist := strings.Index(page, "Space: without dedup USED "), strings.Index(page, "<h2>DDT histogram</h2>")
	if head < 0 || hist < 0 || head > hist || !strings.Contains(page[head:hist], "Verdict: ") {
		t.Errorf("the page does not lead with the headline")
	}
	probe := `<script>window.addEventListener("load",function(){var w=[];` +
		`document.querySelectorAll("pre,p,table,main").forEach(function(e){if(e.scrollWidth>e.clientWidth+1)w.push(e.tagName+"."+e.className+":"+e.scrollWidth+">"+e.clientWidth)});` +
		`if(document.documentElement.scrollWidth>window.innerWidth)w.push("page:"+document.documentElement.scrollWidth);` +
		`var o=document.createElement("div");o.id="overflow";o.textContent="["+w.join(" ")+"]";document.body.appendChild(o)})</script>`
	path := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(path, []byte(strings.Replace(page, "</body>", probe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--window-size=1100,900", "--virtual-time-budget=5000", "--dump-dom", "file://"+path)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`<div id="overflow">\[(.*?)\]</div>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the probe did not run:\n%.2000s", out)
	}
	if len(m[1]) > 0 {
		t.Errorf("blocks wider than their box (scrolling sideways): %s", m[1])
	}
}
