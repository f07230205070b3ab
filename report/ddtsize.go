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

// writeText writes the DDT block of the summary.
func (e *DDTEstimate) writeText(t *textOut) {
	if !e.show {
		return
	}
	kind := "legacy ZAP table (trad entries)"
	if e.Format == ddtsize.FormatFDT {
		kind = "fast-dedup table (FDT: flat entries and a log)"
	}
	if e.Entries == 0 {
		t.item("DDT", "no entries: nothing would be stored in the dedup table")
		return
	}
	t.item("DDT", "%d entries (%d unique, %d duplicate) in a %s, as OpenZFS %s stores them",
		e.Entries, e.Unique, e.Duplicate, kind, e.Release)
	b := e.Basis
	t.sub("on disk", "%s, %.0f B/entry: %s of %s blocks, %s-compressed, %d copies (MOS metadata)",
		t.size(e.OnDisk), b.PerEntryOnDisk, english.Count(uint64(len(e.Objects)), "ZAP object"), nicenum.IEC(b.BlockSize), b.Compression, b.Copies)
	line := fmt.Sprintf("%s if wholly cached, %.0f B/entry", t.size(e.InCore), b.PerEntryInCore)
	if e.LogInCore > 0 {
		line += fmt.Sprintf("; %s (%d B/entry) while entries wait in the dedup log", nicenum.IEC(e.LogInCore), ddtsize.LogEntryBytes)
	}
	t.sub("in core", "%s", line)
	t.sub("thumb", "%s at the classic %d B/entry rule of thumb", t.size(e.RuleOfThumb), ddtsize.RuleOfThumbBytes)
	t.sub("basis", "an entry is %d chunks of 24 B (%d B: entry, key, %d-byte value) in %s leaves of at most %d; leaves %.0f%% full (expected over random hashes); on disk a leaf takes %s over all copies; + a header block per ZAP, indirect blocks",
		b.EntryChunks, b.EntryBytes, b.ValueBytes, nicenum.IEC(b.BlockSize), b.LeafCapacity, 100*b.Fill, nicenum.IEC(uint64(b.LeafOnDisk+0.5)))
	if b.WholeLeaves >= 0.05 {
		t.sub("flush", "about %.1f of %.0f leaves end up stored uncompressed: the dedup log's flush rewrites them in sync pass 8, where ZFS stops compressing (counted above)",
			b.WholeLeaves, e.Leaves())
	}
	if a := e.ARC; a != nil {
		limit := "metadata: " + a.MetaIs
		if a.MetaLimit > 0 {
			limit = "metadata limit " + nicenum.IEC(a.MetaLimit) + ": " + a.MetaIs
		}
		t.sub("ARC", "with %s of RAM: ARC max %s (%s); %s", nicenum.IEC(a.RAM), nicenum.IEC(a.ARCMax), a.ARCMaxIs, limit)
		t.sub("verdict", "%s: the table is %.1f%% of %s; %s", a.Verdict, 100*a.Share, nicenum.IEC(a.Limit), a.Meaning)
		if a.LogMax > 0 {
			t.sub("", "(besides the ARC, the dedup log may hold up to %s: 1%% of RAM, at least 1 MiB)", nicenum.IEC(a.LogMax))
		}
	}
}
