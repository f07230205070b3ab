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
	Guest bool     `json:"guest"`
	Paths []string `json:"paths"` // as given, escaped by escape.Path (bytes that are not UTF-8 appear as \xNN)
	// Partial is set when the figures cover part of the data only: an
	// interrupted scan, one shard of a sharded scan, a merge missing
	// shards or holding interrupted scans. PartialWhy says why, one
	// sentence each (the PARTIAL lines of the text).
	Partial    bool     `json:"partial"`
	PartialWhy []string `json:"partial_why,omitempty"`
	// PathsBase64 holds, when a path had to be escaped (escape.Path),
	// every path's own bytes in standard base64, in the order of Paths;
	// absent otherwise.
	PathsBase64 []string         `json:"paths_base64,omitempty"`
	Problems    []source.Problem `json:"problems"` // every path that could not be read, or changed while read
	// Estimate is true when every figure is an estimate (--sample or
	// --read: Sample or Read says how); absent otherwise.
	Estimate bool                `json:"estimate,omitempty"`
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
	// Bytes makes the text summary give exact byte counts beside the
	// sizes (--bytes); JSON and CSV always have them.
	Bytes bool `json:"-"`
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
	var raw []string
	for i, x := range paths {
		esc[i] = escape.Path(x)
		if esc[i] != x {
			raw = make([]string, len(paths))
			for j, y := range paths {
				raw[j] = escape.Base64(y)
			}
		}
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
		Pool:        newPool(p, ashift),
		Sparse:      sparse.String(),
		Paths:       esc,
		PathsBase64: raw,
		Histogram:   []Row{},
		Total:       res.Histogram.Total(),
		Counters:    res.Counters,
	}
	// A group plan's files per size are an input of the estimate (one
	// entry per size), not a figure of the report.
	s.Counters.SizeFiles = nil
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

// MarkPartial marks the report as covering part of the data only, and
// why (a sentence, without a final full stop).
func (s *Report) MarkPartial(why string) {
	s.Partial = true
	s.PartialWhy = append(s.PartialWhy, why)
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
	if of == 0 || s.NothingSampled() || s.NothingRead() {
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
	s.Sample, s.Estimate = est, true
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
