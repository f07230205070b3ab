package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Report is everything a finished scan reports: the model it ran, the
// histogram and the counters. It is also the JSON document of `ddtsim
// --json` (all sizes in bytes, exact integers).
type Report struct {
	Release    string            `json:"release"`       // the OpenZFS release modelled, e.g. "2.1.16"
	Rules      string            `json:"release_rules"` // the row of the release table applied, e.g. "2.1"
	Properties map[string]string `json:"properties"`    // dataset properties as zfs get would show them
	Pool       Pool              `json:"pool"`
	Sparse     string            `json:"sparse"`
	// Guest: virtual-disk images were read as their guests' disks
	// (--guest; model.Settings.Guest).
	Guest    bool                `json:"guest"`
	Paths    []string            `json:"paths"`            // as given; bytes that are not UTF-8 appear as \xNN (see escape.Path)
	Partial  bool                `json:"partial"`          // the scan was interrupted
	Problems []source.Problem    `json:"problems"`         // every path that could not be read, or changed while read
	Sample   *ddt.SampleEstimate `json:"sample,omitempty"` // set by a sampled scan: the figures above are estimates
	// Read is set by a scan that read a random fraction of the records
	// (--read): the figures are estimates, with their ranges here.
	Read *ReadEstimate `json:"read_estimate,omitempty"`
	// Zstd is "exact" or "approximate" when the compression is zstd (see
	// ZstdNote), empty otherwise: whether this build compresses as ZFS's
	// libzstd does, byte for byte.
	Zstd      string            `json:"zstd,omitempty"`
	Histogram []Row             `json:"histogram"`
	Total     ddt.Bucket        `json:"total"`
	Ratios    *ddt.Ratios       `json:"ratios"` // null when no block is stored
	Raw       RawCapacity       `json:"raw_capacity"`
	Counters  analyzer.Counters `json:"counters"`
	Zdb       string            `json:"zdb_S"` // the zdb -S text
	// WalkFinished is set for an interrupted scan that knows how far its
	// walk got: true when the walk had listed every file (the files and
	// logical bytes are the whole data's), false when it had not (they
	// are what was found so far). Absent otherwise (a complete scan; a
	// saved one, which does not record it).
	WalkFinished *bool `json:"walk_finished,omitempty"`
	// DDT is the modelled size of the real dedup table (EstimateDDT); nil
	// until estimated.
	DDT *DDTEstimate `json:"ddt_size,omitempty"`
	// Space is what zfs list and zpool list will show (EstimateSpace);
	// nil until estimated.
	Space *space.Prediction `json:"space,omitempty"`
	// Decision is what the figures mean for turning dedup on (set by
	// EstimateDDT); nil when there is nothing to decide on.
	Decision *Decision `json:"decision,omitempty"`
	// Breakdown, with --by: its fields appear at the top level
	// (breakdown_by, breakdown, breakdown_total, zeros, ...); nil leaves
	// them out.
	*Breakdown
}

// Pool describes the simulated pool layout.
type Pool struct {
	Vdev     string `json:"vdev"` // the top-level vdevs: "disk", "2 × mirror 2", "raidz2 8 + mirror 2"
	Ashift   int    `json:"ashift"`
	TopLevel int    `json:"top_level_vdevs"`
	MinAlloc uint64 `json:"min_alloc"` // spa_min_alloc, bytes: PSIZE rounding
	GCDAlloc uint64 `json:"gcd_alloc"` // spa_gcd_alloc, bytes: PSIZE rounding
	// DSizeVdev is the top-level vdev DSIZE and the raw capacity are
	// computed on: the first. Mixed is set when the others allocate
	// differently, so that this is an assumption rather than exact.
	DSizeVdev    string `json:"dsize_vdev"`
	DeflateRatio uint64 `json:"deflate_ratio"` // DSizeVdev's vdev_deflate_ratio
	Mixed        bool   `json:"mixed"`
}

