package zdb

import (
	"fmt"
	"math"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// Check is one consistency check of a parsed text against itself.
type Check struct {
	Name   string `json:"name"` // totals, ratios, rows, entries, classes, objects
	Line   int    `json:"line"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Failed returns the checks that did not pass.
func (p *Parsed) Failed() []Check {
	var f []Check
	for _, c := range p.Checks {
		if !c.OK {
			f = append(f, c)
		}
	}
	return f
}

// ColumnNames are the names of the eight cells of a Row, in the order of
// Row.Cells.
var ColumnNames = [8]string{
	"allocated blocks", "allocated LSIZE", "allocated PSIZE", "allocated DSIZE",
	"referenced blocks", "referenced LSIZE", "referenced PSIZE", "referenced DSIZE",
}

// Cells returns the row's eight cells in column order: allocated blocks,
// LSIZE, PSIZE, DSIZE, then referenced.
func (r *Row) Cells() [8]*nicenum.Value {
	a, b := r.Allocated.Cells(), r.Referenced.Cells()
	return [8]*nicenum.Value{a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]}
}

// Name names the table in messages: its kind (or DDT object) and its
// first line ("simulated table at line 3").
func (t *HistogramTable) Name() string {
	s := string(t.Kind) + " table"
	if t.Object != "" {
		s = t.Object + " table"
	}
	return fmt.Sprintf("%s at line %d", s, t.Line)
}

// runChecks checks totals against the rows, ratio lines against the
// totals, every row against its bucket, and DDT entry counts against the
// tables. All comparisons are of intervals: two printed numbers disagree
// only when no exact values could have printed both.
func runChecks(p *Parsed) []Check {
	checks := []Check{}
	add := func(name string, line int, problems []string, okDetail string) {
		c := Check{Name: name, Line: line, OK: len(problems) == 0, Detail: okDetail}
		if !c.OK {
			c.Detail = strings.Join(problems, "; ")
		}
		checks = append(checks, c)
	}
	for _, t := range p.Tables {
		if t.Errors > 0 {
			continue
		}
		// Rows against their bucket.
		var probs []string
		for i := range t.Rows {
			probs = append(probs, rowProblems(&t.Rows[i])...)
		}
		add("rows", t.Line, probs, fmt.Sprintf("%s: every row fits its refcnt bucket", t.Name()))
		if t.Total == nil {
			continue
		}
		// Total against the sum of the rows.
		probs = nil
		sum := sumRows(t.Rows)
		for i, v := range t.Total.Cells() {
			if !sum[i].Overlaps(v.Interval()) {
				probs = append(probs, fmt.Sprintf("Total %s is %s (%s) but the rows sum to %s", ColumnNames[i], v.Text, v.Interval(), sum[i]))
			}
		}
		add("totals", t.Total.Line, probs, fmt.Sprintf("%s: the Total row matches the sum of the rows", t.Name()))
		// The ratio line against the Total row.
		if rl := t.Ratios; rl != nil {
			add("ratios", rl.Line, ratioProblems(rl, t.Total), fmt.Sprintf("the ratio line matches the Total row of line %d", t.Total.Line))
		}
	}
	checks = append(checks, entryChecks(p)...)
	checks = append(checks, objectTableChecks(p)...)
	return checks
}

// sumRows returns the interval sums of the rows' cells.
func sumRows(rows []Row) [8]nicenum.Interval {
	var sum [8]nicenum.Interval
	for i := range rows {
		for j, v := range rows[i].Cells() {
			sum[j] = sum[j].Add(v.Interval())
		}
	}
	return sum
}

// rowProblems checks one row against its bucket h: every key in it has a
// refcnt r in [2^h, 2^(h+1)-1], its allocated size x is floor(referenced
// size / r), so referenced blocks lie in [a·2^h, a·(2^(h+1)-1)] and a
// referenced size in [x·2^h, (x+a)·(2^(h+1)-1)] (a = allocated blocks).
func rowProblems(r *Row) []string {
	if r.Bucket >= 63 {
		return nil
	}
	lo, hi := uint64(1)<<r.Bucket, uint64(1)<<(r.Bucket+1)-1
	var probs []string
	a := r.Allocated.Blocks.Interval()
	c := r.Cells()
	for i := 0; i < 4; i++ {
		alloc, ref := c[i].Interval(), c[i+4].Interval()
		var want nicenum.Interval
		if i == 0 {
			want = nicenum.Interval{Lo: nicenum.SatMul(alloc.Lo, lo), Hi: nicenum.SatMul(alloc.Hi, hi)}
		} else {
			want = nicenum.Interval{Lo: nicenum.SatMul(alloc.Lo, lo), Hi: nicenum.SatMul(nicenum.SatAdd(alloc.Hi, a.Hi), hi)}
		}
		if !want.Overlaps(ref) {
			probs = append(probs, fmt.Sprintf("bucket %s: %s %s does not fit allocated %s %s (refcnt %d..%d)",
				r.Label, ColumnNames[i+4], c[i+4].Text, strings.TrimPrefix(ColumnNames[i], "allocated "), c[i].Text, lo, hi))
		}
	}
	return probs
}

// fspan is a closed interval of reals.
type fspan struct{ lo, hi float64 }

func toF(s nicenum.Interval) fspan { return fspan{float64(s.Lo), float64(s.Hi)} }

func (a fspan) div(b fspan) fspan {
	// Unbounded ends are MaxFloat64, not Inf, so that JSON can hold them.
	lo, hi := math.MaxFloat64, math.MaxFloat64
	if b.hi > 0 {
		lo = a.lo / b.hi
	}
	if b.lo > 0 {
		hi = min(a.hi/b.lo, math.MaxFloat64)
	}
	return fspan{lo, hi}
}

func (a fspan) mul(b fspan) fspan { return fspan{a.lo * b.lo, a.hi * b.hi} }

// slack widens an interval by a relative 1e-9 for the rounding of the
// double arithmetic zdb itself does.
func (a fspan) slack() fspan { return fspan{a.lo * (1 - 1e-9), min(a.hi*(1+1e-9), math.MaxFloat64)} }

func (a fspan) overlaps(r nicenum.Ratio) bool { return a.lo <= r.Hi && r.Lo <= a.hi }

// AllowedRatios returns the four figures of zdb's ratio line (dedup,
// compress, copies, dedup * compress / copies) as the intervals a Total
// row's printed sizes allow, widened for zdb's double arithmetic; each
// Text is the interval ("1.996..2.004").
func (r *Row) AllowedRatios() [4]nicenum.Ratio {
	rL, rP, rD := toF(r.Referenced.LSize.Interval()), toF(r.Referenced.PSize.Interval()), toF(r.Referenced.DSize.Interval())
	D := toF(r.Allocated.DSize.Interval())
	var out [4]nicenum.Ratio
	for i, f := range []fspan{rD.div(D), rL.div(rP), rD.div(rP), rL.div(D)} {
		f = f.slack()
		out[i] = nicenum.Ratio{Text: fmt.Sprintf("%.3f..%.3f", f.lo, f.hi), Lo: f.lo, Hi: f.hi}
	}
	return out
}

func ratioProblems(rl *RatioLine, total *Row) []string {
	rL, rP, rD := toF(total.Referenced.LSize.Interval()), toF(total.Referenced.PSize.Interval()), toF(total.Referenced.DSize.Interval())
	D := toF(total.Allocated.DSize.Interval())
	want := []struct {
		name    string
		printed nicenum.Ratio
		from    fspan
		how     string
	}{
		{"dedup", rl.Dedup, rD.div(D), "referenced DSIZE / allocated DSIZE"},
		{"compress", rl.Compress, rL.div(rP), "referenced LSIZE / referenced PSIZE"},
		{"copies", rl.Copies, rD.div(rP), "referenced DSIZE / referenced PSIZE"},
		{"dedup * compress / copies", rl.Combined, rL.div(D), "referenced LSIZE / allocated DSIZE"},
	}
	var probs []string
	for _, w := range want {
		if f := w.from.slack(); !f.overlaps(w.printed) {
			probs = append(probs, fmt.Sprintf("%s = %s, but the Total row gives %s = %.4f..%.4f", w.name, w.printed.Text, w.how, f.lo, f.hi))
		}
	}
	// The fourth figure is the product of the first three as computed.
	d, c, cp := fspan{rl.Dedup.Lo, rl.Dedup.Hi}, fspan{rl.Compress.Lo, rl.Compress.Hi}, fspan{rl.Copies.Lo, rl.Copies.Hi}
	if f := d.mul(c).div(cp).slack(); !f.overlaps(rl.Combined) {
		probs = append(probs, fmt.Sprintf("dedup * compress / copies = %s, but %s * %s / %s is %.4f..%.4f",
			rl.Combined.Text, rl.Dedup.Text, rl.Compress.Text, rl.Copies.Text, f.lo, f.hi))
	}
	return probs
}

// entryChecks compares DDT entry counts (zdb -D object lines, zpool status
// dedup: line) with the allocated blocks of the table that goes with them:
// a DDT has one entry per allocated block.
func entryChecks(p *Parsed) []Check {
	var checks []Check
	// zdb -D object lines: the aggregated table printed after them.
	if len(p.Objects) > 0 {
		var t *HistogramTable
		last := p.Objects[len(p.Objects)-1].Line
		for _, x := range p.Tables {
			if x.Kind == KindAggregated && x.Line > last && x.Total != nil && x.Errors == 0 {
				t = x
				break
			}
		}
		if t != nil {
			// Objects (and logs) of this output: those after the previous
			// command line.
			start := 0
			for _, c := range p.Commands {
				if c.Line < p.Objects[0].Line {
					start = c.Line
				}
			}
			var entries, unique, dup, logged uint64
			for _, o := range p.Objects {
				if o.Line < start || o.Line > t.Line {
					continue
				}
				entries += o.Entries
				if o.Class == "unique" {
					unique += o.Entries
				} else {
					dup += o.Entries
				}
			}
			for _, l := range p.Logs {
				if l.Line >= start && l.Line < t.Line {
					logged += l.Entries
				}
			}
			want := nicenum.Interval{Lo: entries, Hi: entries + logged}
			got := t.Total.Allocated.Blocks
			c := Check{Name: "entries", Line: t.Total.Line, OK: want.Overlaps(got.Interval())}
			if c.OK {
				c.Detail = fmt.Sprintf("the DDT objects hold %s entries and the table %s allocated blocks", want, got.Text)
			} else {
				c.Detail = fmt.Sprintf("the DDT objects hold %s entries, but the Total row of line %d has %s (%s) allocated blocks", want, t.Total.Line, got.Text, got.Interval())
			}
			checks = append(checks, c)
			if logged == 0 {
				var one, more nicenum.Interval
				for i := range t.Rows {
					if t.Rows[i].Bucket == 0 {
						one = one.Add(t.Rows[i].Allocated.Blocks.Interval())
					} else {
						more = more.Add(t.Rows[i].Allocated.Blocks.Interval())
					}
				}
				c := Check{Name: "classes", Line: t.Line, OK: one.Contains(unique) && more.Contains(dup)}
				if c.OK {
					c.Detail = fmt.Sprintf("unique entries (%d) match bucket 1, duplicate entries (%d) the buckets above", unique, dup)
				} else {
					c.Detail = fmt.Sprintf("unique entries %d vs bucket-1 allocated blocks %s, duplicate entries %d vs the buckets above %s", unique, one, dup, more)
				}
				checks = append(checks, c)
			}
		}
	}
	// zpool status: the table after each dedup: line.
	for _, s := range p.Summaries {
		if s.NoEntries {
			continue
		}
		for _, t := range p.Tables {
			if t.Line <= s.Line {
				continue
			}
			if t.Kind == KindStatus && t.Total != nil && t.Errors == 0 {
				got := t.Total.Allocated.Blocks
				c := Check{Name: "entries", Line: s.Line, OK: got.Contains(s.Entries) || got.Interval().Contains(s.Entries)}
				if c.OK {
					c.Detail = fmt.Sprintf("dedup: %d entries match the table's %s allocated blocks", s.Entries, got.Text)
				} else {
					c.Detail = fmt.Sprintf("dedup: %d entries, but the Total row of line %d has %s (%s) allocated blocks", s.Entries, t.Total.Line, got.Text, got.Interval())
				}
				checks = append(checks, c)
			}
			break
		}
	}
	return checks
}

// objectTableChecks compares a zdb -DDD aggregated table with the sum of
// the per-object tables printed before it.
func objectTableChecks(p *Parsed) []Check {
	var checks []Check
	var objs []*HistogramTable
	for _, t := range p.Tables {
		switch t.Kind {
		case KindObject:
			objs = append(objs, t)
			continue
		case KindAggregated:
			if len(objs) == 0 || t.Errors > 0 {
				break
			}
			ok := true
			for _, o := range objs {
				ok = ok && o.Errors == 0
			}
			if !ok {
				break
			}
			var sums [64][8]nicenum.Interval
			var present [64]bool
			for _, o := range objs {
				for i := range o.Rows {
					r := &o.Rows[i]
					present[r.Bucket] = true
					for j, v := range r.Cells() {
						sums[r.Bucket][j] = sums[r.Bucket][j].Add(v.Interval())
					}
				}
			}
			var probs []string
			seen := [64]bool{}
			for i := range t.Rows {
				r := &t.Rows[i]
				seen[r.Bucket] = true
				if !present[r.Bucket] {
					probs = append(probs, fmt.Sprintf("bucket %s is in no per-object table", r.Label))
					continue
				}
				for j, v := range r.Cells() {
					if !sums[r.Bucket][j].Overlaps(v.Interval()) {
						probs = append(probs, fmt.Sprintf("bucket %s %s is %s, the per-object tables sum to %s", r.Label, ColumnNames[j], v.Text, sums[r.Bucket][j]))
					}
				}
			}
			for b := range present {
				if present[b] && !seen[b] {
					probs = append(probs, fmt.Sprintf("bucket %s is missing from the aggregated table", nicenum.Format(1<<b, false)))
				}
			}
			c := Check{Name: "objects", Line: t.Line, OK: len(probs) == 0,
				Detail: fmt.Sprintf("the aggregated table at line %d is the sum of the %d per-object tables before it", t.Line, len(objs))}
			if !c.OK {
				c.Detail = strings.Join(probs, "; ")
			}
			checks = append(checks, c)
		}
		objs = nil
	}
	return checks
}
