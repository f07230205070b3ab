package report

import (
	"fmt"

	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// The rule of the decision line: dedup is worth it when the space it saves
// on top of compression is at least WorthShare of what the data takes
// without dedup and at least WorthRAM times the dedup table's in-core
// size (RAM costs tens of times more per byte than disk, and every write
// pays a table lookup), and, with --ram, when the table fits in the ARC.
const (
	WorthShare = 0.10
	WorthRAM   = 50
)

// Rule is the decision rule in words, as the decision line states it.
var Rule = fmt.Sprintf("rule: worth it when dedup saves at least %.0f%% of the size without dedup and %d times the table's RAM, and the table fits in the ARC when --ram is given",
	100*WorthShare, WorthRAM)

// Decision is what the figures mean for turning dedup on, in one line
// (Text) and in its parts: the JSON decision object, the CSV decision
// rows, the line after the histogram in the text and at the top of the
// HTML page.
type Decision struct {
	// CompressionSaves is the file data covered minus the DSIZE without
	// dedup: what holes and compression save (negative when copies,
	// parity and padding cost more), bytes.
	CompressionSaves int64 `json:"compression_saves"`
	// DedupSaves is the DSIZE without dedup minus the DSIZE with dedup,
	// bytes; DedupShare is it over the DSIZE without dedup.
	DedupSaves int64   `json:"dedup_saves"`
	DedupShare float64 `json:"dedup_share"`
	// DDTInCore is the dedup table's modelled size in RAM, bytes
	// (ddt_size.in_core).
	DDTInCore uint64 `json:"ddt_in_core"`
	// ARC is, with --ram, whether the table fits in the ARC: "fits",
	// "tight" or "does not fit" (ddt_size.arc.verdict).
	ARC     string `json:"arc,omitempty"`
	WorthIt bool   `json:"worth_it"`
	// Unreliable is set when the figures come from a sample flagged as
	// unreliable: no verdict is given (WorthIt false).
	Unreliable bool   `json:"unreliable,omitempty"`
	Rule       string `json:"rule"`
	Text       string `json:"text"`
}

// decide makes the decision line from the totals and the DDT estimate;
// nil when there is nothing to decide on (no file data covered, nothing
// stored, a sample that kept nothing, no DDT estimate).
func (s *Report) decide() *Decision {
	of := s.Counters.ScannedBytes
	ref, alloc := s.Total.Referenced.DSize, s.Total.Allocated.DSize
	if s.DDT == nil || of == 0 || ref == 0 || s.NothingSampled() {
		return nil
	}
	d := &Decision{
		CompressionSaves: int64(of) - int64(ref),
		DedupSaves:       int64(ref) - int64(alloc),
		DDTInCore:        s.DDT.InCore,
		Rule:             Rule,
	}
	d.DedupShare = float64(d.DedupSaves) / float64(ref)
	if e := s.Sample; e != nil && !e.Reliable {
		// A sample that missed (or over-weighted) the duplicated
		// contents gives savings that say nothing (found by a new user:
		// "dedup adds nothing" on data of dedup 2.00).
		d.Unreliable = true
		d.Text = "Decision: none: the sample is flagged below as unreliable, so its savings and table size may be far off; scan without --sample, or with a smaller N"
		return d
	}
	nice := func(v uint64) string { return nicenum.Format(v, true) }
	text := "Decision: "
	switch {
	case s.Partial:
		text = "Decision (partial scan, from what was read): "
	case s.Sample != nil:
		text = "Decision (estimated from the sample): "
	}
	if d.CompressionSaves >= 0 {
		text += fmt.Sprintf("compression alone saves %s of %s (%.1f%%); ", nice(uint64(d.CompressionSaves)), nice(of), 100*float64(d.CompressionSaves)/float64(of))
	} else {
		text += fmt.Sprintf("compression alone saves nothing (copies, parity and padding add %s to the %s); ", nice(uint64(-d.CompressionSaves)), nice(of))
	}
	if d.DedupSaves > 0 {
		text += fmt.Sprintf("dedup adds %s on top (%.1f%% of the %s left)", nice(uint64(d.DedupSaves)), 100*d.DedupShare, nice(ref))
	} else {
		text += "dedup adds nothing on top (no block is stored twice)"
	}
	text += fmt.Sprintf(" for a DDT of %s in RAM", nice(d.DDTInCore))
	fits := true
	if a := s.DDT.ARC; a != nil {
		d.ARC = a.Verdict
		switch a.Verdict {
		case ddtsize.VerdictFits:
			text += fmt.Sprintf(", which fits in the ARC with %s of RAM", nice(a.RAM))
		case ddtsize.VerdictTight:
			text += fmt.Sprintf(", which fits in the ARC with %s of RAM only tightly", nice(a.RAM))
		default:
			text += fmt.Sprintf(", which does not fit in the ARC with %s of RAM", nice(a.RAM))
			fits = false
		}
	}
	d.WorthIt = fits && d.DedupShare >= WorthShare && float64(d.DedupSaves) >= WorthRAM*float64(d.DDTInCore)
	switch {
	case d.WorthIt:
		text += ": worth it"
	case !fits:
		text += ": not worth it on this machine"
	default:
		text += ": probably not worth it"
	}
	d.Text = text + " (" + Rule + ")"
	return d
}
