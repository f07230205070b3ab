package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/ddt"
	"github.com/ddtsim/ddtsim/zio"
)

// Scan is everything a finished scan reports: the model it ran, the
// histogram and the counters. It is also the JSON document of `ddtsim
// --json` (all sizes in bytes, exact integers).
type Scan struct {
	Release    string            `json:"release"`
	Properties map[string]string `json:"properties"` // dataset properties as zfs get would show them
	Pool       Pool              `json:"pool"`
	Sparse     string            `json:"sparse"`
	Paths      []string          `json:"paths"`
	Partial    bool              `json:"partial"` // the scan was interrupted
	Histogram  []Row             `json:"histogram"`
	Total      ddt.Bucket        `json:"total"`
	Ratios     *ddt.Ratios       `json:"ratios"` // null when no block is stored
	Raw        RawCapacity       `json:"raw_capacity"`
	Counters   analyzer.Counters `json:"counters"`
	Zdb        string            `json:"zdb_S"` // the zdb -S text
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

// Row is one non-empty histogram bucket: keys with refcnt in [Refcnt,
// 2·Refcnt).
type Row struct {
	Refcnt uint64 `json:"refcnt"`
	ddt.Bucket
}

// NewScan assembles the report of a finished scan.
func NewScan(p *zio.Policy, ashift int, sparse analyzer.Sparse, paths []string, res *analyzer.Result) (*Scan, error) {
	s := &Scan{
		Release: p.Release.Name,
		Properties: map[string]string{
			"recordsize":  Nicenum(uint64(p.RecordSize), false),
			"compression": p.Compression.String(),
			"copies":      fmt.Sprint(p.Copies),
			"dedup":       map[bool]string{true: "on", false: "off"}[p.Dedup],
		},
		Pool:      newPool(p, ashift),
		Sparse:    sparse.String(),
		Paths:     paths,
		Histogram: []Row{},
		Total:     res.Histogram.Total(),
		Counters:  res.Counters,
	}
	for i, b := range res.Histogram {
		if b.Allocated.Blocks != 0 {
			s.Histogram = append(s.Histogram, Row{Refcnt: 1 << i, Bucket: b})
		}
	}
	if r, ok := ddt.RatiosOf(s.Total); ok {
		s.Ratios = &r
	}
	s.Raw = RawCapacity{
		Referenced: p.RawSize(s.Total.Referenced.DSize),
		Allocated:  p.RawSize(s.Total.Allocated.DSize),
		Note:       rawNote(p.Vdev),
	}
	var zb stringWriter
	if err := WriteZdbS(&zb, res.Histogram, p.Release.BytesSuffix); err != nil {
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

type stringWriter string

func (s *stringWriter) Write(p []byte) (int, error) { *s += stringWriter(p); return len(p), nil }

// WriteJSON writes s as indented JSON.
func (s *Scan) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(s)
}

// WriteText writes the zdb -S block followed by a short summary for a
// person.
func (s *Scan) WriteText(w io.Writer) error {
	if _, err := io.WriteString(w, s.Zdb); err != nil {
		return err
	}
	c := s.Counters
	t := s.Total
	pr := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	pr("Summary: OpenZFS %s, recordsize=%s, compression=%s, copies=%s, dedup=%s, %s (ashift %d), sparse=%s\n",
		s.Release, s.Properties["recordsize"], s.Properties["compression"], s.Properties["copies"],
		s.Properties["dedup"], s.Pool.Vdev, s.Pool.Ashift, s.Sparse)
	if s.Partial {
		pr("  PARTIAL: the scan was interrupted; the figures cover only what was read\n")
	}
	pr("  files        %d regular files, %s (%d bytes); %d directories\n", c.Files, Nicenum(c.LogicalBytes, true), c.LogicalBytes, c.Dirs)
	pr("  skipped      %d symlinks, %d special files, %d extra hard links; %d errors\n", c.Symlinks, c.Special, c.HardLinks, c.Errors)
	pr("  records      %d: %d stored, %d embedded in block pointers, %d holes; %d all-zero blocks stored\n",
		c.Records, c.Stored, c.Embedded, c.Holes, c.ZeroBlocks)
	pr("  DDT entries  %d unique blocks\n", c.UniqueBlocks)
	pr("  on disk      %s (%d bytes) without dedup, %s (%d bytes) with dedup\n",
		Nicenum(t.Referenced.DSize, true), t.Referenced.DSize, Nicenum(t.Allocated.DSize, true), t.Allocated.DSize)
	pr("  raw capacity %s (%d bytes) without dedup, %s (%d bytes) with dedup (ASIZE: %s)\n",
		Nicenum(s.Raw.Referenced, true), s.Raw.Referenced, Nicenum(s.Raw.Allocated, true), s.Raw.Allocated, s.Raw.Note)
	if s.Pool.Mixed {
		pr("  assumption   the top-level vdevs differ in shape: DSIZE and raw capacity assume every block (all copies) is written to the first, %s\n", s.Pool.DSizeVdev)
	}
	if c.LogicalBytes > 0 {
		saved := int64(c.LogicalBytes) - int64(t.Allocated.DSize)
		pr("  saved        %s of %s file data (%.1f%%) by holes, compression and dedup together; dedup alone saves %s\n",
			signedNice(saved), Nicenum(c.LogicalBytes, true), 100*float64(saved)/float64(c.LogicalBytes),
			signedNice(int64(t.Referenced.DSize)-int64(t.Allocated.DSize)))
	}
	return nil
}

func signedNice(v int64) string {
	if v < 0 {
		return "-" + Nicenum(uint64(-v), true)
	}
	return Nicenum(uint64(v), true)
}
