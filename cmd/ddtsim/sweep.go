package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/ddtsim/ddtsim/zdb"

	"github.com/ddtsim/ddtsim/ddtsize"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/ddt"
	"github.com/ddtsim/ddtsim/model"
	"github.com/ddtsim/ddtsim/sweep"
	"github.com/ddtsim/ddtsim/zio"
)

type sweepCmd struct {
	Property  []string `short:"o" name:"property" sep:"none" placeholder:"NAME=VALUE[,VALUE...]" help:"Dataset property as for scan; recordsize and compression take a comma-separated list of values (e.g. -o recordsize=16K,128K,1M -o compression=off,lz4,zstd), and every combination is a row. copies and dedup take one value. Repeatable."`
	Vdev      []string `name:"vdev" sep:"none" placeholder:"LAYOUT" help:"A top-level vdev, as for scan. Repeatable."`
	Ashift    string   `default:"12" help:"Pool sector size as a power of two (9..16)."`
	Release   string   `default:"latest" help:"OpenZFS release modelled (${releases}; default: the newest)."`
	Sparse    string   `default:"auto" enum:"auto,always,never" help:"How the files would be copied, as cp --sparse=WHEN (see scan)."`
	Sort      string   `default:"space" enum:"space,ram" help:"Order of the rows, best first: space = allocated DSIZE ascending, ram = in-core DDT size ascending (ties: by recordsize, then compression)."`
	Histogram int      `name:"histogram" placeholder:"N" help:"After the table, print the zdb -S text of row N (1 = first row)."`
	JSON      bool     `name:"json" help:"Print the rows as JSON (with each row's zdb -S text)."`
	Jobs      int      `short:"j" default:"0" help:"Files read at once (0: one per CPU)."`
	Paths     []string `arg:"" name:"path" help:"Files and directories to scan (each byte is read once for all combinations)."`

	settings model.Settings // what every lane shares, set by lanes
}

// sweepRow is one combination's result.
type sweepRow struct {
	Row         int         `json:"row"`
	RecordSize  uint32      `json:"recordsize"`
	Compression string      `json:"compression"`
	Ratios      *ddt.Ratios `json:"ratios"` // nil when nothing would be stored
	DSize       uint64      `json:"allocated_dsize"`
	Entries     uint64      `json:"ddt_entries"`
	InCore      uint64      `json:"ddt_in_core"`
	Zdb         string      `json:"zdb_S"`

	order int // position in the lanes (recordsize list × compression list)
}

type sweepJSON struct {
	Release string `json:"release"`
	// Properties are what every row shares: copies, dedup, the pool
	// (vdev, ashift) and the sparse mode.
	Properties sweepProps     `json:"properties"`
	Sort       string         `json:"sort"`
	Counters   sweep.Counters `json:"counters"`
	Rows       []sweepRow     `json:"rows"`
}

// sweepProps is what the rows of a sweep share.
type sweepProps struct {
	Copies int    `json:"copies"`
	Dedup  string `json:"dedup"`
	Vdev   string `json:"vdev"`
	Ashift int    `json:"ashift"`
	Sparse string `json:"sparse"`
}

func (sp sweepProps) String() string {
	return fmt.Sprintf("copies=%d, dedup=%s, %s (ashift %d), sparse=%s", sp.Copies, sp.Dedup, sp.Vdev, sp.Ashift, sp.Sparse)
}

// splitList splits a comma-separated property list, refusing empty and
// repeated values.
func splitList(name, v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			return nil, fmt.Errorf("-o %s=%s: empty value in the list", name, v)
		}
		if seen[strings.ToLower(x)] {
			return nil, fmt.Errorf("-o %s=%s: %s is listed twice", name, v, x)
		}
		seen[strings.ToLower(x)] = true
		out = append(out, x)
	}
	return out, nil
}

