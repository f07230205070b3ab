// Package compare sets ddtsim's prediction (a ddt.Histogram) beside what
// OpenZFS printed for the pool (a table read by package zdb: zdb -S, or the
// real DDT of zdb -DD and zpool status -D) and decides whether they are
// equal within the text's display precision: cell by cell, the four ratios
// of zdb's ratio line (cmd/zdb/zdb.c: dump_dedup_ratio()), and, where the
// text lists DDT objects, the DDT's size. When they differ it says where,
// by how much, and what most likely explains the pattern. When the text
// also holds zfs list or zpool list tables (or only those), it sets the
// model's prediction of them (package space) beside them too: USED,
// USEDDS, REFER, LUSED, LREFER and compressratio of the pool's root
// dataset, ALLOC and the dedup ratio of the pool. Compare returns
// an Outcome or an error wrapping ErrUnusable; exit statuses are the
// command line's.
package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfslist"
)

// Outcome is what a comparison concluded.
type Outcome int

// Outcomes of Compare.
const (
	Equal      Outcome = iota // equal within display precision (and the tolerances)
	Different                 // some cells or ratios differ
	CannotTell                // the cells there agree, but the actual table is incomplete
)

func (o Outcome) String() string {
	switch o {
	case Equal:
		return "equal"
	case Different:
		return "different"
	case CannotTell:
		return "cannot tell"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Options tune Compare.
type Options struct {
	// Tolerance is how far (absolute) each predicted ratio may lie outside
	// the printed ratio's display precision and still count as equal. 0:
	// the predicted ratio must print exactly as the actual one.
	Tolerance float64
	// CellTolerance is how far (relative: 0.01 = 1%) each predicted cell
	// may lie from the nearest value its printed actual cell stands for
	// and still count as equal; 0: it must print alike. For compressors
	// ddtsim approximates (gzip, zstd: docs/accuracy.md).
	CellTolerance float64
	// BytesSuffix formats predicted byte values as 0.7.0+ does ("512B");
	// false prints them as 0.6.x ("512"). Display only.
	BytesSuffix bool
	// Model describes the prediction (release, properties, pool) and Source
	// where the actual text came from; both only for the report.
	Model, Source string
	// ReleaseFrom and ReleaseTo are the release families ("2.3", see Era)
	// the model stands for; when the text's era excludes them, the report
	// says so. Empty: not checked.
	ReleaseFrom, ReleaseTo string
	// Space is the prediction of zfs list and zpool list, compared when
	// the text holds those tables; nil: they are left out (and a text of
	// nothing else is unusable).
	Space *space.Prediction
	// SpaceTolerance is how far (relative: 0.01 = 1%) each predicted zfs
	// list or zpool list figure may lie outside the values its printed
	// figure stands for and still count as equal; 0: it must print alike.
	SpaceTolerance float64
	// Dedup is the model's dedup property, for the report.
	Dedup string
}

// Cell is one cell of the side-by-side table.
type Cell struct {
	Column    string         `json:"column"`
	Predicted uint64         `json:"predicted"`
	Actual    *nicenum.Value `json:"actual"` // nil: the actual table has no such row
	Equal     bool           `json:"equal"`
	Diff      float64        `json:"difference"` // predicted − the nearest actual value; 0 when equal
	// RelPct is (predicted − the middle of the actual interval) / that
	// middle, in percent; nil when equal or when there is no actual value.
	RelPct *float64 `json:"relative_pct,omitempty"`
	// WithinTolerance: equal only by Options.CellTolerance.
	WithinTolerance bool `json:"within_tolerance,omitempty"`
	bytes           bool
}

// Row is one bucket (or the Total row) side by side.
type Row struct {
	Label     string  `json:"refcnt"`
	Bucket    int     `json:"bucket"` // -1: Total
	Predicted bool    `json:"in_prediction"`
	Actual    bool    `json:"in_actual"`
	Line      int     `json:"actual_line,omitempty"`
	Cells     [8]Cell `json:"cells"`
}

// Equal reports whether every cell of the row is equal.
func (r *Row) Equal() bool {
	for _, c := range r.Cells {
		if !c.Equal {
			return false
		}
	}
	return true
}

// Ratio is one of the four ratios side by side.
type Ratio struct {
	Name      string        `json:"name"`
	Predicted float64       `json:"predicted"`
	Actual    nicenum.Ratio `json:"actual"`
	// FromTotals: the actual text printed no ratio line; Actual is the
	// interval its Total row allows.
	FromTotals bool    `json:"from_totals"`
	Equal      bool    `json:"equal"`
	Diff       float64 `json:"difference"` // predicted − the nearest actual value
}

// Comparison is a prediction set beside what OpenZFS printed.
type Comparison struct {
	Model         string              `json:"model"`
	Source        string              `json:"source"`
	Table         *zdb.HistogramTable `json:"-"`
	TableKind     zdb.TableKind       `json:"actual_kind"`
	TableLine     int                 `json:"actual_line"`
	Era           zdb.Era             `json:"actual_era"`
	Rows          []Row               `json:"rows"`
	Total         *Row                `json:"total"` // nil when the actual table has no Total row
	Ratios        []Ratio             `json:"ratios"`
	Tolerance     float64             `json:"tolerance"`
	CellTolerance float64             `json:"cell_tolerance"`
	// Equal: every cell and ratio is equal and the actual table is complete.
	Equal bool `json:"equal"`
	// Differences says where and by how much, one sentence each.
	Differences []string `json:"differences"`
	// Causes lists what most likely explains the differences.
	Causes []string `json:"likely_causes"`
	// Notes are remarks that do not decide the verdict.
	Notes   []string `json:"notes"`
	Verdict string   `json:"verdict"`
	// Outcome is the verdict as a value.
	Outcome Outcome `json:"-"`
	// Exit is the exit status ddtsim compare gives Outcome, set by the
	// caller for JSON (Compare leaves it 0).
	Exit int `json:"exit"`
	// Predicted is the full prediction, set by the caller for JSON.
	Predicted any `json:"predicted,omitempty"`
	// DDTSize sets the model's DDT size beside the real one, when the
	// actual text has DDT object lines (zdb -D…, zpool status -D); nil
	// otherwise. It does not decide the verdict.
	DDTSize *DDTSize `json:"ddt_size,omitempty"`
	// Space sets the figures of the text's zfs list and zpool list tables
	// beside their prediction; empty when it has none.
	Space          []Figure `json:"space,omitempty"`
	SpaceTolerance float64  `json:"space_tolerance,omitempty"`
}

// DDTSize is the model's DDT (ddtsize.Estimate) beside the real
// one, summed over the DDT objects the text lists. Sizes are bytes; an
// actual size is the span of totals its printed figures allow.
type DDTSize struct {
	Entries          uint64           `json:"entries"`
	PredictedEntries uint64           `json:"predicted_entries"`
	OnDisk           nicenum.Interval `json:"on_disk"`
	PredictedOnDisk  uint64           `json:"predicted_on_disk"`
	InCore           nicenum.Interval `json:"in_core"`
	PredictedInCore  uint64           `json:"predicted_in_core"`
	OnDiskPct        float64          `json:"on_disk_pct"` // how far the model lies outside the span, percent of its middle (0 inside)
	InCorePct        float64          `json:"in_core_pct"`
}

// CompareDDTSize fills c.DDTSize from the model's DDT estimate (entries,
// bytes on disk and in core) and the DDT objects of the actual text, and
// adds a note; no objects (a zdb -S text) leave c as it is.
func (c *Comparison) CompareDDTSize(entries, onDisk, inCore uint64, actual *zdb.Parsed) {
	if len(actual.Objects) == 0 {
		return
	}
	d := &DDTSize{PredictedEntries: entries, PredictedOnDisk: onDisk, PredictedInCore: inCore}
	d.Entries, d.OnDisk, d.InCore = actual.DDTTotals()
	d.OnDiskPct, d.InCorePct = 100*d.OnDisk.Outside(d.PredictedOnDisk), 100*d.InCore.Outside(d.PredictedInCore)
	c.DDTSize = d
	c.Notes = append(c.Notes, fmt.Sprintf("DDT size: the text's objects hold %d entries, %s on disk, %s in core; the model of the scanned files: %d entries, %s on disk (%+.1f%%), %s in core (%+.1f%%) — "+
		"alike when the pool holds just these files, written with dedup on and its dedup log flushed (ddtsim models a pool filled by one copy)",
		d.Entries, spanText(d.OnDisk), spanText(d.InCore), d.PredictedEntries, nicenum.Format(d.PredictedOnDisk, true), d.OnDiskPct, nicenum.Format(d.PredictedInCore, true), d.InCorePct))
}

// spanText prints a span of bytes: one figure when it is one value.
func spanText(s nicenum.Interval) string {
	lo, hi := nicenum.Format(s.Lo, true), nicenum.Format(s.Hi, true)
	if lo == hi {
		return lo // "124M", not "124M–124M"
	}
	return lo + "–" + hi
}

// ErrUnusable wraps every reason Compare cannot compare.
var ErrUnusable = errors.New("nothing to compare with")

// Compare sets the predicted histogram beside the primary table of the
// parsed text (Parsed.Primary) and decides whether they are equal within
// the text's display precision. It fails (wrapping ErrUnusable) when the
// text has no usable table.
func Compare(pred *ddt.Histogram, actual *zdb.Parsed, opts Options) (*Comparison, error) {
	t := actual.Primary()
	if t != nil && t.Estimate {
		// Found by a new user: ddtsim --read's own table, compared as
		// what a pool held.
		return nil, fmt.Errorf("%w: the table (line %d) is ddtsim's ESTIMATE from a --read, not what zdb printed for a pool", ErrUnusable, t.Line)
	}
	if t == nil && len(actual.Lists) > 0 {
		c := &Comparison{
			Model: opts.Model, Source: opts.Source, Era: actual.Era,
			Rows: []Row{}, Ratios: []Ratio{}, Differences: []string{}, Causes: []string{}, Notes: []string{},
		}
		if err := c.addSpace(actual, opts); err != nil {
			return nil, err
		}
		return c, nil
	}
	if t == nil {
		why := "no DDT histogram table (nor a zfs list or zpool list table) in it"
		if actual.Usable() {
			why = "it has DDT sizes but no histogram table"
		}
		return nil, fmt.Errorf("%w: %s", ErrUnusable, why)
	}
	if t.Errors > 0 {
		return nil, fmt.Errorf("%w: the %s has %s (see the diagnostics); a verdict would be a guess", ErrUnusable, t.Name(), english.Count(t.Errors, "unreadable row"))
	}
	c := &Comparison{
		Model: opts.Model, Source: opts.Source, Table: t, TableKind: t.Kind, TableLine: t.Line,
		Era: actual.Era, Tolerance: opts.Tolerance, CellTolerance: opts.CellTolerance,
		Rows: []Row{}, Differences: []string{}, Causes: []string{}, Notes: []string{},
	}
	actualRows := map[int]*zdb.Row{}
	for i := range t.Rows {
		actualRows[t.Rows[i].Bucket] = &t.Rows[i]
	}
	for h := range pred {
		ar := actualRows[h]
		if pred[h].Allocated.Blocks == 0 && ar == nil {
			continue
		}
		row := compareRow(nicenum.Format(uint64(1)<<h, false), h, pred[h], pred[h].Allocated.Blocks != 0, ar, opts.BytesSuffix, opts.CellTolerance)
		c.Rows = append(c.Rows, row)
	}
	total := pred.Total()
	if t.Total != nil {
		row := compareRow("Total", -1, total, true, t.Total, opts.BytesSuffix, opts.CellTolerance)
		c.Total = &row
	}
	c.compareRatios(total, t, opts.Tolerance)

	// Notes about the actual text.
	switch t.Kind {
	case zdb.KindAggregated, zdb.KindStatus, zdb.KindObject:
		c.Notes = append(c.Notes, "the actual table is a real DDT ("+t.Description()+"): it holds only blocks written with dedup on; ddtsim predicts zdb -S, which counts all file data blocks whether dedup is on or not")
	case zdb.KindUnknown:
		c.Notes = append(c.Notes, "the actual table has no title line: read as a DDT histogram of unknown origin")
	}
	if n := len(actual.Tables); n > 1 {
		c.Notes = append(c.Notes, fmt.Sprintf("the text holds %d tables; compared with the %s", n, t.Name()))
	}
	var eraNote string
	if opts.ReleaseFrom != "" && len(actual.Era.Evidence) > 0 && !actual.Era.Conflict {
		if actual.Era.Excludes(opts.ReleaseFrom, opts.ReleaseTo) {
			eraNote = fmt.Sprintf("the actual text is from %s, but the model is of another release: pass --release to match it", actual.Era.Text)
		}
	}
	for _, ch := range actual.Failed() {
		c.Notes = append(c.Notes, fmt.Sprintf("the actual text contradicts itself (line %d, %s): %s", ch.Line, ch.Name, ch.Detail))
	}

	// Verdict.
	cells, diffCells := 0, 0
	for _, r := range c.allRows() {
		for _, cell := range r.Cells {
			cells++
			if !cell.Equal {
				diffCells++
			}
		}
	}
	diffRatios := 0
	for _, r := range c.Ratios {
		if !r.Equal {
			diffRatios++
		}
	}
	c.describeDifferences()
	complete := t.Complete()
	if actual.Truncated {
		c.Notes = append(c.Notes, "the actual text looks cut short (see its diagnostics)")
	}
	switch {
	case diffCells == 0 && diffRatios == 0 && complete:
		c.Equal = true
		c.Outcome = Equal
		rows := fmt.Sprintf("%d buckets and the Total row", len(c.Rows))
		if c.Total == nil {
			rows = fmt.Sprintf("%d buckets", len(c.Rows))
		}
		c.Verdict = fmt.Sprintf("EQUAL within display precision: all %d cells (%s) and the %d ratios", cells, rows, len(c.Ratios))
		if opts.Tolerance > 0 {
			c.Verdict += fmt.Sprintf(" (ratios within %g)", opts.Tolerance)
		}
		if opts.CellTolerance > 0 {
			c.Verdict += fmt.Sprintf(" (cells within %s)", percent(opts.CellTolerance))
		}
	case diffCells == 0 && diffRatios == 0:
		c.Outcome = CannotTell
		c.Verdict = fmt.Sprintf("CANNOT TELL: the %d cells that are there agree, but the actual text is incomplete (cut short, or no Total row), so rows may be missing", cells)
	default:
		c.Outcome = Different
		c.Verdict = fmt.Sprintf("DIFFERENT: %d of %d cells and %d of %d ratios differ", diffCells, cells, diffRatios, len(c.Ratios))
		if !complete {
			c.Verdict += " (and the actual text is incomplete)"
		}
		c.Causes = likelyCauses(c, total, t)
		if eraNote != "" {
			c.Causes = append([]string{eraNote}, c.Causes...)
		}
	}
	if eraNote != "" && c.Equal {
		c.Notes = append(c.Notes, eraNote)
	}
	if len(actual.Lists) > 0 {
		if err := c.addSpace(actual, opts); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// addSpace compares the text's zfs list and zpool list tables
// (compareSpace) and folds them into the verdict: any figure beyond the
// tolerance makes the comparison Different. With no DDT table (c.Table
// nil) they are the verdict, and a text with none of the columns compared
// is unusable.
func (c *Comparison) addSpace(actual *zdb.Parsed, opts Options) error {
	if opts.Space == nil {
		if c.Table == nil {
			return fmt.Errorf("%w: the text holds only zfs list or zpool list tables, and there is no prediction of them", ErrUnusable)
		}
		c.Notes = append(c.Notes, "the text holds zfs list or zpool list tables, but there is no prediction of them: left out")
		return nil
	}
	c.SpaceTolerance = opts.SpaceTolerance
	unreadable := c.compareSpace(opts.Space, actual.Lists, opts)
	if len(c.Space) == 0 {
		if c.Table == nil && len(unreadable) > 0 {
			return fmt.Errorf("%w: no figure of its zfs list and zpool list tables could be read (%s)", ErrUnusable, strings.Join(unreadable, ", "))
		}
		if c.Table == nil {
			return fmt.Errorf("%w: its zfs list and zpool list tables have none of the columns ddtsim predicts (%s)", ErrUnusable, spaceColumnNames)
		}
		c.Notes = append(c.Notes, "the text's zfs list and zpool list tables have none of the columns ddtsim predicts ("+spaceColumnNames+"): left out")
		return nil
	}
	n, k := 0, c.spaceDiffers()
	count := map[string]int{}
	for _, f := range c.Space {
		count[f.Command]++
		n++
	}
	var what []string
	for _, kind := range []string{zfslist.Zfs, zfslist.Zpool} {
		if count[kind] > 0 {
			what = append(what, fmt.Sprintf("%d %s", count[kind], kind))
		}
	}
	figures := strings.Join(what, " and ") + " figures"
	all, differ := "all ", fmt.Sprintf("%d of %d figures differ", k, n)
	if n == 1 {
		// "the 1 zfs list figure", not "all 1 zfs list figures"
		// (found by a new user).
		figures = strings.TrimSuffix(figures, "s")
		all, differ = "the ", "the 1 figure differs"
	}
	tol := percent(opts.SpaceTolerance)
	c.describeSpace()
	switch {
	case c.Table == nil && k == 0:
		c.Outcome, c.Equal = Equal, true
		c.Verdict = fmt.Sprintf("EQUAL within %s: %s%s", tol, all, figures)
	case c.Table == nil:
		c.Outcome, c.Equal = Different, false
		c.Verdict = fmt.Sprintf("DIFFERENT: %s by more than %s (%s)", differ, tol, figures)
	case k == 0:
		c.Verdict += fmt.Sprintf("; and %s%s within %s", all, figures, tol)
	case c.Outcome == Different:
		c.Verdict += fmt.Sprintf("; and %d of %d zfs list / zpool list figures differ by more than %s", k, n, tol)
	default:
		c.Verdict = fmt.Sprintf("DIFFERENT: %d of %d zfs list / zpool list figures differ by more than %s (the DDT table: %s)", k, n, tol, c.Verdict)
		c.Outcome, c.Equal = Different, false
	}
	if k > 0 {
		c.Causes = append(c.Causes, c.spaceCauses(opts.Space.Other, opts)...)
	}
	return nil
}

func (c *Comparison) allRows() []*Row {
	rows := make([]*Row, 0, len(c.Rows)+1)
	for i := range c.Rows {
		rows = append(rows, &c.Rows[i])
	}
	if c.Total != nil {
		rows = append(rows, c.Total)
	}
	return rows
}

func compareRow(label string, h int, p ddt.Bucket, inPred bool, a *zdb.Row, bytes bool, celltol float64) Row {
	row := Row{Label: label, Bucket: h, Predicted: inPred, Actual: a != nil}
	pv := [8]uint64{p.Allocated.Blocks, p.Allocated.LSize, p.Allocated.PSize, p.Allocated.DSize,
		p.Referenced.Blocks, p.Referenced.LSize, p.Referenced.PSize, p.Referenced.DSize}
	var av [8]*nicenum.Value
	if a != nil {
		row.Line = a.Line
		av = a.Cells()
	}
	for i := range row.Cells {
		cell := Cell{Column: zdb.ColumnNames[i], Predicted: pv[i], bytes: bytes && i%4 != 0}
		switch {
		case av[i] == nil:
			cell.Diff = float64(pv[i])
		case av[i].Contains(pv[i]):
			cell.Equal = true
		case celltol > 0 && math.Abs(av[i].Distance(pv[i])) <= celltol*math.Max(1, av[i].Mid()):
			cell.Equal = true
			cell.WithinTolerance = true
		default:
			v := *av[i]
			cell.Diff = v.Distance(pv[i])
			if cell.Diff == 0 { // the one excluded integer: off by at least 1
				cell.Diff = 1
			}
			if m := v.Mid(); m > 0 {
				rel := 100 * (float64(pv[i]) - m) / m
				cell.RelPct = &rel
			}
		}
		if av[i] != nil {
			v := *av[i]
			cell.Actual = &v
		}
		row.Cells[i] = cell
	}
	return row
}

// compareRatios compares the predicted ratio line with the actual one, or
// with the ratios the actual Total row allows when no line was printed.
func (c *Comparison) compareRatios(total ddt.Bucket, t *zdb.HistogramTable, tol float64) {
	pr, ok := ddt.RatiosOf(total)
	if !ok {
		return
	}
	names := []string{"dedup", "compress", "copies", "dedup * compress / copies"}
	pv := []float64{pr.Dedup, pr.Compress, pr.Copies, pr.Combined}
	var av []nicenum.Ratio
	fromTotals := false
	switch {
	case t.Ratios != nil:
		av = []nicenum.Ratio{t.Ratios.Dedup, t.Ratios.Compress, t.Ratios.Copies, t.Ratios.Combined}
	case t.Total != nil && t.Total.Allocated.Blocks.Hi > 0:
		fromTotals = true
		r := t.Total.AllowedRatios()
		av = r[:]
	default:
		return
	}
	for i := range names {
		d := av[i].Distance(pv[i])
		c.Ratios = append(c.Ratios, Ratio{Name: names[i], Predicted: pv[i], Actual: av[i], FromTotals: fromTotals,
			Equal: math.Abs(d) <= tol, Diff: d})
	}
}

// describeDifferences fills Differences: one sentence per row that
// differs, naming the bucket and, for each differing column, both values,
// the difference in display units and in percent; then one per differing
// ratio.
func (c *Comparison) describeDifferences() {
	for _, r := range c.allRows() {
		where := "Total row"
		if r.Bucket >= 0 {
			where = fmt.Sprintf("refcnt %s bucket", r.Label)
		}
		switch {
		case !r.Actual:
			c.Differences = append(c.Differences, fmt.Sprintf("%s: predicted (%s, %s referenced LSIZE) but not in the actual table",
				where, blocksText(nicenum.Format(r.Cells[0].Predicted, false)), fmtCell(r.Cells[5].Predicted, r.Cells[5].bytes)))
			continue
		case !r.Predicted:
			c.Differences = append(c.Differences, fmt.Sprintf("%s: in the actual table (line %d: %s, %s referenced LSIZE) but not predicted",
				where, r.Line, blocksText(r.Cells[0].Actual.Text), r.Cells[5].Actual.Text))
			continue
		}
		var parts []string
		for _, cell := range r.Cells {
			if cell.Equal {
				continue
			}
			rel := ""
			if cell.RelPct != nil {
				rel = fmt.Sprintf(", %+.1f%%", *cell.RelPct)
			}
			parts = append(parts, fmt.Sprintf("%s predicted %s, actual %s (%s%s)",
				cell.Column, fmtCell(cell.Predicted, cell.bytes), cell.Actual.Text, diffText(cell), rel))
		}
		if len(parts) > 0 {
			c.Differences = append(c.Differences, fmt.Sprintf("%s (line %d): %s", where, r.Line, strings.Join(parts, "; ")))
		}
	}
	for _, r := range c.Ratios {
		if r.Equal {
			continue
		}
		c.Differences = append(c.Differences, fmt.Sprintf("ratio %s: predicted %.2f (%.4f), actual %s (%+.4f beyond display precision%s)",
			r.Name, r.Predicted, r.Predicted, r.Actual.Text, r.Diff, tolText(c.Tolerance)))
	}
}

func tolText(t float64) string {
	if t == 0 {
		return ""
	}
	return fmt.Sprintf(", tolerance %g", t)
}

func fmtCell(v uint64, bytes bool) string { return nicenum.Format(v, bytes) }

// diffText shows a cell's difference in display units: "=", "+128K",
// "-3", or "≠" for a cell off by the one integer its text excludes.
func diffText(c Cell) string {
	switch {
	case c.Equal:
		return "="
	case c.Actual == nil:
		return "+" + nicenum.Format(c.Predicted, c.bytes)
	case c.Actual.Except != 0 && c.Predicted == c.Actual.Except:
		return "≠"
	}
	d := c.Diff
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return sign + nicenum.Format(uint64(math.Round(d)), c.bytes)
}

// likelyCauses reads the pattern of the differences: which totals differ
// says what kind of difference it is.
func likelyCauses(c *Comparison, pred ddt.Bucket, t *zdb.HistogramTable) []string {
	var causes []string
	if t.Total == nil {
		return []string{"the actual table has no Total row: compare the differing buckets above"}
	}
	a := t.Total
	eq := func(v nicenum.Value, x uint64) int { // -1 predicted below, 0 equal, 1 above
		switch {
		case v.Contains(x) || v.Interval().Contains(x):
			return 0
		case x < v.Lo:
			return -1
		}
		return 1
	}
	refBlocks := eq(a.Referenced.Blocks, pred.Referenced.Blocks)
	refL := eq(a.Referenced.LSize, pred.Referenced.LSize)
	refP := eq(a.Referenced.PSize, pred.Referenced.PSize)
	refD := eq(a.Referenced.DSize, pred.Referenced.DSize)
	alloc := eq(a.Allocated.Blocks, pred.Allocated.Blocks)
	real := t.Kind == zdb.KindAggregated || t.Kind == zdb.KindStatus || t.Kind == zdb.KindObject
	// The same data cut into blocks of another size: about the same
	// logical size (within 10%: the last record of a file is padded to the
	// recordsize, so LSIZE moves a little with it) in a number of blocks
	// that differs by more than 10% and far more than LSIZE does.
	blocksLog := math.Abs(logRatio(a.Referenced.Blocks.Mid(), pred.Referenced.Blocks))
	lsizeLog := math.Abs(logRatio(a.Referenced.LSize.Mid(), pred.Referenced.LSize))
	sameLSize := refBlocks != 0 && lsizeLog <= math.Log(1.1) && blocksLog > math.Log(1.1) && blocksLog > 3*lsizeLog
	// Or fewer blocks on one side holding no less logical data: blocks
	// of a larger recordsize, whose last record in each file is padded to
	// it (LSIZE grows with the recordsize). More data (other datasets,
	// snapshots, zeros stored, files missing from the pool) moves blocks
	// and LSIZE the same way.
	padded := blocksLog > math.Log(1.1) && (refBlocks < 0 && refL >= 0 || refBlocks > 0 && refL <= 0)
	recordsize := sameLSize || padded
	// Sectors of another size: on one side DSIZE equals PSIZE (the copies
	// ratio is 1.00: every PSIZE is whole sectors, as on 512-byte sectors
	// or with a smaller ashift), on the other it does not (blocks stored
	// uncompressed waste part of a larger sector). Another compression
	// alone leaves both sides alike.
	sectors := false
	var compress *Ratio
	for i, r := range c.Ratios {
		if r.Name == "copies" && !r.Equal {
			sectors = (r.Actual.Lo <= 1 && 1 <= r.Actual.Hi) != (r.Predicted < 1.005)
		}
		if r.Name == "compress" && !r.Equal {
			compress = &c.Ratios[i]
		}
	}
	switch {
	case recordsize && !sameLSize:
		larger, fewer, less := "larger", "more", "more"
		if refBlocks < 0 {
			larger, fewer, less = "smaller", "fewer", "less"
		}
		causes = append(causes, fmt.Sprintf("%s blocks predicted than the pool holds (%s predicted, averaging %s; %s actual, averaging %s) for no %s logical size (%s predicted, %s actual: "+
			"the last record of each file is padded to the recordsize, so larger records add LSIZE): "+
			"the files were written with a %s recordsize than modelled (or, for volumes, volblocksize); check -o recordsize (a recordsize change affects only blocks written after it, so files may hold blocks of both)",
			fewer, nicenum.Format(pred.Referenced.Blocks, false), nicenum.Format(avg(float64(pred.Referenced.LSize), float64(pred.Referenced.Blocks)), true),
			a.Referenced.Blocks.Text, nicenum.Format(avg(a.Referenced.LSize.Mid(), a.Referenced.Blocks.Mid()), true),
			less, nicenum.Format(pred.Referenced.LSize, true), a.Referenced.LSize.Text, larger))
	case recordsize:
		larger := "larger"
		if refBlocks < 0 {
			larger = "smaller"
		}
		causes = append(causes, fmt.Sprintf("about the same logical size (%s predicted, %s actual) in a different number of blocks (%s predicted, averaging %s; %s actual, averaging %s): "+
			"the files were written with a %s recordsize than modelled (or, for volumes, volblocksize); check -o recordsize (a recordsize change affects only blocks written after it, so files may hold blocks of both)",
			nicenum.Format(pred.Referenced.LSize, true), a.Referenced.LSize.Text, nicenum.Format(pred.Referenced.Blocks, false), nicenum.Format(avg(float64(pred.Referenced.LSize), float64(pred.Referenced.Blocks)), true),
			a.Referenced.Blocks.Text, nicenum.Format(avg(a.Referenced.LSize.Mid(), a.Referenced.Blocks.Mid()), true), larger))
	case refBlocks > 0 && real:
		causes = append(causes, "more blocks predicted than the real DDT holds: a real DDT holds only blocks written while dedup was on (data written before dedup was enabled, or in datasets without dedup, is not in it); compare with zdb -S instead")
	case refBlocks < 0:
		causes = append(causes, "the pool holds more data blocks than the scanned files: all-zero records stored as blocks there (compression=off and a copy that wrote the zeros: check -o compression and --sparse never), other datasets or zvols, snapshots and clones keeping deleted or overwritten blocks, or extended attributes stored as files (xattr=dir); scan everything the pool holds, or compare a pool holding only these files")
	case refBlocks > 0:
		causes = append(causes, "fewer blocks on the pool than predicted: some scanned files are not on the pool (or not yet written out), or zero-filled records became holes there (compression on, or a sparse copy: check --sparse), or the files were written with a larger recordsize")
	}
	if refBlocks == 0 && refL != 0 {
		causes = append(causes, "same number of blocks but a different logical size: the files were written with a different recordsize (blocks keep the size they were written with, so a recordsize change affects only later writes)")
	}
	if refL == 0 && refP != 0 && refD != 0 && sectors {
		causes = append(causes, "same logical size but different PSIZE and DSIZE, and DSIZE equals PSIZE on one side only (copies ratio 1.00): the pool's sector size (ashift) differs from the model — PSIZE is rounded to whole sectors (0.6.5+), and a larger sector leaves part of it unused under blocks stored uncompressed; check --ashift (and --vdev) before the compression")
	}
	if refL == 0 && refP != 0 {
		cause := "same logical size but a different compressed size: different compression on disk — the compression property (default off before 2.2, lz4 from 2.2), blocks written before a compression change (existing blocks keep theirs), or a compressor whose output differs from the model (gzip, zstd versions)"
		// Sectors of another size move PSIZE by less than a 4K sector a
		// block (rounding up to whole sectors); another compressor
		// usually by more.
		if pred.Referenced.Blocks > 0 && math.Abs(a.Referenced.PSize.Mid()-float64(pred.Referenced.PSize))/float64(pred.Referenced.Blocks) < 4096 {
			cause += " — or a different sector size: PSIZE is rounded up to whole sectors of 2^ashift bytes (0.6.5+), so a model of 512-byte sectors predicts less than a 4K pool holds (less than a sector a block, as here); check -o compression, --ashift and --release"
		} else {
			cause += "; check -o compression and --release"
		}
		causes = append(causes, cause)
	} else if compress != nil && refBlocks != 0 && !recordsize {
		causes = append(causes, fmt.Sprintf("the compression ratio differs too (%.2f predicted, %s actual): the pool's compression differs from the model, and with compression=off all-zero records are stored as blocks (one content, a high refcnt) instead of holes; check -o compression and --sparse",
			compress.Predicted, compress.Actual.Text))
	}
	if refP == 0 && refD != 0 {
		causes = append(causes, "same compressed size but different allocated size (DSIZE): the pool's ashift, its vdev layout (raidz/dRAID parity and padding) or the copies property differ from the model; check --ashift, --vdev and -o copies")
	}
	if refBlocks == 0 && refL == 0 && alloc != 0 {
		causes = append(causes, "same references but a different number of unique blocks: duplicates differ — encrypted datasets (equal data under different keys does not match), files changed between the scan and the zdb run, or a different recordsize alignment of the duplicates")
	}
	cellsDiffer := false
	for _, r := range c.allRows() {
		cellsDiffer = cellsDiffer || !r.Equal()
	}
	if !cellsDiffer {
		return append(causes, "every cell agrees within display precision but a ratio does not: the exact totals differ by less than the table can show (up to half a unit of the last printed digit); a small difference, which --tolerance accepts")
	}
	if len(causes) == 0 {
		causes = append(causes, "the totals agree but single buckets do not: some blocks have a different reference count than predicted — files that changed between the scan and the zdb run, snapshots or clones adding references, or block cloning (cp --reflink, 2.2+), which zdb -S counts as references")
	}
	return causes
}

// logRatio is ln(actual / predicted); ±Inf when one of them is 0 (and
// 0 when both are).
func logRatio(actual float64, predicted uint64) float64 {
	if actual == 0 && predicted == 0 {
		return 0
	}
	return math.Log(actual / float64(predicted))
}

// avg is a / b rounded, 0 when b is 0.
func avg(a, b float64) uint64 {
	if b == 0 {
		return 0
	}
	return uint64(math.Round(a / b))
}

// WriteJSON writes c as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(c)
}

// WriteText writes the side-by-side table, the ratios and the verdict.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	pr := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	pr("predicted: ddtsim, %s\n", c.Model)
	if c.Table != nil {
		pr("actual:    %s: %s, line %d (era: %s)\n", c.Source, c.Table.Description(), c.TableLine, c.Era.Text)
		if len(c.Space) > 0 {
			pr("           and %s\n", c.spaceSources())
		}
		pr("\n")
		c.writeTable(pr)
	} else {
		pr("actual:    %s: %s\n", c.Source, c.spaceSources())
	}
	c.writeSpace(pr)
	pr("\n%s\n", c.Verdict)
	if len(c.Differences) > 0 {
		pr("Where:\n")
		const max = 20
		for i, d := range c.Differences {
			if i == max {
				pr("  ... and %d more (see --json)\n", len(c.Differences)-max)
				break
			}
			pr("  %s\n", d)
		}
	}
	if len(c.Causes) > 0 {
		pr("Likely causes:\n")
		for _, s := range c.Causes {
			pr("  - %s\n", s)
		}
	}
	for _, n := range c.Notes {
		pr("Note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable writes the side-by-side histogram and the ratios.
func (c *Comparison) writeTable(pr func(string, ...any)) {
	pr("%-6s %-10s %8s %8s %8s %8s %8s %8s %8s %8s\n", "bucket", "", "alloc", "", "", "", "refer", "", "", "")
	pr("%-6s %-10s %8s %8s %8s %8s %8s %8s %8s %8s\n", "refcnt", "", "blocks", "LSIZE", "PSIZE", "DSIZE", "blocks", "LSIZE", "PSIZE", "DSIZE")
	for _, r := range c.allRows() {
		var p, a, d [8]string
		for i, cell := range r.Cells {
			p[i] = "-"
			if r.Predicted {
				p[i] = fmtCell(cell.Predicted, cell.bytes)
			}
			a[i] = "-"
			if cell.Actual != nil {
				a[i] = cell.Actual.Text
			}
			d[i] = diffText(cell)
			if !r.Predicted && cell.Actual != nil {
				d[i] = "-" + cell.Actual.Text
			}
		}
		line := func(label, kind string, v [8]string) {
			pr("%6s %-10s %8s %8s %8s %8s %8s %8s %8s %8s\n", label, kind, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7])
		}
		line(r.Label, "predicted", p)
		line("", "actual", a)
		if r.Equal() {
			line("", "", [8]string{"=", "=", "=", "=", "=", "=", "=", "="})
		} else {
			line("", "difference", d)
		}
	}
	if c.Total == nil {
		pr("(the actual table has no Total row)\n")
	}
	if len(c.Ratios) > 0 {
		pr("\n%-26s %10s %12s %12s\n", "ratio", "predicted", "actual", "difference")
		for _, r := range c.Ratios {
			diff := "="
			if r.Diff != 0 {
				diff = fmt.Sprintf("%+.4f", r.Diff)
				if r.Equal {
					diff += " (ok)"
				}
			}
			act := r.Actual.Text
			if r.FromTotals {
				act += "*"
			}
			pr("%-26s %10.4f %12s %12s\n", r.Name, r.Predicted, act, diff)
		}
		if c.Ratios[0].FromTotals {
			pr("* no ratio line in the actual text: the range its Total row allows\n")
		}
	}
}

// percent writes a fraction as a percentage of at most 4 significant
// digits: 0.01 → "1%", 1e-9 → "1e-07%" (not 1.0000000000000001e-07%).
func percent(frac float64) string {
	return strconv.FormatFloat(100*frac, 'g', 4, 64) + "%"
}

// blocksText is a count of blocks as zdb prints it ("1", "2.50K") with its
// noun: "1 block", "2.50K blocks".
func blocksText(n string) string {
	if n == "1" {
		return "1 block"
	}
	return n + " blocks"
}
