package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/space"
)

// WriteHTML writes the report as one self-contained HTML page: inline CSS,
// an inline SVG chart of the histogram (and of the breakdown), the zdb -S
// text, the summary and the breakdown table. It loads nothing from
// anywhere and needs no script.
func (s *Report) WriteHTML(w io.Writer) error {
	summary := s.summaryText()
	saved, of, savedOK := s.SavedNet()
	bdSaved, _, _ := s.Saved()
	v := htmlView{
		Report:       s,
		Title:        strings.Join(s.Paths, " "),
		Headline:     s.Headline(),
		Summary:      strings.TrimSpace(summary),
		HistSVG:      histogramSVG(s),
		Saved:        "-",
		SavedClass:   "card",
		LogicalLabel: "file data",
		Logical:      nicenum.IEC(of),
		NoDedup:      "-",
		HasDedup:     "-",
		Dedup:        "-",
		Compress:     "-",
	}
	if off, on := s.SpaceByDedup(); off != nil && on != nil {
		v.NoDedup, v.HasDedup = nicenum.IEC(off.Alloc), nicenum.IEC(on.Alloc)
	}
	if data := s.FileData(); of != data {
		// Interrupted, or files that could not be read: the figures are
		// for the bytes covered.
		v.LogicalLabel = "file data covered"
		v.LogicalNote = "of " + nicenum.IEC(data)
		if s.WalkUnfinished() {
			v.LogicalNote += " found so far"
		}
	}
	if s.Ratios != nil {
		v.Dedup = fmt.Sprintf("%.2f", s.Ratios.Dedup)
		v.Compress = fmt.Sprintf("%.2f", s.Ratios.Compress)
	}
	if savedOK {
		v.Saved = fmt.Sprintf("%.1f%%", 100*float64(saved)/float64(of))
		// Green only for a real saving: none, or a loss (copies, padding
		// on raidz), is shown as a warning.
		v.SavedClass = "card good"
		if saved <= 0 {
			v.SavedClass = "card warn"
		}
	}
	if e := s.Sample; e != nil {
		switch {
		case s.NothingSampled():
			v.SampleNote = fmt.Sprintf("No content fell in the 1/%d sample: nothing can be estimated; use a smaller N.", e.N)
		case e.Sampled > 0:
			v.Estimated = fmt.Sprintf("estimated, 1/%d sample", e.N)
			v.SampleNote = fmt.Sprintf("Estimated from a 1/%d sample of the contents (%d unique contents kept): the table and the figures are estimates, with 95%% intervals.", e.N, e.Sampled)
			if !e.Reliable {
				v.SampleNote += fmt.Sprintf(" Fewer than %d contents were sampled: the intervals are not reliable and the estimates may be far off; sample less (a smaller N) or scan without --sample.", ddt.MinReliableSample)
			}
			iv := func(i ddt.Interval) string { return fmt.Sprintf("95%%: %.2f to %.2f", i.Low, i.High) }
			v.DedupIv, v.CompressIv = iv(e.Dedup), iv(e.Compress)
		}
	}
	if s.Read != nil {
		v.Estimated, v.SampleNote = s.readHTML()
	}
	v.Space = spaceTable(s)
	if b := s.Breakdown; b != nil {
		v.BreakdownSVG = breakdownSVG(b)
		v.ZerosText = zerosText(b.Zeros, bdSaved)
		for _, g := range b.Groups {
			v.Rows = append(v.Rows, rowView(g, false))
		}
		v.Rows = append(v.Rows, rowView(b.Sum, true))
	}
	return htmlPage.Execute(w, v)
}

