package report

import (
	"fmt"
	"math/bits"

	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// DDTEstimate is the JSON ddt_size object: the modelled size of the real
// dedup table the pool would build for the data, for the release modelled,
// and with --ram whether it stays in the ARC (ddtsize.Predict); and
// whether the text summary shows it.
type DDTEstimate struct {
	ddtsize.Prediction

	show bool // print it in the text summary
}

// EstimateDDT models the DDT of the scan's histogram (after ApplySample
// for a sampled scan) with ddtsize.Predict: its refcnt-1 row gives the
// unique entries, the other rows the duplicate ones. ram > 0 (bytes) adds
// the ARC verdict. The text summary shows the estimate when dedup is on or
// ram is given; JSON always has it, unless a sample kept nothing
// (NothingSampled): then there is nothing to estimate it from, and DDT
// stays nil. It also makes the decision line (Decision) from it.
func (s *Report) EstimateDDT(p *zio.Policy, ram uint64) {
	if s.NothingSampled() {
		s.DDT, s.Decision = nil, nil
		return
	}
	h := s.ddtHistogram()
	s.DDT = &DDTEstimate{Prediction: ddtsize.Predict(&h, p, s.Release, s.Total.Allocated.DSize, ram), show: p.Dedup || ram > 0}
	s.Decision = s.decide()
}

// ddtHistogram is the report's histogram as package ddt holds it.
func (s *Report) ddtHistogram() ddt.Histogram {
	var h ddt.Histogram
	for _, r := range s.Histogram {
		if b := bits.Len64(r.RefcntMin) - 1; b >= 0 && b < len(h) {
			h[b] = r.Bucket
		}
	}
	return h
}

// SetVolume marks the scan as one of volumes (zfs create -V, Options.Zvol
// of the analyzer): the block size is the volblocksize property, and
// recordsize, a file system property, is not shown.
func (s *Report) SetVolume(volblocksize uint32) {
	delete(s.Properties, "recordsize")
	s.Properties["volblocksize"] = nicenum.Format(uint64(volblocksize), false)
	s.Properties["type"] = "volume"
}

// BlockSizeProperty is the block size property as the summary names it:
// "recordsize=128K", or for volumes "volblocksize=16K".
func (s *Report) BlockSizeProperty() string {
	if v, ok := s.Properties["volblocksize"]; ok {
		return "volblocksize=" + v
	}
	return "recordsize=" + s.Properties["recordsize"]
}

// writeText prints the DDT block of the summary.
func (e *DDTEstimate) writeText(pr func(string, ...any)) {
	if !e.show {
		return
	}
	kind := "legacy ZAP table (trad entries)"
	if e.Format == ddtsize.FormatFDT {
		kind = "fast-dedup table (FDT: flat entries and a log)"
	}
	size := func(v uint64) string { return fmt.Sprintf("%s (%d bytes)", nicenum.Format(v, true), v) }
	if e.Entries == 0 {
		pr("  DDT          no entries: nothing would be stored in the dedup table\n")
		return
	}
	pr("  DDT          %d entries (%d unique, %d duplicate) in a %s, as OpenZFS %s stores them\n",
		e.Entries, e.Unique, e.Duplicate, kind, e.Release)
	b := e.Basis
	pr("    on disk    %s, %.0f B/entry: %s of %s blocks, %s-compressed, %d copies (MOS metadata)\n",
		size(e.OnDisk), b.PerEntryOnDisk, english.Count(uint64(len(e.Objects)), "ZAP object"), nicenum.Format(b.BlockSize, true), b.Compression, b.Copies)
	line := fmt.Sprintf("    in core    %s if wholly cached, %.0f B/entry", size(e.InCore), b.PerEntryInCore)
	if e.LogInCore > 0 {
		line += fmt.Sprintf("; %s (%d B/entry) while entries wait in the dedup log", nicenum.Format(e.LogInCore, true), ddtsize.LogEntryBytes)
	}
	pr("%s\n", line)
	pr("    thumb      %s at the classic %d B/entry rule of thumb\n", size(e.RuleOfThumb), ddtsize.RuleOfThumbBytes)
	pr("    basis      an entry is %d chunks of 24 B (%d B: entry, key, %d-byte value) in %s leaves of at most %d; leaves %.0f%% full (expected over random hashes); on disk a leaf takes %s over all copies; + a header block per ZAP, indirect blocks\n",
		b.EntryChunks, b.EntryBytes, b.ValueBytes, nicenum.Format(b.BlockSize, true), b.LeafCapacity, 100*b.Fill, nicenum.Format(uint64(b.LeafOnDisk+0.5), true))
	if b.WholeLeaves >= 0.05 {
		pr("    flush      about %.1f of %.0f leaves end up stored uncompressed: the dedup log's flush rewrites them in sync pass 8, where ZFS stops compressing (counted above)\n",
			b.WholeLeaves, e.Leaves())
	}
	if a := e.ARC; a != nil {
		limit := "metadata: " + a.MetaIs
		if a.MetaLimit > 0 {
			limit = "metadata limit " + nicenum.Format(a.MetaLimit, true) + ": " + a.MetaIs
		}
		pr("    ARC        with %s of RAM: ARC max %s (%s); %s\n", nicenum.Format(a.RAM, true), nicenum.Format(a.ARCMax, true), a.ARCMaxIs, limit)
		pr("    verdict    %s: the table is %.1f%% of %s; %s\n", a.Verdict, 100*a.Share, nicenum.Format(a.Limit, true), a.Meaning)
		if a.LogMax > 0 {
			pr("               (besides the ARC, the dedup log may hold up to %s: 1%% of RAM, at least 1M)\n", nicenum.Format(a.LogMax, true))
		}
	}
}