// lanes builds one policy per (recordsize, compression) combination with
// the scan command's own parsing (scanCmd.policy).
func (s *sweepCmd) lanes() ([]*zio.Policy, error) {
	var rs, comp, other []string
	for _, kv := range s.Property {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("-o %s: expected NAME=VALUE", kv)
		}
		var err error
		switch strings.ToLower(name) {
		case "recordsize", "recsize":
			if rs != nil {
				return nil, fmt.Errorf("-o %s: recordsize given twice (give one comma-separated list)", kv)
			}
			rs, err = splitList(name, value)
		case "compression", "compress":
			if comp != nil {
				return nil, fmt.Errorf("-o %s: compression given twice (give one comma-separated list)", kv)
			}
			comp, err = splitList(name, value)
		case "volblocksize", "volblock":
			err = fmt.Errorf("-o %s: sweep does not model volumes", kv)
		default:
			other = append(other, kv)
		}
		if err != nil {
			return nil, err
		}
	}
	if rs == nil {
		rs = []string{""}
	}
	if comp == nil {
		comp = []string{""}
	}
	base, err := model.Parse(model.Text{Release: s.Release, Properties: other, Vdevs: s.Vdev, Ashift: s.Ashift, Sparse: s.Sparse})
	if err != nil {
		return nil, err
	}
	s.settings = base
	var lanes []*zio.Policy
	var pool zio.Vdev
	var given [][2]string // each lane's (recordsize, compression) as the user wrote them
	for _, r := range rs {
		for _, c := range comp {
			set := base
			if r != "" {
				if err := set.Set("recordsize", r); err != nil {
					return nil, err
				}
			}
			if c != "" {
				if err := set.Set("compression", c); err != nil {
					return nil, err
				}
			}
			p, err := set.Policy()
			if err != nil {
				return nil, err
			}
			// One pool object for all lanes (sweep.Run checks they share it).
			if pool == nil {
				pool = p.Vdev
			}
			p.Vdev = pool
			for i, q := range lanes {
				if q.RecordSize == p.RecordSize && q.Compression == p.Compression && q.Level == p.Level {
					if given[i][1] != c {
						return nil, fmt.Errorf("-o compression=%s: the values %s and %s are the same compression (%s)", strings.Join(comp, ","),
							given[i][1], c, zio.CompressionName(p.Compression, p.Level))
					}
					return nil, fmt.Errorf("-o recordsize=%s: the values %s and %s are the same recordsize", strings.Join(rs, ","), given[i][0], r)
				}
			}
			lanes = append(lanes, p)
			given = append(given, [2]string{r, c})
		}
	}
	return lanes, nil
}

func (s *sweepCmd) run(stdout, stderr io.Writer) int {
	if s.Release == "list" {
		fmt.Fprintln(stderr, "ddtsim: sweep --release list: use ddtsim --release list")
		return exitUsage
	}
	lanes, err := s.lanes()
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	}
	if err := checkJobs(s.Jobs); err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	}
	if s.Histogram != 0 && s.JSON {
		fmt.Fprintln(stderr, "ddtsim: --histogram with --json: the JSON has every row's zdb -S text already (zdb_S); drop --histogram")
		return exitUsage
	}
	if s.Histogram < 0 || s.Histogram > len(lanes) {
		fmt.Fprintf(stderr, "ddtsim: --histogram %d: invalid (accepted: 1 to %d, a row of the table)\n", s.Histogram, len(lanes))
		return exitUsage
	}
	sparse, err := analyzer.ParseSparse(s.Sparse)
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	}
	ctx, interruptCode, stop := interruptContext(context.Background())
	defer stop()
	var mu sync.Mutex
	res, err := sweep.Run(ctx, s.Paths, sweep.Options{Lanes: lanes, Sparse: sparse, Jobs: s.Jobs,
		Warn: func(path string, err error) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "ddtsim: %s: %s\n", path, reason(path, err))
		}})
	if res == nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitFailed
	}
	rows := sweepRows(res)
	sortRows(rows, s.Sort)
	props := sweepProps{Copies: lanes[0].Copies, Dedup: "off", Vdev: lanes[0].Vdev.String(), Ashift: s.settings.AshiftValue(), Sparse: sparse.String()}
	if lanes[0].Dedup {
		props.Dedup = "on"
	}
	if s.JSON {
		out := sweepJSON{Release: lanes[0].Version, Properties: props, Sort: s.Sort, Counters: res.Counters, Rows: rows}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
	} else {
		err = writeSweep(stdout, lanes[0], props, res.Counters, rows, s.Sort)
		if err == nil && s.Histogram > 0 {
			r := rows[s.Histogram-1]
			_, err = fmt.Fprintf(stdout, "\nrow %d: recordsize=%s compression=%s\n%s", r.Row,
				zdb.Nicenum(uint64(r.RecordSize), false), r.Compression, r.Zdb)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim: writing the report:", err)
		return exitFailed
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "ddtsim: interrupted: the result above is partial")
		if code := interruptCode(); code != 0 {
			return code
		}
		return exitInterrupt
	case res.Counters.Errors > 0:
		fmt.Fprintf(stderr, "ddtsim: completed with %s (see above); the result leaves out what could not be read\n", plural(res.Counters.Errors, "error"))
		return exitWithErrors
	}
	return exitOK
}

