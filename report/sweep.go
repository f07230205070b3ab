package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/ddtsim/ddtsim/sweep"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// SweepRow is one combination's result in a sweep's report.
type SweepRow struct {
	Row         int         `json:"row"`
	RecordSize  uint32      `json:"recordsize,omitempty"` // 0 in a sweep of volumes
	Compression string      `json:"compression"`
	Ratios      *ddt.Ratios `json:"ratios"` // nil when nothing would be stored
	DSize       uint64      `json:"allocated_dsize"`
	Entries     uint64      `json:"ddt_entries"`
	InCore      uint64      `json:"ddt_in_core"`
	Zdb         string      `json:"zdb_S"`
	// Zstd is Report.Zstd for the row's compression: "exact" or
	// "approximate" for zstd, empty otherwise.
	Zstd string `json:"zstd,omitempty"`
	// VolBlockSize is the row's volblocksize in a sweep of volumes
	// (--zvol), 0 otherwise.
	VolBlockSize uint32 `json:"volblocksize,omitempty"`

	order int // position in the lanes (recordsize list × compression list)
}

// Sweep is the report of a sweep: what every row shares, and one row
// per combination, best first.
type Sweep struct {
	Release string `json:"release"`
	// Properties are what every row shares: copies, dedup, the pool
	// (vdev, ashift) and the sparse mode.
	Properties SweepProperties `json:"properties"`
	Sort       string          `json:"sort"`
	Partial    bool            `json:"partial"` // the sweep was interrupted: the rows cover only what was read
	Counters   sweep.Counters  `json:"counters"`
	Rows       []SweepRow      `json:"rows"`

	policy *zio.Policy // the first lane's
}

// SweepProperties are what the rows of a sweep share.
type SweepProperties struct {
	Copies int    `json:"copies"`
	Dedup  string `json:"dedup"`
	Vdev   string `json:"vdev"`
	Ashift int    `json:"ashift"`
	Sparse string `json:"sparse"`
	Guest  bool   `json:"guest"` // images read as their guests' disks (--guest)
	// Zvol: each file a sparse volume (--zvol), the rows by volblocksize.
	Zvol bool `json:"zvol,omitempty"`
}

// String writes the properties as the text report's header does.
func (sp SweepProperties) String() string {
	s := fmt.Sprintf("copies=%d, dedup=%s, %s (ashift %d), sparse=%s", sp.Copies, sp.Dedup, sp.Vdev, sp.Ashift, sp.Sparse)
	if sp.Guest {
		s += ", images read as guest disks (--guest)"
	}
	if sp.Zvol {
		s += ", each file a sparse volume (--zvol)"
	}
	return s
}

// blockSize is the row's recordsize, or volblocksize for a volume.
func (r SweepRow) blockSize() uint32 { return r.RecordSize + r.VolBlockSize }

// sizeName names the rows' block size: recordsize, or volblocksize for
// volumes.
func (sp SweepProperties) sizeName() string {
	if sp.Zvol {
		return "volblocksize"
	}
	return "recordsize"
}

// sweepRows turns each lane into a row (unsorted; Row unset).
func sweepRows(res *sweep.Result, zvol bool) []SweepRow {
	rows := make([]SweepRow, len(res.Lanes))
	for i, l := range res.Lanes {
		p := l.Policy
		total := l.Histogram.Total()
		var r *ddt.Ratios
		if rr, ok := ddt.RatiosOf(total); ok {
			r = &rr
		}
		size := ddtsize.EstimateHistogram(l.Histogram, p, total.Allocated.DSize)
		var zb bytes.Buffer
		zdb.WriteSimulated(&zb, l.Histogram, p.Release.BytesSuffix)
		rows[i] = SweepRow{RecordSize: p.RecordSize, Compression: zio.CompressionName(p.Compression, p.Level),
			Ratios: r, DSize: total.Allocated.DSize, Entries: l.Summary.Entries, InCore: size.InCore,
			Zdb: zb.String(), Zstd: zstdMark(p.Compression), order: i}
		if zvol {
			rows[i].RecordSize, rows[i].VolBlockSize = 0, p.RecordSize
		}
	}
	return rows
}

// sortRows orders rows best first by the criterion (space or ram), ties
// by recordsize then compression as given, and numbers them.
func sortRows(rows []SweepRow, by string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		ka, kb := a.DSize, b.DSize
		if by == "ram" {
			ka, kb = a.InCore, b.InCore
		}
		if ka != kb {
			return ka < kb
		}
		if a.blockSize() != b.blockSize() {
			return a.blockSize() < b.blockSize()
		}
		return a.order < b.order
	})
	for i := range rows {
		rows[i].Row = i + 1
	}
}