type htmlView struct {
	*Report
	Title, Summary             string
	Headline                   []string // Report.Headline
	LogicalLabel, LogicalNote  string
	Logical, NoDedup, HasDedup string
	Dedup, Compress, Saved     string
	SavedClass                 string // card, card good, card warn
	// A sampled scan: Estimated marks the cards that are estimates,
	// SampleNote says so above them, the …Iv are 95% intervals.
	Estimated, SampleNote string
	DedupIv, CompressIv   string
	HistSVG, BreakdownSVG template.HTML
	Rows                  []htmlRow
	ZerosText             string
	// Space is what zfs list and zpool list will show: nil without a
	// prediction.
	Space []htmlRow
}

// spaceTable returns the rows of the table "What zfs list and zpool list
// will show" (Scan.Space): a figure without dedup and with it, metadata
// once (the same either way); nil when there is no prediction or nothing
// could be estimated.
func spaceTable(s *Report) []htmlRow {
	off, on := s.SpaceByDedup()
	if off == nil && on == nil {
		return nil
	}
	b := func(v uint64) htmlCell { return htmlCell{nicenum.Format(v, true), fmt.Sprintf("%d bytes", v)} }
	x := func(r float64) htmlCell { return htmlCell{fmt.Sprintf("%.2fx", r), ""} }
	row := func(name string, cell func(*space.Figures) htmlCell) htmlRow {
		r := htmlRow{Name: name}
		for _, f := range []*space.Figures{off, on} {
			c := htmlCell{Text: "-"}
			if f != nil {
				c = cell(f)
			}
			r.Cells = append(r.Cells, c)
		}
		return r
	}
	return []htmlRow{
		row("USED (zfs list)", func(f *space.Figures) htmlCell { return b(f.Used) }),
		row("LUSED (zfs list)", func(f *space.Figures) htmlCell { return b(f.LUsed) }),
		row("compressratio (zfs list)", func(f *space.Figures) htmlCell { return x(f.CompressRatio) }),
		row("ALLOC (zpool list)", func(f *space.Figures) htmlCell { return b(f.Alloc) }),
		row("DEDUP (zpool list)", func(f *space.Figures) htmlCell { return x(f.Dedup) }),
		{Name: "metadata, one copy: indirect blocks, dnodes, directories", Cells: []htmlCell{b(s.Space.Metadata.ASize)}},
	}
}

type htmlCell struct{ Text, Exact string }

type htmlRow struct {
	Name  string
	Total bool
	Cells []htmlCell
}

func rowView(g breakdown.Group, total bool) htmlRow {
	n := func(v uint64) htmlCell { return htmlCell{fmt.Sprint(v), ""} }
	b := func(v uint64) htmlCell { return htmlCell{nicenum.Format(v, true), fmt.Sprintf("%d bytes", v)} }
	return htmlRow{Name: g.Name, Total: total, Cells: []htmlCell{
		n(g.Files), b(g.LogicalBytes), n(g.Holes), n(g.ZeroBlocks), n(g.Embedded),
		n(g.Referenced.Blocks), b(g.Referenced.DSize), b(g.Allocated.DSize), b(g.Unique.DSize), b(g.Shared.DSize),
	}}
}

// Chart colours: referenced (no dedup) light, allocated (with dedup) dark.
const (
	colourReferenced = "#9cc3e6"
	colourAllocated  = "#1f5fa8"
)

