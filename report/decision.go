package report

import (
	"fmt"
	"math"

	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// The rule of the verdict: dedup is worth it when the space it saves
// on top of compression is at least WorthShare of what the data takes
// without dedup and at least WorthRAM times the dedup table's in-core
// size (RAM costs tens of times more per byte than disk, and every write
// pays a table lookup), and, with --ram, when the table fits in the ARC.
const (
	WorthShare = 0.10
	WorthRAM   = 50
)

// Rule is the decision rule in words, as the summary states it.
var Rule = fmt.Sprintf("rule: worth it when dedup saves at least %.0f%% of the size without dedup and %d times the table's RAM, and the table fits in the ARC when --ram is given",
	100*WorthShare, WorthRAM)

// Decision is what the figures mean for turning dedup on: the verdict
// line (Text, the third line of the text report and the head of the HTML
// page) and its parts, the JSON decision object and the CSV decision rows.
// The savings are each credited to their own cause, bytes of the file
// data covered (Counters.ScannedBytes): HolesSaves + EmbeddedSaves +
// CompressionSaves + DedupSaves is that data minus the DSIZE with dedup.
type Decision struct {
	// HolesSaves is the file data in records never written (all zeros
	// made holes: Counters.HoleBytes), bytes.
	HolesSaves int64 `json:"holes_saves"`
	// EmbeddedSaves is the file data kept in block pointers (embedded
	// records: Counters.EmbeddedLSize less their padding past the files'
	// ends, Counters.EmbeddedPad; at most the data left after holes),
	// bytes: no data block, but the block pointers live in dnodes and
	// indirect blocks, which are metadata (space.Prediction.Metadata).
	EmbeddedSaves int64 `json:"embedded_saves"`
	// CompressionSaves is the rest of the data covered minus the DSIZE
	// without dedup: what compression saves, negative when copies,
	// parity and padding cost more, bytes.
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
	Unreliable bool `json:"unreliable,omitempty"`
	// Undecided is, for an estimate (--read), whether its 95% ranges
	// straddle the rule: worth it at one end, not at the other (WorthIt
	// false; read_estimate.verdict says so in words). Nil (absent from
	// the JSON) for a full scan, which is never undecided.
	Undecided *bool  `json:"undecided,omitempty"`
	Rule      string `json:"rule"`
	// Text is the verdict line, at most HeadlineWidth columns:
	// "Verdict: probably not worth it: dedup saves 536 KiB (30.2%), under
	// 50x the table's RAM" (the RAM line above it says how much).
	Text string `json:"text"`
}

// credits splits the savings on the file data covered (of, bytes) by
// cause: holes, embedded records, compression (the rest, less the DSIZE
// without dedup: ref). A sampled scan's embedded records are those of the
// sample, scaled to the whole.
func (s *Report) credits(of, ref uint64) (holes, embedded, compression int64) {
	c := s.Counters
	// The file data kept in block pointers, not their padding: a new
	// user saw a 6-byte file credited 512 B beside a file that did not
	// compress (alone it was capped to the 6 B of data).
	hb, emb := c.HoleBytes, c.EmbeddedLSize-min(c.EmbeddedPad, c.EmbeddedLSize)
	if e := s.Sample; e != nil && e.N > 1 {
		emb *= e.N
	}
	if r := s.Read; r != nil && r.Fraction > 0 && r.Fraction < 1 {
		// Of the records read, to the whole data: the all-zero ones made
		// holes and the embedded ones (the source holes are the whole
		// data's already). A new user saw 44 holes read reported as the
		// holes' saving, for 813 in the whole data.
		hb = hb - c.ReadHoleBytes + uint64(math.Round(float64(c.ReadHoleBytes)/r.Fraction))
		emb = uint64(math.Round(float64(emb) / r.Fraction))
	}
	holes = int64(min(hb, of))
	embedded = int64(min(emb, of-uint64(holes)))
	compression = int64(of) - holes - embedded - int64(ref)
	return holes, embedded, compression
}

// decide makes the decision from the totals and the DDT estimate; nil
// when there is nothing to decide on (no file data covered, nothing
// stored, a sample that kept nothing, no DDT estimate).
func (s *Report) decide() *Decision {
	of := s.Counters.ScannedBytes
	ref, alloc := s.Total.Referenced.DSize, s.Total.Allocated.DSize
	if s.DDT == nil || of == 0 || ref == 0 || s.NothingSampled() {
		return nil
	}
	d := &Decision{
		DedupSaves: int64(ref) - int64(alloc),
		DDTInCore:  s.DDT.InCore,
		Rule:       Rule,
	}
	d.HolesSaves, d.EmbeddedSaves, d.CompressionSaves = s.credits(of, ref)
	d.DedupShare = float64(d.DedupSaves) / float64(ref)
	text := "Verdict: "
	switch {
	case s.Partial:
		text = "Verdict (partial): "
	case s.Sample != nil:
		text = "Verdict (estimate): "
	}
	if e := s.Sample; e != nil && !e.Reliable {
		// A sample that missed (or over-weighted) the duplicated
		// contents gives savings that say nothing (found by a new user:
		// "dedup adds nothing" on data of dedup 2.00).
		d.Unreliable = true
		d.Text = text + "none: the sample is unreliable (see below); use a smaller N, or no --sample"
		return d
	}
	nice := nicenum.IEC
	fits := true
	if a := s.DDT.ARC; a != nil {
		d.ARC = a.Verdict
		fits = a.Verdict == ddtsize.VerdictFits || a.Verdict == ddtsize.VerdictTight
	}
	share := d.DedupShare >= WorthShare
	ram := float64(d.DedupSaves) >= WorthRAM*float64(d.DDTInCore)
	d.WorthIt = fits && share && ram
	saves := "dedup saves nothing (no block is stored twice)"
	if d.DedupSaves > 0 {
		saves = fmt.Sprintf("dedup saves %s (%.1f%%)", nice(uint64(d.DedupSaves)), 100*d.DedupShare)
	}
	switch {
	case !fits:
		text += fmt.Sprintf("not worth it on this machine: the table's %s does not fit in its ARC", nice(d.DDTInCore))
	case d.WorthIt:
		text += fmt.Sprintf("worth it: %s, over %dx the table's RAM", saves, WorthRAM)
		if d.ARC == ddtsize.VerdictTight {
			text += " (ARC tight)"
		}
	case d.DedupSaves <= 0:
		text += "probably not worth it: " + saves
	case !share:
		text += fmt.Sprintf("probably not worth it: %s, under %.0f%% of the size", saves, 100*WorthShare)
	default:
		text += fmt.Sprintf("probably not worth it: %s, under %dx the table's RAM", saves, WorthRAM)
	}
	d.Text = text
	return d
}