// RawCapacity is what the data takes on the layout before deflation: ASIZE
// (whole sectors, raidz/dRAID parity and padding included) summed over all
// copies, bytes; what zpool list shows as ALLOC. A mirror's ASIZE is one
// side's.
type RawCapacity struct {
	Referenced uint64 `json:"referenced"` // without dedup
	Allocated  uint64 `json:"allocated"`  // with dedup
	Note       string `json:"note"`       // what is counted on this layout
}

// Row is one non-empty histogram bucket: the keys with a refcnt in
// [RefcntMin, 2·RefcntMin), the row zdb labels RefcntMin.
type Row struct {
	RefcntMin uint64 `json:"refcnt_min"`
	ddt.Bucket
}

// New assembles the report of a finished scan.
func New(p *zio.Policy, ashift int, sparse model.Sparse, paths []string, res *analyzer.Analysis) (*Report, error) {
	version := p.Version
	if version == "" {
		version = p.Release.Name
	}
	esc := make([]string, len(paths))
	for i, x := range paths {
		esc[i] = escape.Path(x)
	}
	s := &Report{
		Release:  version,
		Rules:    p.Release.Name,
		Problems: []source.Problem{},
		Properties: map[string]string{
			"recordsize":  nicenum.Format(uint64(p.RecordSize), false),
			"compression": zio.CompressionName(p.Compression, p.Level),
			"copies":      fmt.Sprint(p.Copies),
			"dedup":       map[bool]string{true: "on", false: "off"}[p.Dedup],
		},
		Pool:      newPool(p, ashift),
		Sparse:    sparse.String(),
		Paths:     esc,
		Histogram: []Row{},
		Total:     res.Histogram.Total(),
		Counters:  res.Counters,
	}
	for i, b := range res.Histogram {
		if b.Allocated.Blocks != 0 {
			s.Histogram = append(s.Histogram, Row{RefcntMin: 1 << i, Bucket: b})
		}
	}
	if r, ok := ddt.RatiosOf(s.Total); ok {
		s.Ratios = &r
	}
	s.Zstd = zstdMark(p.Compression)
	s.Raw = RawCapacity{
		Referenced: p.RawSize(s.Total.Referenced.DSize),
		Allocated:  p.RawSize(s.Total.Allocated.DSize),
		Note:       rawNote(p.Vdev),
	}
	var zb stringWriter
	if err := zdb.WriteSimulated(&zb, res.Histogram, p.Release.BytesSuffix); err != nil {
		return nil, err
	}
	s.Zdb = string(zb)
	return s, nil
}

// newPool describes p's layout.
func newPool(p *zio.Policy, ashift int) Pool {
	pl, ok := p.Vdev.(*zio.Pool)
	if !ok {
		pl = zio.PoolOf(p.Vdev)
	}
	return Pool{
		Vdev:         pl.String(),
		Ashift:       ashift,
		TopLevel:     pl.TopLevel(),
		MinAlloc:     pl.MinAlloc(),
		GCDAlloc:     pl.GCDAlloc(),
		DSizeVdev:    pl.First().String(),
		DeflateRatio: pl.DeflateRatio(),
		Mixed:        pl.Mixed(),
	}
}

// rawNote says what ASIZE counts on the vdev DSIZE is computed on.
func rawNote(v zio.Vdev) string {
	if pl, ok := v.(*zio.Pool); ok {
		v = pl.First()
	}
	switch v := v.(type) {
	case zio.Mirror:
		return fmt.Sprintf("whole sectors, all copies; each of the %d mirror sides holds this", v.Children)
	case zio.RAIDZ, zio.DRAID:
		return "sectors with parity and padding, all copies"
	}
	return "whole sectors, all copies"
}

// The values of Report.Zstd.
const (
	zstdExact       = "exact"
	zstdApproximate = "approximate"
)

// ZstdNote says why a zstd figure of a build without cgo is approximate.
const ZstdNote = "zstd is approximated in this build (no cgo: " + zstd.Implementation + "); " +
	"PSIZE, compression and the sizes built on them may differ from ZFS's; " +
	"a build with a C compiler (cgo) compresses as ZFS does, byte for byte"

