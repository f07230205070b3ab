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
	Counters   analyzer.Counters `json:"counters"`
	Zdb        string            `json:"zdb_S"` // the zdb -S text
}

// Pool describes the simulated pool layout.
type Pool struct {
	Vdev   string `json:"vdev"`
	Ashift int    `json:"ashift"`
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
		Pool:      Pool{Vdev: p.Vdev.String(), Ashift: ashift},
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
	var zb stringWriter
	if err := WriteZdbS(&zb, res.Histogram, p.Release.BytesSuffix); err != nil {
		return nil, err
	}
	s.Zdb = string(zb)
	return s, nil
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
	pr("Summary: OpenZFS %s, recordsize=%s, compression=%s, copies=%s, dedup=%s, %s, sparse=%s\n",
		s.Release, s.Properties["recordsize"], s.Properties["compression"], s.Properties["copies"],
		s.Properties["dedup"], s.Pool.Vdev, s.Sparse)
	if s.Partial {
		pr("  PARTIAL: the scan was interrupted; the figures cover only what was read\n")
	}
	pr("  files        %d regular files, %s (%d bytes); %d directories\n", c.Files, Nicenum(c.LogicalBytes, true), c.LogicalBytes, c.Dirs)
	pr("  skipped      %d symlinks, %d special files, %d extra hard links; %d errors\n", c.Symlinks, c.Special, c.HardLinks, c.Errors)
	pr("  records      %d: %d stored, %d embedded in block pointers, %d holes (%d never read); %d all-zero blocks stored\n",
		c.Records, c.Stored, c.Embedded, c.Holes, c.SourceHoles, c.ZeroBlocks)
	pr("  DDT entries  %d unique blocks\n", c.UniqueBlocks)
	pr("  on disk      %s (%d bytes) without dedup, %s (%d bytes) with dedup\n",
		Nicenum(t.Referenced.DSize, true), t.Referenced.DSize, Nicenum(t.Allocated.DSize, true), t.Allocated.DSize)
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
