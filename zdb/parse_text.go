package zdb

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// WriteJSON writes p as indented JSON.
func (p *Parsed) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(p)
}

// WriteText writes a summary of p for a person: what the text is, its
// era, the tables with their totals and ratio lines, the DDT sizes, the
// consistency checks and every line that could not be read.
func (p *Parsed) WriteText(w io.Writer, name string) error {
	var b strings.Builder
	pr := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	pr("%s: %s\n", name, english.Count(p.Lines, "line"))
	pr("  era          %s\n", p.Era.Text)
	for _, e := range p.Era.Evidence {
		pr("               line %d: %s\n", e.Line, e.Says)
	}
	for _, c := range p.Commands {
		pr("  command      line %d: %s\n", c.Line, c.Text)
	}
	if p.Truncated {
		pr("  TRUNCATED    the text looks cut short\n")
	}
	for _, h := range p.Headers {
		pr("  DDT          line %d: %s version %d [%s], flags 0x%02x %s, rootobj %d\n", h.Line, h.Checksum, h.Version, h.Kind, h.Flags, strings.Join(h.FlagText, " "), h.RootObj)
	}
	for _, o := range p.Objects {
		pr("  DDT object   line %d: %s: %d entries, on disk %s, in core %s\n", o.Line, o.Name, o.Entries, sizeText(o.OnDisk), sizeText(o.InCore))
	}
	for _, l := range p.Logs {
		pr("  DDT log      line %d: %s log %d: %d entries, %d bytes, txg %d %s\n", l.Line, l.Checksum, l.N, l.Entries, l.Len, l.Txg, strings.Join(l.FlagText, " "))
	}
	if p.Empty {
		pr("  DDT          all DDTs are empty\n")
	}
	for _, s := range p.Summaries {
		if s.NoEntries {
			pr("  dedup:       line %d: no DDT entries\n", s.Line)
			continue
		}
		pr("  dedup:       line %d: %d entries, on disk %s, in core %s", s.Line, s.Entries, sizeText(s.OnDisk), sizeText(s.InCore))
		if s.Cached != nil {
			pr(", cached %s", sizeText(*s.Cached))
			if s.CachedPct != nil {
				pr(" (%s%%)", s.CachedPct.Text)
			}
		}
		pr("\n")
		if !s.OnDisk.Sure {
			pr("               (read as %s; the format alone does not say: see the note below)\n", s.OnDisk.Meaning)
		}
	}
	for _, l := range p.Lists {
		pr("  %-12s line %d: %s, %s (first: %s)\n", l.Kind, l.Line, english.Count(len(l.Columns)-1, "column"), english.Count(len(l.Rows)+l.RowsLeftOut, "row"), l.Rows[0][0])
	}
	primary := p.Primary()
	for _, t := range p.Tables {
		mark := ""
		if t == primary && len(p.Tables) > 1 {
			mark = " (the one compare uses)"
		}
		if t.Estimate {
			mark += " — ddtsim's ESTIMATE (--read), not zdb's"
		}
		pr("  table        lines %d-%d: %s%s, %s", t.Line, t.EndLine, t.Description(), mark, english.Count(len(t.Rows), "bucket row"))
		if t.Errors > 0 {
			pr(", %d unreadable", t.Errors)
		}
		pr("\n")
		if len(t.Rows) > 0 {
			labels := make([]string, len(t.Rows))
			for i := range t.Rows {
				labels[i] = t.Rows[i].Label
			}
			pr("               refcnt buckets %s\n", strings.Join(labels, " "))
		}
		if t.Total != nil {
			a, r := t.Total.Allocated, t.Total.Referenced
			pr("               allocated  %s blocks, LSIZE %s, PSIZE %s, DSIZE %s\n", vtext(a.Blocks), vtext(a.LSize), vtext(a.PSize), vtext(a.DSize))
			pr("               referenced %s blocks, LSIZE %s, PSIZE %s, DSIZE %s\n", vtext(r.Blocks), vtext(r.LSize), vtext(r.PSize), vtext(r.DSize))
		} else if t.Kind != KindObject && len(t.Rows) > 0 {
			pr("               no Total row\n")
		}
		if rl := t.Ratios; rl != nil {
			pr("               ratios (line %d): dedup %s, compress %s, copies %s, dedup*compress/copies %s\n",
				rl.Line, rl.Dedup.Text, rl.Compress.Text, rl.Copies.Text, rl.Combined.Text)
		}
	}
	for _, rl := range p.Orphans {
		pr("  ratio line   line %d (after no table): dedup %s, compress %s, copies %s, dedup*compress/copies %s\n",
			rl.Line, rl.Dedup.Text, rl.Compress.Text, rl.Copies.Text, rl.Combined.Text)
	}
	if !p.Usable() {
		pr("  nothing of a DDT was found in this text\n")
	}
	failed := p.Failed()
	pr("  checks       %d passed, %d failed\n", len(p.Checks)-len(failed), len(failed))
	for _, c := range failed {
		pr("    MISMATCH   line %d: %s: %s\n", c.Line, c.Name, c.Detail)
	}
	for _, l := range p.DiagLines(MaxNotUnderstoodShown) {
		pr("  %s\n", l)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// MaxNotUnderstoodShown is how many "not understood" lines the text report
// lists; the JSON lists all that Parse kept (see MaxDiags).
const MaxNotUnderstoodShown = 20

// DiagLines returns the diagnostics as lines to print, in order, but of
// the warnings about lines not understood only the first max, and in place
// of the others one line saying how many more there are; last, when Parse
// kept only the first diagnostics, a line saying how many it left out.
func (p *Parsed) DiagLines(max int) []string {
	var out []string
	shown, more := 0, 0
	for _, d := range p.Diags {
		if d.Severity == SevWarning && strings.HasPrefix(d.Msg, NotUnderstood) {
			if shown == max {
				if more == 0 {
					out = append(out, "") // the summary line goes here
				}
				more++
				continue
			}
			shown++
		}
		out = append(out, d.String())
	}
	if more > 0 {
		for i, l := range out {
			if l == "" {
				out[i] = fmt.Sprintf("... and %s not understood (--json lists them all)", english.Count(more, "more line"))
				if p.NotUnderstoodLeftOut > 0 {
					out[i] = fmt.Sprintf("... and %s not understood (--json lists %d of them)", english.Count(more+p.NotUnderstoodLeftOut, "more line"), more)
				}
				break
			}
		}
	}
	if p.DiagsLeftOut > 0 {
		out = append(out, p.LeftOutText())
	}
	return out
}

// LeftOutText says how many diagnostics Parse left out ("" when none).
func (p *Parsed) LeftOutText() string {
	if p.DiagsLeftOut == 0 {
		return ""
	}
	return fmt.Sprintf("... and %d more diagnostics about lines (%d of them lines not understood), left out: only the first %d are kept", p.DiagsLeftOut, p.NotUnderstoodLeftOut, MaxDiags)
}

// Description says which output printed the table ("zdb -S simulated DDT
// histogram").
func (t *HistogramTable) Description() string {
	switch t.Kind {
	case KindSimulated:
		return "zdb -S simulated DDT histogram"
	case KindAggregated:
		return "zdb -DD histogram aggregated over all DDTs"
	case KindObject:
		return "zdb -DDD histogram of " + t.Object
	case KindStatus:
		return "zpool status -D DDT histogram"
	}
	return "DDT histogram (no title: which command printed it is unknown)"
}

// vtext shows a printed number and, when it is not exact, the bytes it
// stands for.
func vtext(v nicenum.Value) string {
	if v.Exact() {
		return v.Text
	}
	return fmt.Sprintf("%s [%d..%d]", v.Text, v.Lo, v.Hi)
}

func sizeText(d DDTSize) string {
	per, tot := d.PerEntry.String(), d.Total.String()
	if d.Meaning == PerEntry {
		return fmt.Sprintf("%s per entry (total %s bytes)", d.Printed.Text, tot)
	}
	return fmt.Sprintf("%s total (%s bytes per entry)", d.Printed.Text, per)
}