// ApproximateNote is ZstdNote when the report's zstd figures are
// approximate (Zstd), "" otherwise.
func (s *Report) ApproximateNote() string {
	if s.Zstd == zstdApproximate {
		return ZstdNote
	}
	return ""
}

// zstdMark is Report.Zstd for a policy's compression.
func zstdMark(c zio.Compression) string {
	switch {
	case c != zio.Zstd:
		return ""
	case zstd.Exact:
		return zstdExact
	}
	return zstdApproximate
}

type stringWriter string

func (s *stringWriter) Write(p []byte) (int, error) { *s += stringWriter(p); return len(p), nil }

// WriteJSON writes s as indented JSON.
func (s *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(s)
}

// WriteText writes the zdb -S block followed by a short summary for a
// person.
func (s *Report) WriteText(w io.Writer) error {
	if _, err := io.WriteString(w, s.Zdb); err != nil {
		return err
	}
	c := s.Counters
	t := s.Total
	pr := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	if s.Decision != nil {
		pr("%s\n", s.Decision.Text)
	}
	pr("Summary: OpenZFS %s, %s, compression=%s, copies=%s, dedup=%s, %s (ashift %d), sparse=%s%s\n",
		s.Release, s.BlockSizeProperty(), s.Properties["compression"], s.Properties["copies"],
		s.Properties["dedup"], s.Pool.Vdev, s.Pool.Ashift, s.Sparse, s.guestText())
	if s.Partial {
		pr("  PARTIAL: the scan was interrupted; the figures cover only what was read\n")
	}
	if n := s.ApproximateNote(); n != "" {
		pr("  APPROXIMATE: %s\n", n)
	}
	if s.Sample != nil {
		s.writeSample(pr)
	}
	if s.Read != nil {
		s.writeRead(pr)
	}
	pr("  files        %s, %s (%d bytes); %s%s\n", filesText(c), nicenum.Format(c.LogicalBytes, true), c.LogicalBytes, english.Count(c.Dirs, "directory"), s.walkText())
	pr("  skipped      %s\n", skippedText(c))
	if c.Changed > 0 {
		pr("  changed      %s changed while read: the figures for them are approximate\n", english.Count(c.Changed, "file"))
	}
	pr("  records      %d: %d stored, %d embedded in block pointers, %s; %s stored\n",
		c.Records, c.Stored, c.Embedded, english.Count(c.Holes, "hole"), english.Count(c.ZeroBlocks, "all-zero block"))
	if c.ScannedBytes != c.LogicalBytes {
		found := ""
		if s.WalkUnfinished() {
			found = " found so far"
		}
		pr("  covered      %s (%d bytes) of the %s of file data%s: the records read or found in holes; the figures below are for these bytes only\n",
			nicenum.Format(c.ScannedBytes, true), c.ScannedBytes, nicenum.Format(c.LogicalBytes, true), found)
	}
	if s.Sample != nil {
		estimates := "; sizes below are estimates"
		if s.Sample.Sampled == 0 {
			estimates = ""
		}
		pr("  in sample    %d records (%d left out), %d unique blocks%s\n", c.Stored, c.Unsampled, c.UniqueBlocks, estimates)
	} else if s.Read != nil {
		pr("  in sample    %d records stored of those read (%d records unread), %d unique blocks; sizes below are estimates\n", c.Stored, c.Unread, c.UniqueBlocks)
	} else {
		pr("  DDT entries  %d: one per distinct block stored\n", c.UniqueBlocks)
	}
	nothing := s.NothingSampled()
	if !nothing {
		pr("  on disk      %s (%d bytes) without dedup, %s (%d bytes) with dedup\n",
			nicenum.Format(t.Referenced.DSize, true), t.Referenced.DSize, nicenum.Format(t.Allocated.DSize, true), t.Allocated.DSize)
		pr("  raw capacity %s (%d bytes) without dedup, %s (%d bytes) with dedup (ASIZE: %s)\n",
			nicenum.Format(s.Raw.Referenced, true), s.Raw.Referenced, nicenum.Format(s.Raw.Allocated, true), s.Raw.Allocated, s.Raw.Note)
	}
	if off, on := s.spaceByDedup(); off != nil || on != nil {
		// Without the other prediction, the policy's own stands for both.
		if off == nil {
			off = on
		} else if on == nil {
			on = off
		}
		pr("  zfs list     USED %s (%d bytes), LUSED %s (%d bytes), compressratio %.2fx; with dedup USED %s (%d bytes): dedup never lowers USED\n",
			nicenum.Format(off.Used, true), off.Used, nicenum.Format(off.LUsed, true), off.LUsed, off.CompressRatio, nicenum.Format(on.Used, true), on.Used)
		pr("  zpool list   ALLOC %s (%d bytes) without dedup, %s (%d bytes) with dedup (DEDUP %.2fx)\n",
			nicenum.Format(off.Alloc, true), off.Alloc, nicenum.Format(on.Alloc, true), on.Alloc, on.Dedup)
		m := off.Metadata
		pr("  metadata     %s (%d bytes) a copy: indirect blocks %s, directories %s, dnodes and fixed objects %s; zfs list and zpool list count it and the pool's own, zdb -S does not\n",
			nicenum.Format(m.ASize, true), m.ASize, nicenum.Format(off.Indirect.ASize, true), nicenum.Format(off.Directories.ASize, true),
			nicenum.Format(m.ASize-off.Indirect.ASize-off.Directories.ASize, true))
	}
	if s.Pool.Mixed {
		pr("  assumption   the top-level vdevs differ in shape: DSIZE and raw capacity assume every block (all copies) is written to the first, %s\n", s.Pool.DSizeVdev)
	}
	if saved, of, ok := s.Saved(); ok {
		what := "file data"
		if of != c.LogicalBytes {
			what = "file data covered"
		}
		dedupSaves := signedNice(int64(t.Referenced.DSize) - int64(t.Allocated.DSize))
		if e := s.Sample; e != nil && e.Sampled > 0 {
			// An estimate: the allocated DSIZE has the sample's interval,
			// and no cause can be told from sampling noise.
			pct := func(v float64) float64 { return 100 * v / float64(of) }
			lo, hi := float64(of)-e.Allocated.High, float64(of)-e.Allocated.Low
			pr("  saved        about %s of %s %s (%.1f%%; 95%%: %.1f%% to %.1f%%), estimated from the sample; dedup alone about %s\n",
				signedNice(saved), nicenum.Format(of, true), what, pct(float64(saved)), pct(lo), pct(hi), dedupSaves)
		} else if saved < 0 {
			pr("  saved        nothing: the pool would take %s more than the %s %s (%.1f%%): copies, parity and\n"+
				"               padding cost more than holes, compression and dedup save; dedup alone saves %s\n",
				nicenum.Format(uint64(-saved), true), nicenum.Format(of, true), what, -100*float64(saved)/float64(of), dedupSaves)
		} else {
			pr("  saved        %s of %s %s (%.1f%%) by holes, compression and dedup together; dedup alone saves %s\n",
				signedNice(saved), nicenum.Format(of, true), what, 100*float64(saved)/float64(of), dedupSaves)
		}
	}
	if s.DDT != nil && !nothing {
		s.DDT.writeText(pr)
		if s.DDT.show {
			switch {
			case s.Partial:
				pr("    caution    the scan is partial: the whole data's table is larger than these figures, and the\n" +
					"               verdict may change\n")
			case s.Sample != nil && !s.Sample.Reliable:
				pr("    caution    from a sample flagged above as unreliable: the table's size may be far off\n")
			}
		}
	}
	if line := memoryLine(c); line != "" {
		pr("%s\n", line)
	}
	if s.Breakdown != nil {
		saved, _, _ := s.Saved()
		return writeBreakdown(w, s.Breakdown, saved)
	}
	return nil
}

