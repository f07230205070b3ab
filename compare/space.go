package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfslist"
)

// Figure is one figure of zfs list or zpool list beside the model's
// prediction of it (package space): a size in bytes or a ratio.
type Figure struct {
	Command string `json:"command"` // zfslist.Zfs or zfslist.Zpool
	Name    string `json:"name"`    // the row: the dataset or the pool, escaped (internal/escape: control bytes, bad UTF-8)
	Column  string `json:"column"`  // as printed: USED, LREFER, ALLOC, DEDUP, ...
	Line    int    `json:"actual_line"`
	// Predicted is bytes, or the ratio as zfs prints it (two decimals,
	// truncated).
	Predicted float64 `json:"predicted"`
	Actual    string  `json:"actual"` // as printed
	// Lo and Hi are the values that print as Actual: one with -p (and
	// for ratios), a span for human sizes (41.7M).
	Lo float64 `json:"actual_lo"`
	Hi float64 `json:"actual_hi"`
	// DiffPct is (Predicted − the middle of [Lo, Hi]) / that middle, in
	// percent: +Inf when the actual figure is 0 and the predicted one not
	// (JSON: null).
	DiffPct float64 `json:"difference_pct"`
	// Equal: Predicted lies in [Lo, Hi] widened by the space tolerance
	// (Options.SpaceTolerance) on either side.
	Equal bool `json:"equal"`
	Ratio bool `json:"ratio,omitempty"`
}

// MarshalJSON writes f with an infinite DiffPct as null (JSON has no
// infinity: found by a new user, compare --json failed on an actual 0).
func (f Figure) MarshalJSON() ([]byte, error) {
	type plain Figure
	out := struct {
		plain
		DiffPct *float64 `json:"difference_pct"`
	}{plain: plain(f)}
	if !math.IsInf(f.DiffPct, 0) && !math.IsNaN(f.DiffPct) {
		out.DiffPct = &f.DiffPct
	}
	return json.Marshal(out)
}

// What each column of zfs list and zpool list is of the prediction
// (space.Figures), in the order they are compared.
var spaceColumns = []struct {
	cmd, col string
	ratio    bool
	of       func(*space.Figures) float64
}{
	{zfslist.Zfs, "USED", false, func(f *space.Figures) float64 { return float64(f.Used) }},
	{zfslist.Zfs, "USEDDS", false, func(f *space.Figures) float64 { return float64(f.UsedDS) }},
	{zfslist.Zfs, "REFER", false, func(f *space.Figures) float64 { return float64(f.UsedDS) }}, // no snapshots: REFER is USEDDS
	{zfslist.Zfs, "LUSED", false, func(f *space.Figures) float64 { return float64(f.LUsed) }},
	{zfslist.Zfs, "LREFER", false, func(f *space.Figures) float64 { return float64(f.LRefer) }},
	{zfslist.Zfs, "RATIO", true, func(f *space.Figures) float64 { return f.CompressRatio }},
	{zfslist.Zpool, "ALLOC", false, func(f *space.Figures) float64 { return float64(f.Alloc) }},
	{zfslist.Zpool, "DEDUP", true, func(f *space.Figures) float64 { return f.Dedup }},
}

// spaceColumnNames lists the columns compared, for messages.
const spaceColumnNames = "zfs list USED, USEDDS, REFER, LUSED, LREFER, RATIO; zpool list ALLOC, DEDUP"

// DefaultSpaceTolerance is the model's measured bound on the golden pools:
// every predicted zfs list and zpool list size within 1%.
const DefaultSpaceTolerance = 0.01