// sweepRows turns each lane into a row (unsorted; Row unset).
func sweepRows(res *sweep.Result) []sweepRow {
	rows := make([]sweepRow, len(res.Lanes))
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
		rows[i] = sweepRow{RecordSize: p.RecordSize, Compression: zio.CompressionName(p.Compression, p.Level),
			Ratios: r, DSize: total.Allocated.DSize, Entries: l.Summary.Entries, InCore: size.InCore,
			Zdb: zb.String(), order: i}
	}
	return rows
}

// sortRows orders rows best first by the criterion (space or ram), ties
// by recordsize then compression as given, and numbers them.
func sortRows(rows []sweepRow, by string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		ka, kb := a.DSize, b.DSize
		if by == "ram" {
			ka, kb = a.InCore, b.InCore
		}
		if ka != kb {
			return ka < kb
		}
		if a.RecordSize != b.RecordSize {
			return a.RecordSize < b.RecordSize
		}
		return a.order < b.order
	})
	for i := range rows {
		rows[i].Row = i + 1
	}
}

func writeSweep(w io.Writer, p *zio.Policy, props sweepProps, c sweep.Counters, rows []sweepRow, by string) error {
	var b bytes.Buffer
	holes := ""
	if c.HoleBytes > 0 {
		holes = fmt.Sprintf("; %s in source holes, not read", zdb.Nicenum(c.HoleBytes, true))
	}
	fmt.Fprintf(&b, "OpenZFS %s, %s, %s (%d bytes%s) read once for %s; best first by %s\nevery row: %s\n\n",
		p.Version, plural(c.Files, "file"), zdb.Nicenum(c.LogicalBytes, true), c.LogicalBytes, holes, plural(uint64(len(rows)), "combination"), by, props)
	fmt.Fprintf(&b, "%3s  %10s  %-11s  %6s  %8s  %8s  %22s  %11s  %14s\n",
		"row", "recordsize", "compression", "dedup", "compress", "combined", "allocated (DSIZE)", "DDT entries", "DDT in core")
	for _, r := range rows {
		dedup, compress, combined := "-", "-", "-" // nothing stored: no ratio
		if q := r.Ratios; q != nil {
			dedup, compress, combined = fmt.Sprintf("%.2f", q.Dedup), fmt.Sprintf("%.2f", q.Compress), fmt.Sprintf("%.2f", q.Combined)
		}
		fmt.Fprintf(&b, "%3d  %10s  %-11s  %6s  %8s  %8s  %22s  %11d  %14s\n",
			r.Row, zdb.Nicenum(uint64(r.RecordSize), false), r.Compression,
			dedup, compress, combined,
			fmt.Sprintf("%s (%d)", zdb.Nicenum(r.DSize, true), r.DSize), r.Entries, zdb.Nicenum(r.InCore, true))
	}
	_, err := w.Write(b.Bytes())
	return err
}
