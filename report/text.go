package report

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// TextWidth is the widest line of the text report but the zdb -S table
// and the --by table: the headline and every summary line, columns.
const TextWidth = 100

// Headline is the report's answer, the first lines of the text and of the
// HTML page: at most three lines of at most TextWidth columns, sizes in
// IEC units (nicenum.IEC):
//
//  1. what zfs list USED and zpool list ALLOC would show without dedup
//     and with it (Space; package space);
//  2. what the dedup table takes in RAM (DDT.InCore), with --ram whether
//     it fits in the ARC;
//  3. the verdict (Decision.Text), or why there is none.
//
// A line is left out when its figure is unknown (no prediction).
func (s *Report) Headline() []string {
	if s.Read != nil {
		return append(s.readHeadline(), s.approximateHeadline()...)
	}
	var lines []string
	iec := nicenum.IEC
	off, on := s.SpaceByDedup()
	if off == nil {
		off = on
	} else if on == nil {
		on = off
	}
	// A sample's figures are estimates: said on each line (with dedup,
	// USED is left out to keep the line short: dedup never lowers it).
	estimated := s.Sample != nil && s.Sample.Sampled > 0
	switch {
	case off != nil && estimated:
		lines = append(lines, fmt.Sprintf("Space (estimate): without dedup USED %s, ALLOC %s; with dedup ALLOC %s",
			iec(off.Used), iec(off.Alloc), iec(on.Alloc)))
	case off != nil:
		lines = append(lines, fmt.Sprintf("Space: without dedup USED %s, ALLOC %s; with dedup USED %s, ALLOC %s",
			iec(off.Used), iec(off.Alloc), iec(on.Used), iec(on.Alloc)))
	case s.NothingSampled():
		lines = append(lines, "Space: none estimated: no content fell in the sample; use a smaller N")
	}
	if d := s.DDT; d != nil {
		ram := "RAM: "
		if estimated {
			ram = "RAM (estimate): "
		}
		line := fmt.Sprintf("%sdedup table %s (%s)", ram, iec(d.InCore), english.Count(d.Entries, "entry"))
		if a := d.ARC; a != nil {
			line += fmt.Sprintf("; with %s of RAM %s", iec(a.RAM), arcWords(a.Verdict))
		}
		lines = append(lines, line)
	}
	if d := s.Decision; d != nil {
		lines = append(lines, d.Text)
	} else {
		why := "the dedup table's size was not modelled"
		switch {
		case s.NothingSampled():
			why = "no content fell in the sample"
		case s.Counters.ScannedBytes == 0:
			why = "no file data was read"
		case s.Total.Referenced.DSize == 0:
			why = "no block would be stored (holes and embedded records only)"
		}
		prefix := "Verdict: "
		if s.Partial {
			prefix = "Verdict (partial): "
		}
		lines = append(lines, prefix+"none: "+why)
	}
	return append(lines, s.approximateHeadline()...)
}

// ApproximateHeadline is the headline's fourth line in a build that
// approximates the compression: the answer's own lines carried no mark
// (found by a new user: only the summary's APPROXIMATE item said so).
const ApproximateHeadline = "APPROXIMATE: zstd is approximated in this build (no cgo): the sizes above may be off"

// approximateHeadline is ApproximateHeadline where the figures are
// approximate, else nothing.
func (s *Report) approximateHeadline() []string {
	if s.ApproximateNote() == "" {
		return nil
	}
	return []string{ApproximateHeadline}
}

// arcWords says an ARC verdict (ddtsize.Verdict*) after "with N of RAM".
func arcWords(v string) string {
	switch v {
	case ddtsize.VerdictFits:
		return "it fits in the ARC"
	case ddtsize.VerdictTight:
		return "it fits in the ARC, tightly"
	}
	return "it does not fit in the ARC"
}

// textOut builds the text summary: items of a label and a text wrapped at
// TextWidth columns under a hanging indent.
type textOut struct {
	b     strings.Builder
	bytes bool // exact byte counts beside the sizes (Report.Bytes)
}

// size is a size for the summary: "2.15 MiB", with exact bytes
// "2.15 MiB (2256896 bytes)".
func (t *textOut) size(v uint64) string {
	if t.bytes {
		return fmt.Sprintf("%s (%d bytes)", nicenum.IEC(v), v)
	}
	return nicenum.IEC(v)
}

// signed is size for a value that may be negative.
func (t *textOut) signed(v int64) string {
	if v < 0 {
		return "-" + t.size(uint64(-v))
	}
	return t.size(uint64(v))
}

// unitSpace is the space between a size and its IEC unit.
var unitSpace = regexp.MustCompile(`(\d) ([KMGTPE]?i?B\b)`)

// hangIndent is where an item's text starts, and its further lines.
const hangIndent = "               "