// WriteText writes the sweep as a table, best first, and with
// histogramRow > 0 the zdb -S text of that row (1 = the first) after it.
func (sw *Sweep) WriteText(w io.Writer, histogramRow int) error {
	if err := writeSweep(w, sw.policy, sw.Properties, sw.Counters, sw.Rows, sw.Sort, sw.Partial); err != nil || histogramRow <= 0 {
		return err
	}
	r := sw.Rows[histogramRow-1]
	_, err := fmt.Fprintf(w, "\nrow %d: %s=%s compression=%s\n%s", r.Row, sw.Properties.sizeName(),
		nicenum.Format(uint64(r.blockSize()), false), r.Compression, r.Zdb)
	return err
}

// WriteJSON writes the sweep as JSON (every row with its zdb -S text).
func (sw *Sweep) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sw)
}

// NewSweep makes the report of a sweep: its rows ordered best first by
// sortBy ("space": allocated DSIZE; "ram": the DDT's size in core) and
// numbered, with what they share (set: the settings every lane shares).
func NewSweep(res *sweep.Result, set model.Settings, sortBy string) *Sweep {
	rows := sweepRows(res, set.Zvol)
	sortRows(rows, sortBy)
	p := res.Lanes[0].Policy
	props := SweepProperties{Copies: p.Copies, Dedup: "off", Vdev: p.Vdev.String(), Ashift: set.AshiftValue(), Sparse: set.Sparse.String(), Guest: set.Guest, Zvol: set.Zvol}
	if p.Dedup {
		props.Dedup = "on"
	}
	return &Sweep{Release: p.Version, Properties: props, Sort: sortBy, Counters: res.Counters, Rows: rows, policy: p}
}

func writeSweep(w io.Writer, p *zio.Policy, props SweepProperties, c sweep.Counters, rows []SweepRow, by string, partial bool) error {
	var b bytes.Buffer
	holes := ""
	if c.HoleBytes > 0 {
		holes = fmt.Sprintf("; %s in source holes, not read", nicenum.Format(c.HoleBytes, true))
	}
	fmt.Fprintf(&b, "OpenZFS %s, %s, %s (%d bytes%s) read once for %s; best first by %s\nevery row: %s\n",
		p.Version, english.Count(c.Files, "file"), nicenum.Format(c.LogicalBytes, true), c.LogicalBytes, holes, english.Count(uint64(len(rows)), "combination"), by, props)
	if partial {
		// As the scan words it, with how much was read: the headline's
		// files and bytes are those found (found by a new user: "180M
		// read once" of which 30M was read).
		fmt.Fprintf(&b, "PARTIAL: the sweep was interrupted; the figures cover only what was read: %s (%d bytes) of the %s found\n",
			nicenum.Format(c.ReadBytes+c.HoleBytes, true), c.ReadBytes+c.HoleBytes, nicenum.Format(c.LogicalBytes, true))
	}
	if c.Errors > 0 {
		// The scan's report says which files could not be read; the
		// sweep's said nothing on stdout (found by a new user: "3 files,
		// 591K read once" of which one file was left out).
		fmt.Fprintf(&b, "INCOMPLETE: %s could not be read (see stderr): %s (%d bytes) read of %s\n",
			english.Count(c.Errors, "path"), nicenum.Format(c.ReadBytes+c.HoleBytes, true), c.ReadBytes+c.HoleBytes, nicenum.Format(c.LogicalBytes, true))
	}
	b.WriteString("\n")
	// The compression column is as wide as its longest name
	// (zstd-fast-1000 is 14), at least as wide as its title.
	cw := len("compression")
	approx := false
	for _, r := range rows {
		mark := 0
		if r.Zstd == zstdApproximate {
			approx, mark = true, 1 // the name gets a "*"
		}
		cw = max(cw, len(r.Compression)+mark)
	}
	sw := len(props.sizeName()) // the block size column, as wide as its title
	fmt.Fprintf(&b, "%3s  %*s  %-*s  %6s  %8s  %8s  %22s  %11s  %14s\n",
		"row", sw, props.sizeName(), cw, "compression", "dedup", "compress", "combined", "allocated (DSIZE)", "DDT entries", "DDT in core")
	for _, r := range rows {
		dedup, compress, combined := "-", "-", "-" // nothing stored: no ratio
		if q := r.Ratios; q != nil {
			dedup, compress, combined = fmt.Sprintf("%.2f", q.Dedup), fmt.Sprintf("%.2f", q.Compress), fmt.Sprintf("%.2f", q.Combined)
		}
		name := r.Compression
		if r.Zstd == zstdApproximate {
			name += "*"
		}
		fmt.Fprintf(&b, "%3d  %*s  %-*s  %6s  %8s  %8s  %22s  %11d  %14s\n",
			r.Row, sw, nicenum.Format(uint64(r.blockSize()), false), cw, name,
			dedup, compress, combined,
			fmt.Sprintf("%s (%d)", nicenum.Format(r.DSize, true), r.DSize), r.Entries, nicenum.Format(r.InCore, true))
	}
	if approx {
		fmt.Fprintf(&b, "* APPROXIMATE: %s\n", ZstdNote)
	}
	_, err := w.Write(b.Bytes())
	return err
}