// compareSpace sets the prediction beside the first row (the pool's root
// dataset, the pool) of the text's first zfs list and first zpool list
// tables, and adds notes about what it could not use.
//
// It returns the figures found but unreadable ("zfs list USED \"x\" (line
// 3)"), also noted, so that a text with nothing else can be refused for
// what it is.
func (c *Comparison) compareSpace(pred *space.Prediction, lists []*zfslist.Table, opts Options) (unreadable []string) {
	seen := map[string]bool{}
	for _, t := range lists {
		if seen[t.Kind] {
			c.Notes = append(c.Notes, fmt.Sprintf("the text holds another %s table (line %d): compared with the first only", t.Kind, t.Line))
			continue
		}
		seen[t.Kind] = true
		for i, col := range t.Columns {
			if j := indexOf(t.Columns, col); j < i {
				c.Notes = append(c.Notes, fmt.Sprintf("the %s header (line %d) names %s twice: the first is compared", t.Kind, t.Line, col))
			}
		}
		name := t.Rows[0][0]
		if t.Kind == zfslist.Zfs && strings.Contains(name, "/") {
			c.Notes = append(c.Notes, fmt.Sprintf("the zfs list table's first row is %s, a child dataset: ddtsim predicts the pool's root dataset, which received the copy", escape.Path(name)))
		}
		for _, sc := range spaceColumns {
			if sc.cmd != t.Kind {
				continue
			}
			col := indexOf(t.Columns, sc.col)
			if col < 0 {
				continue
			}
			// where names the figure in the messages: zfs list USED "x" (line 3).
			where := fmt.Sprintf("%s %s %q (line %d)", t.Kind, sc.col, t.Rows[0][col], t.RowLines[0])
			if t.Rows[0][col] == "-" { // zfs prints no value there
				unreadable = append(unreadable, where)
				continue
			}
			f := Figure{Command: t.Kind, Name: escape.Path(name), Column: sc.col, Line: t.RowLines[0], Predicted: sc.of(&pred.Figures),
				Actual: t.Rows[0][col], Ratio: sc.ratio}
			if sc.ratio {
				r, ok := t.Ratio(name, sc.col)
				if !ok {
					c.Notes = append(c.Notes, where+" is not a ratio: left out")
					unreadable = append(unreadable, where)
					continue
				}
				f.Lo, f.Hi = r, r
			} else {
				v, ok := t.Size(name, sc.col)
				if !ok {
					c.Notes = append(c.Notes, where+" is not a size zfs prints: left out")
					unreadable = append(unreadable, where)
					continue
				}
				f.Lo, f.Hi = float64(v.Lo), float64(v.Hi)
			}
			f.Equal, f.DiffPct = figureEqual(f.Predicted, f.Lo, f.Hi, opts.SpaceTolerance)
			c.Space = append(c.Space, f)
		}
	}
	if z, p := lists0(lists, zfslist.Zfs), lists0(lists, zfslist.Zpool); z != "" && p != "" && strings.SplitN(z, "/", 2)[0] != p {
		c.Notes = append(c.Notes, fmt.Sprintf("the zfs list row is of %s, the zpool list row of pool %s: are they of the same pool?", escape.Path(z), escape.Path(p)))
	}
	return unreadable
}

// figureEqual reports whether x lies within [lo, hi] widened by tol
// (relative) on either side, and how far it is from the middle, percent.
func figureEqual(x, lo, hi, tol float64) (bool, float64) {
	const eps = 1e-9 // ratios: 1.28 − 1.27 is not exactly 0.01
	eq := x >= lo*(1-tol)-eps && x <= hi*(1+tol)+eps
	mid := lo/2 + hi/2
	pct := 0.0
	if mid != 0 {
		pct = 100 * (x - mid) / mid
	} else if x != 0 {
		pct = math.Inf(1)
	}
	return eq, pct
}