// WalkUnfinished reports an interrupted scan whose walk had not listed
// every file: its file count and logical bytes are those found so far,
// not the whole data's.
func (s *Report) WalkUnfinished() bool {
	return s.Partial && s.WalkFinished != nil && !*s.WalkFinished
}

// WalkNote says, for an interrupted scan that knows it, how far the walk
// got: "found so far; the walk had not finished", or "the walk had
// finished: these are all the files"; "" otherwise.
func (s *Report) WalkNote() string {
	switch {
	case !s.Partial || s.WalkFinished == nil:
		return ""
	case *s.WalkFinished:
		return "the walk had finished: these are all the files"
	}
	return "found so far; the walk had not finished"
}

// walkText is WalkNote for the summary's files line.
func (s *Report) walkText() string {
	if n := s.WalkNote(); n != "" {
		return ": " + n
	}
	return ""
}

// Saved is what the pool would save on the file data the result covers
// (Counters.ScannedBytes, which is LogicalBytes when the scan is complete):
// those bytes minus the allocated DSIZE, and those bytes. ok is false when
// there is nothing to figure it on: no file data covered, or a sample that
// kept no content (NothingSampled).
func (s *Report) Saved() (saved int64, of uint64, ok bool) {
	of = s.Counters.ScannedBytes
	if of == 0 || s.NothingSampled() {
		return 0, of, false
	}
	return int64(of) - int64(s.Total.Allocated.DSize), of, true
}

