package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// Breakdown is the --by breakdown a Scan carries (package breakdown). It is
// an alias so that the Scan's embedded field, whose fields JSON puts at the
// top level, keeps the name Breakdown.
type Breakdown = breakdown.Result

// maxTextRows bounds the rows of the text table; the rest are summed into
// one row (JSON, CSV and HTML list them all).
const maxTextRows = 40

// writeBreakdown writes the breakdown as a table for a person, after the
// summary; saved is the scan's savings (file bytes minus allocated DSIZE).
func writeBreakdown(w io.Writer, b *breakdown.Result, saved int64) error {
	rows := b.Groups
	if len(rows) > maxTextRows {
		rest := breakdown.SumGroups(rows[maxTextRows-1:])
		rest.Name = fmt.Sprintf("(%d more)", len(rows)-maxTextRows+1)
		rows = append(rows[:maxTextRows-1:maxTextRows-1], rest)
	}
	rows = append(rows, b.Sum)
	width := len("group")
	for _, g := range rows {
		width = max(width, utf8.RuneCountInString(g.Name))
	}
	width = min(width, 60)
	pad := func(s string) string {
		if n := utf8.RuneCountInString(s); n < width {
			return s + strings.Repeat(" ", width-n)
		}
		return s
	}
	var sb strings.Builder
	pr := func(format string, a ...any) { fmt.Fprintf(&sb, format, a...) }
	nb := func(v uint64) string { return nicenum.Format(v, true) }
	pr("\nBreakdown by %s:\n", b.Basis)
	pr("%s  %7s  %7s  %7s  %9s  %8s  %8s  %10s  %9s  %7s\n", pad("group"),
		"files", "logical", "holes", "zero blks", "embedded", "no dedup", "with dedup", "only here", "shared")
	for _, g := range rows {
		pr("%s  %7d  %7s  %7d  %9d  %8d  %8s  %10s  %9s  %7s\n", pad(g.Name), g.Files, nb(g.LogicalBytes),
			g.Holes, g.ZeroBlocks, g.Embedded, nb(g.Referenced.DSize), nb(g.Allocated.DSize), nb(g.Unique.DSize), nb(g.Shared.DSize))
	}
	sb.WriteString(wrap("logical: file bytes; holes: records never written; zero blks: all-zero blocks stored; "+
		"embedded: blocks kept in their block pointer; the other sizes are DSIZE. "+b.Rule, "  ", 100))
	sb.WriteString(wrap(zerosText(b.Zeros, saved)+".", "  ", 100))
	_, err := io.WriteString(w, sb.String())
	return err
}

// zerosText says in one sentence how much of the savings is zeros.
func zerosText(z breakdown.Zeros, saved int64) string {
	s := fmt.Sprintf("zeros: %s (%s of file data never written), %s stored",
		english.Count(z.Holes, "hole"), nicenum.Format(z.HoleBytes, true), english.Count(z.Referenced.Blocks, "all-zero block"))
	if z.Referenced.Blocks > 0 {
		s += fmt.Sprintf(" (%s, deduplicated to %s)", nicenum.Format(z.Referenced.DSize, true), nicenum.Format(z.Allocated.DSize, true))
	}
	if saved > 0 {
		zs := min(z.Saved, uint64(saved))
		s += fmt.Sprintf("; of the %s saved before metadata, %s (%.1f%%) is zeros", nicenum.Format(uint64(saved), true),
			nicenum.Format(zs, true), 100*float64(zs)/float64(saved))
	}
	return s
}

// wrap breaks text into lines of at most width runes (longer words stay
// whole), each line starting with indent and ending with a newline.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	if line != indent {
		b.WriteString(line + "\n")
	}
	return b.String()
}