// lists0 is the name in the first row of the first table of the kind.
func lists0(lists []*zfslist.Table, kind string) string {
	for _, t := range lists {
		if t.Kind == kind {
			return t.Rows[0][0]
		}
	}
	return ""
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// spaceDiffers counts the figures that differ.
func (c *Comparison) spaceDiffers() int {
	n := 0
	for _, f := range c.Space {
		if !f.Equal {
			n++
		}
	}
	return n
}

// describeSpace adds one sentence per differing figure to Differences.
func (c *Comparison) describeSpace() {
	for _, f := range c.Space {
		if f.Equal {
			continue
		}
		c.Differences = append(c.Differences, fmt.Sprintf("%s %s (line %d, %s): predicted %s, actual %s (%s, beyond the tolerance of %s)",
			f.Command, f.Column, f.Line, f.Name, f.predictedText(), f.Actual, pctText(f.DiffPct), percent(c.SpaceTolerance)))
	}
}

// spaceCauses reads the pattern of the differing figures; other is the
// prediction with dedup the other way (nil: none).
func (c *Comparison) spaceCauses(other *space.Figures, opts Options) []string {
	var causes []string
	if other != nil {
		all := true
		for _, f := range c.Space {
			var of float64
			for _, sc := range spaceColumns {
				if sc.cmd == f.Command && sc.col == f.Column {
					of = sc.of(other)
				}
			}
			if eq, _ := figureEqual(of, f.Lo, f.Hi, opts.SpaceTolerance); !eq {
				all = false
				break
			}
		}
		if all {
			model := ""
			if opts.Dedup != "" {
				model = " (the model has dedup=" + opts.Dedup + ")"
			}
			causes = append(causes, "with dedup the other way round every zfs list and zpool list figure agrees: the pool's data was written with another dedup setting than modelled"+model+"; check -o dedup")
		}
	}
	differ := map[string]bool{}
	for _, f := range c.Space {
		if !f.Equal {
			differ[f.Column] = true
		}
	}
	zfsEqual := true
	for _, f := range c.Space {
		if f.Command == zfslist.Zfs && !f.Equal {
			zfsEqual = false
		}
	}
	switch {
	case differ["ALLOC"] && zfsEqual && len(c.Space) > 2:
		causes = append(causes, "the dataset's figures agree but the pool's ALLOC does not: ALLOC counts raw space (raidz and dRAID parity and padding, each deduplicated block once), the datasets' USED space deflated; check --vdev and --ashift, and whether the pool holds anything else (other datasets, snapshots, a dedup table of earlier data)")
	case differ["RATIO"] && !differ["LUSED"]:
		causes = append(causes, "the logical size agrees but compressratio does not: the data was compressed differently than modelled; check -o compression (existing blocks keep the compression they were written with)")
	default:
		causes = append(causes, "zfs list and zpool list count everything the pool holds: other datasets and volumes, snapshots, files added, changed or deleted since the copy (or not yet synced: run zpool sync first), files not scanned; or the pool's properties differ from the model's: check -o recordsize, -o compression, -o copies, --ashift and --vdev")
	}
	return causes
}

// predictedText prints a predicted figure as the actual one is printed:
// a ratio with two decimals; bytes exactly, and in zfs's human form
// beside them when the actual figure is one.
func (f Figure) predictedText() string {
	if f.Ratio {
		return strconv.FormatFloat(f.Predicted, 'f', 2, 64)
	}
	s := strconv.FormatFloat(f.Predicted, 'f', 0, 64)
	if f.Lo != f.Hi {
		s = nicenum.Format(uint64(f.Predicted), false) + " (" + s + ")"
	}
	return s
}

func pctText(p float64) string {
	if math.IsInf(p, 0) {
		return "+∞%"
	}
	return fmt.Sprintf("%+.2f%%", p)
}

// spaceSources names the rows compared: "zfs list (tank, line 3), zpool
// list (tank, line 6)".
func (c *Comparison) spaceSources() string {
	var s []string
	seen := map[string]bool{}
	for _, f := range c.Space {
		if !seen[f.Command] {
			seen[f.Command] = true
			s = append(s, fmt.Sprintf("%s (%s, line %d)", f.Command, f.Name, f.Line))
		}
	}
	return strings.Join(s, ", ")
}

// writeSpace writes the zfs list and zpool list figures side by side.
func (c *Comparison) writeSpace(pr func(string, ...any)) {
	if len(c.Space) == 0 {
		return
	}
	pr("\n%-18s %-12s %20s %14s %14s\n", "figure", "of", "predicted", "actual", "difference")
	for _, f := range c.Space {
		diff := "="
		if f.DiffPct != 0 {
			diff = pctText(f.DiffPct)
			if f.Equal {
				diff += " (ok)"
			}
		}
		pr("%-18s %-12s %20s %14s %14s\n", f.Command+" "+f.Column, f.Name, f.predictedText(), f.Actual, diff)
	}
	pr("(equal: within the printed value ± %s)\n", percent(c.SpaceTolerance))
}