// NothingSampled reports whether a sampled scan kept no content although
// there were contents to sample: then nothing can be estimated, neither
// sizes nor ratios. (A sample of data that is all holes keeps nothing
// either, and its figures, all 0, are exact.)
func (s *Report) NothingSampled() bool {
	return s.Sample != nil && s.Sample.Sampled == 0 && s.Counters.Unsampled > 0
}

// EstimateNote is "" for an exact report, and for a sampled one a line to
// print on stderr beside output that cannot say it is an estimate (the
// zdb -S text of --zdb, which must stay zdb's format): what was sampled,
// and how far the result can be trusted. The caller prints it after
// "ddtsim: note: ".
func (s *Report) EstimateNote() string {
	if r := s.Read; r != nil {
		return fmt.Sprintf("the zdb -S table is an ESTIMATE from a %s random read of the records (seed %d), not what zdb -S would print; the ranges are in the text, --json and --csv reports", pct(r.Fraction), r.Seed)
	}
	e := s.Sample
	switch {
	case e == nil, e.Sampled == 0 && !s.NothingSampled():
		return "" // no sampling, or nothing to sample: an empty table, exact
	case s.NothingSampled():
		return fmt.Sprintf("no content fell in the 1/%d sample (%d records left out): the zdb -S table is empty and nothing can be estimated; use a smaller N", e.N, s.Counters.Unsampled)
	case !e.Reliable:
		return fmt.Sprintf("the zdb -S table is an estimate from a 1/%d sample (%d unique contents kept, fewer than %d: not reliable, may be far off), not what zdb -S would print; sample less or scan without --sample", e.N, e.Sampled, ddt.MinReliableSample)
	}
	return fmt.Sprintf("the zdb -S table is an estimate from a 1/%d sample (%d unique contents kept), not what zdb -S would print; scan without --sample for the exact table", e.N, e.Sampled)
}

func signedNice(v int64) string {
	if v < 0 {
		return "-" + nicenum.Format(uint64(-v), true)
	}
	return nicenum.Format(uint64(v), true)
}