// histogramSVG draws referenced and allocated DSIZE per refcnt bucket.
func histogramSVG(s *Report) template.HTML {
	const (
		width, height = 1000, 280
		left, right   = 70, 20
		top, bottom   = 20, 46
	)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="DDT histogram: DSIZE per refcnt bucket">`, width, height, width, height)
	var maxV uint64
	for _, r := range s.Histogram {
		maxV = max(maxV, r.Referenced.DSize, r.Allocated.DSize)
	}
	plotH := float64(height - top - bottom)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfcfe" stroke="#d5dbe5"/>`, left, top, width-left-right, height-top-bottom)
	if maxV == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">no blocks stored</text></svg>`, width/2, height/2)
		return template.HTML(b.String())
	}
	step := tickStep(maxV)
	ticks := (maxV + step - 1) / step
	maxV = ticks * step
	for i := uint64(0); i <= ticks; i++ {
		y := float64(top) + plotH*(1-float64(i)/float64(ticks))
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e3e7ee"/>`, left, width-right, y, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, y+4, nicenum.Format(i*step, true))
	}
	slot := float64(width-left-right) / float64(len(s.Histogram))
	barW := min(slot*0.36, 60)
	for i, r := range s.Histogram {
		x := float64(left) + slot*float64(i) + slot/2
		for j, bar := range []struct {
			v      uint64
			colour string
			what   string
		}{{r.Referenced.DSize, colourReferenced, "referenced"}, {r.Allocated.DSize, colourAllocated, "allocated"}} {
			h := plotH * float64(bar.v) / float64(maxV)
			bx := x - barW + float64(j)*barW
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>refcnt %s: %s DSIZE %d bytes</title></rect>`,
				bx, float64(top)+plotH-h, barW-2, h, bar.colour, nicenum.Format(r.RefcntMin, false), bar.what, bar.v)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, x, height-bottom+16, nicenum.Format(r.RefcntMin, false))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">refcnt (references per unique block)</text>`, (width+left)/2, height-8)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// tickStep is a round axis step (1, 2, 2.5 or 5 times a power of ten, in
// the binary unit of v) giving 3 to 6 ticks up to v.
func tickStep(v uint64) uint64 {
	unit := uint64(1)
	for v/unit >= 1024 {
		unit *= 1024
	}
	want := float64(v) / float64(unit) / 4
	for p := 0.01; ; p *= 10 {
		for _, m := range []float64{1, 2, 2.5, 5} {
			if st := m * p; st >= want {
				return max(uint64(st*float64(unit)), 1)
			}
		}
	}
}

// maxChartGroups bounds the bars of the breakdown chart (the table lists
// every group).
const maxChartGroups = 30

// breakdownSVG draws referenced and allocated DSIZE per group.
func breakdownSVG(bd *Breakdown) template.HTML {
	groups := bd.Groups
	if len(groups) > maxChartGroups {
		groups = groups[:maxChartGroups]
	}
	const (
		width, label, rowH = 1000, 300, 34
		barMax             = width - label - 90
	)
	height := rowH*len(groups) + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="DSIZE per group">`, width, height, width, height)
	var maxV uint64
	for _, g := range groups {
		maxV = max(maxV, g.Referenced.DSize, g.Allocated.DSize)
	}
	for i, g := range groups {
		y := 5 + rowH*i
		name := g.Name
		if utf8.RuneCountInString(name) > 42 {
			r := []rune(name)
			name = "…" + string(r[len(r)-41:])
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, label-8, y+20, template.HTMLEscapeString(name))
		for j, bar := range []struct {
			v      uint64
			colour string
		}{{g.Referenced.DSize, colourReferenced}, {g.Allocated.DSize, colourAllocated}} {
			w := 0.0
			if maxV > 0 {
				w = float64(barMax) * float64(bar.v) / float64(maxV)
			}
			by := y + 3 + j*14
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="12" fill="%s"/>`, label, by, max(w, 1), bar.colour)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`, float64(label)+w+6, by+10, nicenum.Format(bar.v, true))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var htmlPage = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ddtsim: {{.Title}}</title>
<style>
body{margin:0;background:#eef1f5;color:#1d2330;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1060px;margin:0 auto;padding:22px 28px 36px;background:#fff;min-height:100vh;box-sizing:border-box}
h1{font-size:23px;margin:0 0 4px;color:#12345e}
h2{font-size:17px;margin:26px 0 10px;padding-bottom:4px;border-bottom:2px solid #dfe5ee;color:#12345e}
.model{color:#4a5262;margin:0 0 16px}
.decision{font-size:16px;background:#eef4fb;border:1px solid #b9cde6;padding:8px 12px;border-radius:6px;overflow-wrap:anywhere}
.decision.good{background:#e8f5ec;border-color:#9fd0b0}
.partial{background:#fff1d6;border:1px solid #e7b95a;padding:6px 10px;border-radius:6px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{flex:1 1 0;min-width:110px;border:1px solid #d8dfea;border-radius:8px;padding:8px 12px;background:#f7f9fc}
.card b{display:block;font-size:22px;color:#1f5fa8}
.card span{font-size:11px;color:#5d6677;text-transform:uppercase;letter-spacing:.05em}
.card.good b{color:#1d7a45}
.card.warn b{color:#b0451b}
.card small{display:block;font-size:11px;color:#5d6677}
pre{background:#f4f6f9;border:1px solid #dde2ea;border-radius:6px;padding:10px 12px;overflow-x:auto;font:13px/1.35 ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
pre.summary{white-space:pre-wrap;overflow-wrap:anywhere}
svg.chart{max-width:100%;height:auto;display:block}
svg text{font:12px system-ui,"DejaVu Sans",sans-serif;fill:#2b3240}
.legend{font-size:13px;color:#4a5262;margin:4px 0 8px}
.legend i{display:inline-block;width:12px;height:12px;margin:0 5px 0 14px;vertical-align:-1px;border-radius:2px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 7px;border-bottom:1px solid #e5e9f0;text-align:right;white-space:nowrap}
th{background:#e8eef7;color:#24344f;font-weight:600}
td:first-child,th:first-child{text-align:left;white-space:normal;word-break:break-all}
tr:nth-child(even) td{background:#fafbfd}
tr.total td{font-weight:600;border-top:2px solid #9aa9c0;background:#f0f4fa}
table.space{width:auto;min-width:60%}
table.space td:first-child{word-break:normal}
table.space td[colspan]{text-align:center}
.note{color:#4a5262;font-size:13px}
footer{margin-top:28px;color:#7a8291;font-size:12px}
</style>
</head>
<body>
<main>
<h1>ddtsim: simulated ZFS dedup table</h1>
<p class="model">{{.Title}} &middot; OpenZFS {{.Release}}, {{.BlockSizeProperty}}, compression={{index .Properties "compression"}}, copies={{index .Properties "copies"}}, dedup={{index .Properties "dedup"}}, {{.Pool.Vdev}} (ashift {{.Pool.Ashift}}), sparse={{.Sparse}}{{if .Guest}}, images read as guest disks (--guest){{end}}</p>
<p class="decision{{with .Decision}}{{if .WorthIt}} good{{end}}{{end}}">{{range $i, $l := .Headline}}{{if $i}}<br>{{end}}{{$l}}{{end}}</p>
{{if .Partial}}<p class="partial">PARTIAL: {{range $i, $w := .PartialWhy}}{{if $i}} {{end}}{{$w}}.{{end}}{{if .WalkUnfinished}} The files and file data counted are those found so far: the walk had not finished.{{else if .WalkFinished}} The walk had finished: the files and file data counted are all of them.{{end}}</p>{{end}}
{{if .SampleNote}}<p class="partial">{{.SampleNote}}</p>{{end}}
{{with .ApproximateNote}}<p class="partial">Approximate: {{.}}.</p>{{end}}
<div class="cards">
<div class="card"><span>{{.LogicalLabel}}</span><b>{{.Logical}}</b>{{if .LogicalNote}}<small>{{.LogicalNote}}</small>{{end}}</div>
<div class="card"><span>ALLOC, no dedup</span><b>{{.NoDedup}}</b>{{if .Estimated}}<small>{{.Estimated}}</small>{{end}}</div>
<div class="card"><span>ALLOC, with dedup</span><b>{{.HasDedup}}</b>{{if .Estimated}}<small>{{.Estimated}}</small>{{end}}</div>
<div class="card"><span>dedup ratio</span><b>{{.Dedup}}</b>{{if .Estimated}}<small>{{.Estimated}}</small>{{end}}{{if .DedupIv}}<small>{{.DedupIv}}</small>{{end}}</div>
<div class="card"><span>compress ratio</span><b>{{.Compress}}</b>{{if .Estimated}}<small>{{.Estimated}}</small>{{end}}{{if .CompressIv}}<small>{{.CompressIv}}</small>{{end}}</div>
<div class="{{.SavedClass}}"><span>saved</span><b>{{.Saved}}</b>{{if .Estimated}}<small>{{.Estimated}}</small>{{end}}</div>
</div>

<h2>DDT histogram</h2>
<div class="legend">DSIZE per refcnt bucket:<i style="background:#9cc3e6"></i>referenced (without dedup)<i style="background:#1f5fa8"></i>allocated (with dedup)</div>
{{.HistSVG}}
<pre>{{.Zdb}}</pre>

<h2>Summary</h2>
<pre class="summary">{{.Summary}}</pre>
{{with .Space}}
<h2>What zfs list and zpool list will show</h2>
<table class="space">
<thead><tr><th>once copied into a new pool's root dataset</th><th>without dedup</th><th>with dedup</th></tr></thead>
<tbody>
{{range .}}<tr><td>{{.Name}}</td>{{$span := eq (len .Cells) 1}}{{range .Cells}}<td{{if .Exact}} title="{{.Exact}}"{{end}}{{if $span}} colspan="2"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
<p class="note">{{if $.Estimated}}Estimated from the sample, as the figures above. {{end}}zdb -S, and the figures above, count level-0 file data only; zfs list and zpool list also count metadata (indirect blocks, dnodes, directories) and the pool's own (the MOS, and the DDT with dedup). Dedup never lowers USED, as each dataset is charged in full for the blocks it references; ALLOC shows the saving.</p>
{{end}}
{{if .Breakdown}}
<h2>Breakdown by {{.Breakdown.Basis}}</h2>
<div class="legend">DSIZE per group:<i style="background:#9cc3e6"></i>without dedup<i style="background:#1f5fa8"></i>with dedup (attributed)</div>
{{.BreakdownSVG}}
<table>
<thead><tr><th>group</th><th>files</th><th>logical</th><th>holes</th><th>zero blocks</th><th>embedded</th><th>blocks</th><th>without dedup</th><th>with dedup</th><th>only here</th><th>shared</th></tr></thead>
<tbody>
{{range .Rows}}<tr{{if .Total}} class="total"{{end}}><td>{{.Name}}</td>{{range .Cells}}<td{{if .Exact}} title="{{.Exact}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
<p class="note">Sizes are DSIZE (allocated on the pool, all copies) except logical (file bytes). Blocks: the group's stored blocks (zdb -S referenced). {{.Breakdown.Rule}}</p>
<p class="note">{{.ZerosText}}.</p>
{{end}}
<footer>Made by ddtsim. {{if .Estimated}}Every figure is an estimate ({{.Estimated}}); the JSON (--json) and CSV (--csv) outputs give them in bytes with their ranges.{{else}}Figures in bytes are exact in the JSON (--json) and CSV (--csv) outputs.{{end}}</footer>
</main>
</body>
</html>
`))

// htmlSignature is what every page WriteHTML writes holds within its first
// htmlSniff bytes.
const (
	htmlSignature = "<title>ddtsim: "
	htmlSniff     = 4 << 10
)

// IsHTMLReport reports whether r holds a page WriteHTML wrote (an earlier
// report that may be replaced), from its first bytes.
func IsHTMLReport(r io.Reader) bool {
	head := make([]byte, htmlSniff)
	n, _ := io.ReadFull(r, head)
	return bytes.HasPrefix(head[:n], []byte("<!DOCTYPE html>")) && bytes.Contains(head[:n], []byte(htmlSignature))
}