// item writes "  label        text", wrapped.
func (t *textOut) item(label, format string, a ...any) {
	t.wrap(fmt.Sprintf("  %-12s ", label), hangIndent, fmt.Sprintf(format, a...))
}

// sub writes "    label      text", wrapped: a part of the item above.
func (t *textOut) sub(label, format string, a ...any) {
	t.wrap(fmt.Sprintf("    %-10s ", label), hangIndent, fmt.Sprintf(format, a...))
}

// wrap writes text after first, in lines of at most TextWidth runes, the
// further ones indented by cont; a word longer than a line stays whole.
func (t *textOut) wrap(first, cont, text string) {
	line := first
	empty := true
	// A size and its unit stay on one line.
	for _, word := range strings.Fields(unitSpace.ReplaceAllString(text, "$1\x00$2")) {
		word = strings.ReplaceAll(word, "\x00", " ")
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > TextWidth {
			t.b.WriteString(line + "\n")
			line, empty = cont, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	t.b.WriteString(line + "\n")
}

// WriteText writes the report for a person: the Headline, an empty line,
// the zdb -S text (Zdb, as --zdb prints it), the summary (every line at
// most TextWidth columns; exact bytes with Bytes) and the --by table.
func (s *Report) WriteText(w io.Writer) error {
	head := strings.Join(s.Headline(), "\n") + "\n\n"
	if _, err := io.WriteString(w, head+s.Zdb); err != nil {
		return err
	}
	if _, err := io.WriteString(w, s.summaryText()); err != nil {
		return err
	}
	if s.Breakdown != nil {
		saved, _, _ := s.Saved()
		return writeBreakdown(w, s.Breakdown, saved)
	}
	return nil
}

// summaryText is the summary of the text report.
func (s *Report) summaryText() string {
	t := &textOut{bytes: s.Bytes}
	c := s.Counters
	tot := s.Total
	t.wrap("Summary: ", "         ", fmt.Sprintf("OpenZFS %s, %s, compression=%s, copies=%s, dedup=%s, %s (ashift %d), sparse=%s%s",
		s.Release, s.BlockSizeProperty(), s.Properties["compression"], s.Properties["copies"],
		s.Properties["dedup"], s.Pool.Vdev, s.Pool.Ashift, s.Sparse, s.guestText()))
	for _, why := range s.PartialWhy {
		t.item("PARTIAL", "%s", why)
	}
	if n := s.ApproximateNote(); n != "" {
		t.item("APPROXIMATE", "%s", n)
	}
	if s.Sample != nil {
		s.writeSample(t)
	}
	if s.Read != nil {
		s.writeRead(t)
	}
	unreadable := ""
	if c.Unreadable > 0 {
		unreadable = fmt.Sprintf(" (%d of them, %s, could not be read)", c.Unreadable, t.size(c.UnreadableBytes))
	}
	t.item("files", "%s, %s%s; %s%s", filesText(c), t.size(c.LogicalBytes), unreadable, english.Count(c.Dirs, "directory"), s.walkText())
	data := s.FileData()
	if data != c.LogicalBytes {
		t.item("share", "%s of file data in the shards' shares scanned (a file is counted above by the shard "+
			"that reads its first chunk)", t.size(data))
	}
	t.item("skipped", "%s", skippedText(c))
	if c.Changed > 0 {
		t.item("changed", "%s changed while read: the figures for them are approximate", english.Count(c.Changed, "file"))
	}
	if r := s.Read; r != nil {
		// Of the records read, but for the source holes, known of all
		// (found by a new user: "44 holes" of a sample beside 8032 of
		// the whole data, unsaid which).
		t.item("records", "%d, %d of them read: %d stored, %d embedded in block pointers, %s, %s stored; "+
			"and %s in holes of the source files (not read)", c.Records, r.Read, c.Stored, c.Embedded,
			english.Count(c.ReadHoles, "hole"), english.Count(c.ZeroBlocks, "all-zero block"), english.Count(c.Holes-c.ReadHoles, "record"))
	} else {
		t.item("records", "%d: %d stored, %d embedded in block pointers, %s; %s stored",
			c.Records, c.Stored, c.Embedded, english.Count(c.Holes, "hole"), english.Count(c.ZeroBlocks, "all-zero block"))
	}
	if c.ScannedBytes != data {
		found := ""
		if s.WalkUnfinished() {
			found = " found so far"
		}
		t.item("covered", "%s of the %s of file data%s: the records read or found in holes; the figures below "+
			"are for these bytes only", t.size(c.ScannedBytes), t.size(data), found)
	}
	if s.Sample != nil {
		estimates := "; sizes below are estimates"
		if s.Sample.Sampled == 0 {
			estimates = ""
		}
		t.item("in sample", "%s (%d left out), %s%s", english.Count(c.Stored, "record"), c.Unsampled,
			english.Count(c.UniqueBlocks, "unique block"), estimates)
	} else if s.Read != nil {
		t.item("in sample", "%s stored of those read (%s unread), %s; sizes below "+
			"are estimates", english.Count(c.Stored, "record"), english.Count(c.Unread, "record"), english.Count(c.UniqueBlocks, "unique block"))
	} else {
		t.item("DDT entries", "%d: one per distinct block stored", c.UniqueBlocks)
	}
	nothing := s.NothingSampled() || s.NothingRead()
	if !nothing {
		t.item("data blocks", "%s without dedup, %s with dedup (DSIZE: the file data's blocks, as zdb -S counts them)",
			t.size(tot.Referenced.DSize), t.size(tot.Allocated.DSize))
		if c.Embedded > 0 {
			t.sub("embedded", "%s kept in block pointers take no data block: the dnodes and indirect blocks "+
				"holding them are metadata, below", english.Count(c.Embedded, "record"))
		}
		t.item("raw capacity", "%s without dedup, %s with dedup (ASIZE: %s)", t.size(s.Raw.Referenced), t.size(s.Raw.Allocated), s.Raw.Note)
	}
	off, on := s.SpaceByDedup()
	if off == nil {
		off = on
	} else if on == nil {
		on = off
	}
	if off != nil {
		m := off.Metadata
		t.item("metadata", "%s a copy: indirect blocks %s, directories %s, dnodes and fixed objects %s; zfs list "+
			"and zpool list count it and the pool's own, zdb -S does not", t.size(m.ASize), t.size(off.Indirect.ASize),
			t.size(off.Directories.ASize), t.size(m.ASize-off.Indirect.ASize-off.Directories.ASize))
		t.item("zfs list", "USED %s, LUSED %s, compressratio %.2fx; with dedup USED %s: dedup never lowers USED",
			t.size(off.Used), t.size(off.LUsed), off.CompressRatio, t.size(on.Used))
		t.item("zpool list", "ALLOC %s without dedup, %s with dedup (DEDUP %.2fx)", t.size(off.Alloc), t.size(on.Alloc), on.Dedup)
		if fl := on.Flushed; fl != nil {
			t.item("dedup log", "with dedup, right after the copy: the DDT (%s) partly in its log; once flushed "+
				"(DDT %s): USED %s, ALLOC %s", t.size(on.DDT), t.size(fl.DDT), t.size(fl.Used), t.size(fl.Alloc))
		}
	}
	if s.Pool.Mixed {
		t.item("assumption", "the top-level vdevs differ in shape: DSIZE and raw capacity assume every block (all "+
			"copies) is written to the first, %s", s.Pool.DSizeVdev)
	}
	s.writeSaved(t)
	if s.DDT != nil && !nothing {
		s.DDT.writeText(t)
		if s.DDT.show {
			switch {
			case s.Partial:
				t.sub("caution", "the result is partial: the whole data's table is larger than these figures, and the verdict may change")
			case s.Sample != nil && !s.Sample.Reliable:
				t.sub("caution", "from a sample flagged above as unreliable: the table's size may be far off")
			}
		}
	}
	if s.Decision != nil {
		t.item("verdict", "%s", Rule)
	}
	if line := memoryLine(c); line != "" {
		t.item("memory", "%s", line)
	}
	return t.b.String()
}

// writeSaved writes what the pool saves on the file data covered, and by
// what: holes, embedded records, compression, dedup; less the metadata
// (one copy) when it is predicted.
func (s *Report) writeSaved(t *textOut) {
	if r := s.Read; r != nil && s.NothingRead() {
		t.item("saved", "not estimated: no record was read (0 of %d); read a larger fraction", r.Records)
		return
	}
	saved, of, ok := s.SavedNet()
	if !ok {
		return
	}
	c := s.Counters
	tot := s.Total
	what := "file data"
	if of != s.FileData() {
		what = "file data covered"
	}
	holes, emb, comp := s.credits(of, tot.Referenced.DSize)
	dedup := int64(tot.Referenced.DSize) - int64(tot.Allocated.DSize)
	var meta uint64
	metaText := ""
	if s.Space != nil {
		meta = s.Space.Metadata.ASize
		metaText = fmt.Sprintf(", less %s of metadata (a copy)", t.size(meta))
	}
	pct := func(v float64) float64 { return 100 * v / float64(of) }
	if e := s.Sample; e != nil && e.Sampled > 0 {
		// An estimate: the allocated DSIZE has the sample's interval.
		lo, hi := float64(of)-e.Allocated.High-float64(meta), float64(of)-e.Allocated.Low-float64(meta)
		t.item("saved", "about %s of the %s of %s (%.1f%%; 95%%: %.1f%% to %.1f%%), estimated from the sample",
			t.signed(saved), t.size(of), what, pct(float64(saved)), pct(lo), pct(hi))
	} else if s.Read != nil {
		t.item("saved", "about %s of the %s of %s (%.1f%%), estimated from the records read (the space ranges above)",
			t.signed(saved), t.size(of), what, pct(float64(saved)))
	} else if saved < 0 {
		// Past 10 times the data, a percentage is hard to read (a new
		// user saw 1638300.0% for 3 B of data): times the data instead.
		share := fmt.Sprintf("%.1f%%", -pct(float64(saved)))
		if -saved > 10*int64(of) {
			share = fmt.Sprintf("%.0f times the data", float64(-saved)/float64(of))
		}
		t.item("saved", "nothing: the pool would take %s more than the %s of %s (%s): copies, parity, padding "+
			"and metadata cost more than holes, compression and dedup save", t.size(uint64(-saved)), t.size(of), what, share)
	} else {
		t.item("saved", "%s of the %s of %s (%.1f%%)", t.signed(saved), t.size(of), what, pct(float64(saved)))
	}
	if s.Sample != nil || s.Read != nil {
		return // no cause can be told from sampling noise
	}
	compText := "compression " + t.signed(comp)
	switch {
	case s.Properties["compression"] == "off":
		// Nothing is compressed: what is left is the blocks' padding,
		// copies and parity (it was called compression).
		compText = "padding, copies and parity " + t.signed(comp)
	case comp < 0:
		compText += " (copies, parity and padding cost more than it saves)"
	}
	t.sub("by", "holes %s (%s), embedded records %s (%s), %s, dedup %s%s",
		t.signed(holes), english.Count(c.Holes, "hole"), t.signed(emb), english.Count(c.Embedded, "record"),
		compText, t.signed(dedup), metaText)
}

// SavedNet is Saved less the metadata of the copy (one copy of the
// indirect blocks, dnodes and directories: space.Prediction.Metadata)
// when it is predicted: what the pool saves on the file data covered
// once the blocks that hold it, embedded records included, are counted.
func (s *Report) SavedNet() (saved int64, of uint64, ok bool) {
	saved, of, ok = s.Saved()
	if ok && s.Space != nil {
		saved -= int64(s.Space.Metadata.ASize)
	}
	return saved, of, ok
}

// FileData is the file data the result is of, bytes: the shares scanned
// (Counters.ShareBytes: one shard's, or the shards' merged), which is
// LogicalBytes when every share is there; LogicalBytes for a scan saved
// before shares were counted.
func (s *Report) FileData() uint64 {
	if c := s.Counters; c.ShareBytes > 0 {
		return c.ShareBytes
	}
	return s.Counters.LogicalBytes
}

// writeSample writes a sampled scan's estimates with their intervals, or
// that nothing can be estimated.
func (s *Report) writeSample(t *textOut) {
	e := s.Sample
	iv := func(i ddt.Interval) string { return fmt.Sprintf("%.2f (95%%: %.2f to %.2f)", i.Value, i.Low, i.High) }
	switch {
	case s.NothingSampled():
		t.item("SAMPLED", "1/%d of the contents by hash: no content was kept", e.N)
		t.item("WARNING", "no content fell in the 1/%d sample: nothing can be estimated; use a smaller N", e.N)
		return
	case e.Sampled == 0:
		t.item("SAMPLED", "1/%d of the contents by hash: no block would be stored, nothing to sample (the figures are exact)", e.N)
		return
	}
	t.item("SAMPLED", "1/%d of the contents by hash (%d unique contents kept): the table above and these are estimates", e.N, e.Sampled)
	if e.Skewed {
		way := "out of"
		if e.Blocks.Value > float64(e.Counted) {
			way = "into"
		}
		t.item("WARNING", "the sampled contents stand for %.0f blocks, but the data has %d: a few contents referenced "+
			"very often fell %s the sample, so dedup is far off whatever its interval says (counting "+
			"every block suggests about %.2f); scan without --sample, or with a smaller N", e.Blocks.Value, e.Counted, way, e.DedupByCount)
	} else if !e.Reliable {
		t.item("WARNING", "only %d contents sampled (fewer than %d): the intervals below are not reliable and the "+
			"estimates may be far off; sample less (a smaller N) or scan without --sample", e.Sampled, ddt.MinReliableSample)
	}
	t.item("dedup", "%s", iv(e.Dedup))
	t.item("compress", "%s", iv(e.Compress))
	t.item("combined", "%s", iv(e.Combined))
	t.item("DDT entries", "%.0f (95%%: %.0f to %.0f)", e.Entries.Value, e.Entries.Low, e.Entries.High)
}