// ApplySample turns the report of a scan sampled at 1/est.N into estimates
// for the whole data: the histogram, totals, ratio line and zdb text become
// the scaled sample (ddt.EstimateSample), and est's intervals are printed.
func (s *Report) ApplySample(est *ddt.SampleEstimate, bytesSuffix bool) error {
	s.Sample = est
	s.Histogram = []Row{}
	for i, b := range est.Histogram {
		if b.Allocated.Blocks != 0 {
			s.Histogram = append(s.Histogram, Row{RefcntMin: 1 << i, Bucket: b})
		}
	}
	s.Total = est.Histogram.Total()
	s.Raw.Referenced *= est.N
	s.Raw.Allocated *= est.N
	s.Ratios = nil
	if r, ok := ddt.RatiosOf(s.Total); ok {
		s.Ratios = &r
	}
	var zb stringWriter
	if err := zdb.WriteSimulated(&zb, est.Histogram, bytesSuffix); err != nil {
		return err
	}
	s.Zdb = string(zb)
	return nil
}

// writeSample prints a sampled scan's estimates with their intervals, or
// that nothing can be estimated.
func (s *Report) writeSample(pr func(string, ...any)) {
	e := s.Sample
	iv := func(i ddt.Interval) string { return fmt.Sprintf("%.2f (95%%: %.2f to %.2f)", i.Value, i.Low, i.High) }
	switch {
	case s.NothingSampled():
		pr("  SAMPLED      1/%d of the contents by hash: no content was kept\n", e.N)
		pr("  WARNING      no content fell in the 1/%d sample: nothing can be estimated; use a smaller N\n", e.N)
		return
	case e.Sampled == 0:
		pr("  SAMPLED      1/%d of the contents by hash: no block would be stored, nothing to sample (the figures are exact)\n", e.N)
		return
	}
	pr("  SAMPLED      1/%d of the contents by hash (%d unique contents kept): the table above and these are estimates\n", e.N, e.Sampled)
	if e.Skewed {
		way := "out of"
		if e.Blocks.Value > float64(e.Counted) {
			way = "into"
		}
		pr("  WARNING      the sampled contents stand for %.0f blocks, but the data has %d: a few contents referenced\n"+
			"               very often fell %s the sample, so dedup is far off whatever its interval says (counting\n"+
			"               every block suggests about %.2f); scan without --sample, or with a smaller N\n", e.Blocks.Value, e.Counted, way, e.DedupByCount)
	} else if !e.Reliable {
		pr("  WARNING      only %d contents sampled (fewer than %d): the intervals below are not reliable and the\n"+
			"               estimates may be far off; sample less (a smaller N) or scan without --sample\n", e.Sampled, ddt.MinReliableSample)
	}
	pr("  dedup        %s\n", iv(e.Dedup))
	pr("  compress     %s\n", iv(e.Compress))
	pr("  combined     %s\n", iv(e.Combined))
	pr("  DDT entries  %.0f (95%%: %.0f to %.0f)\n", e.Entries.Value, e.Entries.Low, e.Entries.High)
}

// guestText says, after the sparse mode, that images were read as their
// guests' disks.
func (s *Report) guestText() string {
	if s.Guest {
		return ", images read as guest disks (--guest)"
	}
	return ""
}

// filesText counts the files read: regular files, and the block devices
// named (read as files) apart.
func filesText(c analyzer.Counters) string {
	t := english.Count(c.Files-min(c.Devices, c.Files), "regular file")
	if c.Devices > 0 {
		t += " and " + english.Count(c.Devices, "block device")
	}
	return t
}

// skippedText counts what the walk left out, and the errors; directories
// on other file systems (-x) only when there were some.
func skippedText(c analyzer.Counters) string {
	t := fmt.Sprintf("%s, %s, %s, %s", english.Count(c.Symlinks, "symlink"), english.Count(c.Special, "special file"),
		english.Count(c.HardLinks, "extra hard link"), english.Count(c.RepeatedFiles+c.RepeatedDirs, "repeated path"))
	if c.OtherFS > 0 {
		t += ", " + english.Count(c.OtherFS, "directory") + " on other file systems (-x)"
	}
	if c.ImageParts > 0 {
		t += ", " + english.Count(c.ImageParts, "image part") + " (VMDK extents, qcow2 data files: read through their image)"
	}
	return t + "; " + english.Count(c.Errors, "error")
}
