package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// ReadEstimate is the JSON read_estimate object of a scan that read only a
// random fraction of the records (--read): every figure an ESTIMATE with
// its 95% range. The report's histogram, totals and zdb text are the
// point estimates.
type ReadEstimate struct {
	*estimate.Estimate
	// ReadBytes are the bytes read from the files (Counters.ReadBytes).
	ReadBytes uint64 `json:"read_bytes"`
	// The figures built on the table, each between its values at the
	// ends of the ranges best and worst for dedup (estimate.Estimate).
	UsedWithout  ddt.Interval `json:"zfs_list_used_without_dedup"`
	UsedWith     ddt.Interval `json:"zfs_list_used_with_dedup"`
	AllocWithout ddt.Interval `json:"zpool_list_alloc_without_dedup"`
	AllocWith    ddt.Interval `json:"zpool_list_alloc_with_dedup"`
	DDTInCore    ddt.Interval `json:"ddt_in_core"`
	// With --ram: the RAM given, bytes, and whether the dedup table
	// stays in the ARC (ddtsize.Verdict*: fits, tight, does not fit) at
	// the low and the high end of DDTInCore; 0 and empty without.
	RAM       uint64 `json:"ram,omitempty"`
	ARCAtLow  string `json:"arc_verdict_low,omitempty"`
	ARCAtHigh string `json:"arc_verdict_high,omitempty"`
	// Verdict is the full scan's word when both ends of the ranges agree
	// ("worth it", "probably not worth it", "not worth it on this
	// machine"), else "undecided: the 95% range straddles the rule ..."
	// (the verdict at the two ends differs).
	Verdict string `json:"verdict"`
}

// whole rounds the ranges of counts and bytes to whole numbers, outward
// (the point to nearest): JSON prints exact integers (found by a new
// user: "low": 368164945.5880391 bytes).
func (r *ReadEstimate) whole() {
	for _, iv := range []*ddt.Interval{&r.Stored, &r.Entries, &r.RefLSize, &r.RefPSize, &r.RefDSize, &r.AllocDSize,
		&r.UsedWithout, &r.UsedWith, &r.AllocWithout, &r.AllocWith, &r.DDTInCore} {
		*iv = ddt.Interval{Value: math.Round(iv.Value), Low: math.Floor(iv.Low), High: math.Ceil(iv.High)}
	}
}

// EstimateMark begins every line that says a figure is estimated.
const EstimateMark = "ESTIMATE"

// ApplyRead turns the report of a scan that read a sample of the records
// into the estimates for the whole data: the histogram, totals, ratios
// and zdb text become est's point estimate (the zdb text headed by a
// line saying so). Call FinishRead after EstimateDDT and EstimateSpace.
func (s *Report) ApplyRead(est *estimate.Estimate, bytesSuffix bool) error {
	s.Read = &ReadEstimate{Estimate: est, ReadBytes: s.Counters.ReadBytes}
	s.Estimate = true
	s.setHistogram(est.Histogram)
	var zb stringWriter
	if err := zdb.WriteSimulated(&zb, est.Histogram, bytesSuffix); err != nil {
		return err
	}
	s.Zdb = fmt.Sprintf("%s from a %s random read of the records: not what zdb -S would print\n", EstimateMark, pct(est.Fraction)) + string(zb)
	return nil
}

// setHistogram makes h the report's histogram, totals, ratios and raw
// capacity.
func (s *Report) setHistogram(h *ddt.Histogram) {
	s.Histogram = []Row{}
	for i, b := range h {
		if b.Allocated.Blocks != 0 {
			s.Histogram = append(s.Histogram, Row{RefcntMin: 1 << i, Bucket: b})
		}
	}
	s.Total = h.Total()
	s.Ratios = nil
	if r, ok := ddt.RatiosOf(s.Total); ok {
		s.Ratios = &r
	}
}

// FinishRead gives the figures built on the table (space, DDT RAM, the
// verdict) their ranges: each is computed again at the ends of the ranges
// best and worst for dedup (p and ram as given to EstimateDDT), and the
// decision line says when the verdict depends on where in the range the
// truth lies.
func (s *Report) FinishRead(p *zio.Policy, ram uint64) {
	r := s.Read
	if r == nil {
		return
	}
	defer r.whole()
	s.Raw.Referenced, s.Raw.Allocated = p.RawSize(s.Total.Referenced.DSize), p.RawSize(s.Total.Allocated.DSize)
	// The ends best and worst for dedup (the verdict's), then each with
	// its entries all in one class of the table (unique or duplicate), or
	// a quarter, half or three quarters unique: the DDT's size depends on
	// the split, and not monotonically (each class's ZAP fills whole leaf
	// blocks), which the sample knows less well than the total. With the
	// quarters the DDT RAM range on mix at 15% held the truth in 50 of 50
	// runs, against 40 to 46 without. On unique data the point put a few
	// entries in the duplicate class, and the range of the DDT RAM missed
	// the truth, which has no duplicate object; with few records read the
	// point may have no duplicate class where the truth has one.
	//
	// And the two ends crossed: the allocated columns of one with the
	// referenced columns of the other. USED with dedup adds the data
	// referenced and the DDT, largest with the referenced columns high and
	// the allocated (the entries) high at once, which neither end has: on
	// unique data its range missed the truth by about 12 KiB in half the
	// runs (found by a new user).
	var ends []*Report
	var hs []*ddt.Histogram
	var worstAt int // the index in ends of r.Worst's report
	// And the count program's point before its rows were fitted
	// (estimate.Estimate.Unfitted), which the ranges spanned before.
	others := []*ddt.Histogram{r.Best, r.Worst, crossed(r.Worst, r.Best), crossed(r.Best, r.Worst)}
	if r.Unfitted != nil {
		others = append(others, r.Unfitted)
	}
	for i, h := range others {
		if i == 1 {
			worstAt = len(hs)
		}
		// A content read is an entry for sure: an end of fewer entries
		// (the rows' counts rounded down one by one) takes the least
		// the range allows (found by TestReadHarness: 1 record read of
		// 832, entries 1 to 832, a table of none or of 832 at the ends,
		// and DDT RAM from 263K where 560 entries took 229K).
		h = atLeastEntries(h, uint64(math.Ceil(r.Entries.Low)))
		hs = append(hs, h)
		if r.Entries.High > r.Entries.Low {
			// (Every record read: the split is the table's.)
			hs = append(hs, classes(h, 1), classes(h, 0), classes(h, 0.5), classes(h, 0.25), classes(h, 0.75))
			// And one entry alone in a class: each class is an object
			// of the DDT, whose blocks a single entry takes (found by a
			// new user: one duplicated block among 900, which the
			// sample missed, put DDT RAM 32K above the range's end).
			if n := float64(h.Total().Allocated.Blocks); n >= 2 {
				hs = append(hs, classes(h, (n-1)/n), classes(h, 1/n))
			}
		}
	}
	for _, h := range hs {
		c := *s
		c.Read, c.DDT, c.Space, c.Decision = nil, nil, nil, nil
		c.setHistogram(h)
		c.EstimateDDT(p, ram)
		c.EstimateSpace(p)
		ends = append(ends, &c)
	}
	iv := func(point uint64, f func(*Report) uint64) ddt.Interval {
		v := ddt.Interval{Value: float64(point), Low: float64(point), High: float64(point)}
		for _, c := range ends {
			x := float64(f(c))
			v.Low, v.High = math.Min(v.Low, x), math.Max(v.High, x)
		}
		return v
	}
	if off, on := s.SpaceByDedup(); off != nil && on != nil {
		sp := func(dedup bool, alloc bool) func(*Report) uint64 {
			return func(c *Report) uint64 {
				o, n := c.SpaceByDedup()
				f := o
				if dedup {
					f = n
				}
				if alloc {
					return f.Alloc
				}
				return f.Used
			}
		}
		r.UsedWithout = iv(off.Used, sp(false, false))
		r.UsedWith = iv(on.Used, sp(true, false))
		r.AllocWithout = iv(off.Alloc, sp(false, true))
		r.AllocWith = iv(on.Alloc, sp(true, true))
		// The unread records' block pointers were tallied as data of
		// contents of their own: the indirect blocks may compress better
		// (repeats, holes) than counted, down to nothing; metadata is
		// kept in up to 3 copies.
		// But each holds the file data's blocks, whose range is known:
		// the referenced DSIZE (USED, and ALLOC without dedup: raw
		// space is no less), the allocated one (ALLOC with dedup). Found
		// by a new user: ALLOC with dedup from 0 B where the data took
		// 2.38 MiB at least.
		slack := 3 * float64(off.Indirect.ASize)
		for _, x := range []struct {
			iv   *ddt.Interval
			data float64
		}{{&r.UsedWithout, r.RefDSize.Low}, {&r.UsedWith, r.RefDSize.Low}, {&r.AllocWithout, r.RefDSize.Low}, {&r.AllocWith, r.AllocDSize.Low}} {
			x.iv.Low = math.Min(math.Max(x.iv.Low-slack, x.data), x.iv.Value)
		}
	}
	if s.DDT != nil {
		r.DDTInCore = iv(s.DDT.InCore, func(c *Report) uint64 {
			if c.DDT == nil {
				return 0
			}
			return c.DDT.InCore
		})
		// A content read is an entry for sure: no end of no table (found
		// by a new user: DDT RAM from 0 B with 1 record read).
		if r.Entries.Low >= 1 {
			low := math.Inf(1)
			for _, c := range ends {
				if c.DDT != nil && c.DDT.Entries > 0 {
					low = math.Min(low, float64(c.DDT.InCore))
				}
			}
			if !math.IsInf(low, 1) && low > r.DDTInCore.Low {
				r.DDTInCore.Low = math.Min(low, r.DDTInCore.Value)
			}
		}
		r.arcAtEnds(s, ends)
	}
	if s.NothingRead() {
		// No record read: the ranges above say how much the records
		// unread could hold; no figure of the (empty) table is a point
		// (found by a new user: "zfs list USED 1016 KiB" for 800 MiB).
		r.Verdict = fmt.Sprintf("none: no record was read (0 of %d); read a larger fraction", r.Records)
		s.Space, s.Raw, s.Ratios, s.Decision = nil, RawCapacity{}, nil, nil
		return
	}
	if s.Decision == nil {
		return
	}
	best, worst := ends[0].Decision, ends[worstAt].Decision // r.Best's and r.Worst's
	switch {
	case best == nil || worst == nil:
		r.Verdict = "undecided: nothing to decide on at one end of the range"
	case best.WorthIt && worst.WorthIt:
		r.Verdict = "worth it"
	case !best.WorthIt && !worst.WorthIt && !arcFits(best) && !arcFits(worst):
		r.Verdict = "not worth it on this machine"
	case !best.WorthIt && !worst.WorthIt:
		// The full scan's words (found by a new user: "not worth it"
		// here, "probably not worth it" there, for the same data).
		r.Verdict = "probably not worth it"
	default:
		r.Verdict = "undecided: the 95% range straddles the rule (worth it at one end, not at the other); read a larger fraction"
	}
	s.Decision.WorthIt = r.Verdict == "worth it"
	undecided := strings.HasPrefix(r.Verdict, "undecided")
	s.Decision.Undecided = &undecided
	partial := ""
	if s.Partial {
		partial = ", partial" // as the verdict line says (found by a new user)
	}
	s.Decision.Text = fmt.Sprintf("Decision (%s from a %s read%s, 95%% range): dedup saves %.1f%% to %.1f%% of the size without dedup, for a DDT of %s to %s in RAM: %s (%s)",
		EstimateMark, pct(r.Fraction), partial, 100*share(worst), 100*share(best), nicenum.Format(uint64(r.DDTInCore.Low), true), nicenum.Format(uint64(r.DDTInCore.High), true), r.Verdict, Rule)
}

// arcFits reports whether the verdict d found the DDT fitting its ARC
// (or had no --ram to judge by).
func arcFits(d *Decision) bool {
	return d.ARC == "" || d.ARC == ddtsize.VerdictFits || d.ARC == ddtsize.VerdictTight
}

// atLeastEntries is h with at least n entries (allocated blocks): those
// it lacks added to its row of the largest allocated DSIZE (the refcnt-1
// row if none), of the row's sizes per entry (none if it has no entry).
func atLeastEntries(h *ddt.Histogram, n uint64) *ddt.Histogram {
	if h == nil || h.Total().Allocated.Blocks >= n {
		return h
	}
	out := *h
	row := 0
	for b := range out {
		if out[b].Allocated.DSize > out[row].Allocated.DSize {
			row = b
		}
	}
	k := &out[row]
	add := n - h.Total().Allocated.Blocks
	if b := k.Allocated.Blocks; b > 0 {
		k.Allocated.LSize += add * (k.Allocated.LSize / b)
		k.Allocated.PSize += add * (k.Allocated.PSize / b)
		k.Allocated.DSize += add * (k.Allocated.DSize / b)
	}
	k.Allocated.Blocks += add
	k.Referenced.Blocks = max(k.Referenced.Blocks, k.Allocated.Blocks<<row) // 2^row refs at least
	return &out
}

// crossed is a histogram with the allocated columns of a and the
// referenced columns of r.
func crossed(a, r *ddt.Histogram) *ddt.Histogram {
	out := *a
	for i := range out {
		out[i].Referenced = r[i].Referenced
	}
	return &out
}

// arcAtEnds sets, with --ram, the ARC verdicts at the ends of
// r.DDTInCore: those of the reports (the point s, and the ends) whose
// table's size is its low and its high (found by a new user: with --read
// the headline left out the "fits in the ARC" that --ram adds).
func (r *ReadEstimate) arcAtEnds(s *Report, ends []*Report) {
	if s.DDT.ARC == nil {
		return
	}
	r.RAM = s.DDT.ARC.RAM
	for _, c := range append([]*Report{s}, ends...) {
		if c.DDT == nil || c.DDT.ARC == nil {
			continue
		}
		switch float64(c.DDT.InCore) {
		case r.DDTInCore.Low:
			if r.ARCAtLow == "" {
				r.ARCAtLow = c.DDT.ARC.Verdict
			}
			if r.DDTInCore.High == r.DDTInCore.Low && r.ARCAtHigh == "" {
				r.ARCAtHigh = c.DDT.ARC.Verdict
			}
		case r.DDTInCore.High:
			if r.ARCAtHigh == "" {
				r.ARCAtHigh = c.DDT.ARC.Verdict
			}
		}
	}
}

// arcText says, with --ram, whether the table stays in the ARC at the ends
// of the range of its size, in few words for the headline's 100 columns
// (found by a new user: 107 columns; JSON and CSV give each end's
// verdict): "; in 64 MiB of RAM: fits in the ARC" (at both ends), "...:
// fits at one end only".
func (r *ReadEstimate) arcText() string {
	if r.RAM == 0 || r.ARCAtLow == "" || r.ARCAtHigh == "" {
		return ""
	}
	fits := func(v string) bool { return v == ddtsize.VerdictFits || v == ddtsize.VerdictTight }
	words := "fits at one end only"
	switch {
	case r.ARCAtLow == r.ARCAtHigh:
		words = strings.TrimPrefix(arcWords(r.ARCAtLow), "it ")
	case fits(r.ARCAtLow) && fits(r.ARCAtHigh):
		words = "fits, tightly at one end"
	}
	return fmt.Sprintf("; in %s of RAM: %s", nicenum.IEC(r.RAM), words)
}

// classes is h with the allocated columns of every row moved, the share
// unique of them to row 0 (refcnt 1, the unique class of the table) and
// the rest to row 1 (refcnt 2–3, the duplicate class); the referenced
// columns stay in their rows: the same totals, split otherwise between
// the classes.
func classes(h *ddt.Histogram, unique float64) *ddt.Histogram {
	out := *h
	var all ddt.Stat
	for i := range out {
		a := out[i].Allocated
		all.Blocks += a.Blocks
		all.LSize += a.LSize
		all.PSize += a.PSize
		all.DSize += a.DSize
		out[i].Allocated = ddt.Stat{}
	}
	part := func(v uint64) uint64 { return uint64(math.Round(float64(v) * unique)) }
	out[0].Allocated = ddt.Stat{Blocks: part(all.Blocks), LSize: part(all.LSize), PSize: part(all.PSize), DSize: part(all.DSize)}
	out[1].Allocated = ddt.Stat{Blocks: all.Blocks - out[0].Allocated.Blocks, LSize: all.LSize - out[0].Allocated.LSize,
		PSize: all.PSize - out[0].Allocated.PSize, DSize: all.DSize - out[0].Allocated.DSize}
	return &out
}

// share is a decision's dedup share, 0 without one.
func share(d *Decision) float64 {
	if d == nil {
		return 0
	}
	// Dedup never allocates more than it references: at an end whose
	// allocated side comes from one range and referenced from another
	// the share can compute below 0, a saving that cannot be (found by
	// a new user: "dedup saves -103206.7% to 97.8%").
	return math.Max(0, d.DedupShare)
}

// pct writes a fraction as a percentage: "5%", "0.5%".
func pct(f float64) string {
	return fmt.Sprintf("%.4g%%", 100*f)
}

// writeRead writes the estimates of a --read scan with their ranges.
func (s *Report) writeRead(t *textOut) {
	r := s.Read
	t.item(EstimateMark, "read %s of the %s holding data, chosen at random (seed %d): %s, %s "+
		"read; every figure below is an estimate, with its 95%% range", pct(r.Fraction), english.Count(r.Records, "record"), r.Seed,
		english.Count(r.Read, "record"), t.size(r.ReadBytes))
	ratio := func(i ddt.Interval) string {
		if r.Read == 0 {
			return fmt.Sprintf("unknown (95%%: %.2f to %.2f)", outward(i.Low, 100, false), outward(i.High, 100, true))
		}
		return fmt.Sprintf("%.2f (95%%: %.2f to %.2f)", i.Value, outward(i.Low, 100, false), outward(i.High, 100, true))
	}
	// With no record read there is no point, only how much the records
	// unread could hold (found by a new user: "on disk 0 B" for 400 MiB).
	// The ends rounded outwards and the point to the nearest byte, as
	// the CSV has them (found by a new user: --bytes said 193836844 where
	// the CSV said 193836845).
	lo := func(i ddt.Interval) string { return t.size(uint64(outward(i.Low, 1, false))) }
	hi := func(i ddt.Interval) string { return t.size(uint64(outward(i.High, 1, true))) }
	size := func(i ddt.Interval) string {
		if r.Read == 0 {
			return fmt.Sprintf("unknown (95%%: %s to %s)", lo(i), hi(i))
		}
		return fmt.Sprintf("%s (95%%: %s to %s)", t.size(uint64(math.Round(i.Value))), lo(i), hi(i))
	}
	t.sub("dedup", "%s", ratio(r.Dedup))
	t.sub("compress", "%s", ratio(r.Compress))
	t.sub("combined", "%s", ratio(r.Combined))
	if r.Read == 0 {
		t.sub("entries", "unknown (95%%: %.0f to %.0f DDT entries)", outward(r.Entries.Low, 1, false), outward(r.Entries.High, 1, true))
	} else {
		t.sub("entries", "%.0f DDT entries (95%%: %.0f to %.0f)", r.Entries.Value, outward(r.Entries.Low, 1, false), outward(r.Entries.High, 1, true))
	}
	t.sub("on disk", "%s without dedup, %s with dedup", size(r.RefDSize), size(r.AllocDSize))
	if r.UsedWith.High > 0 {
		t.sub("USED", "zfs list: %s without dedup, %s with dedup", size(r.UsedWithout), size(r.UsedWith))
		t.sub("ALLOC", "zpool list: %s without dedup, %s with dedup", size(r.AllocWithout), size(r.AllocWith))
	}
	if r.DDTInCore.High > 0 {
		t.sub("DDT RAM", "%s", size(r.DDTInCore))
	}
	if r.Verdict != "" {
		t.sub("verdict", "%s", r.Verdict)
	}
	if r.Groups && r.GroupsRead < FewGroups && r.Read < r.Records {
		// Found by a new user: 300 files of 1 MiB, 8 groups, compression
		// 1.00 to 256 at 5% (--read-by records: 1.04 to 1.46).
		t.sub("groups", "%s read (one record index of the files of one size, or a file of one record, read "+
			"together): too few for narrow ranges; --read-by records reads single records", english.Count(r.GroupsRead, "group"))
	}
}

// FewGroups is the number of groups read below which a --read report
// says the ranges are wide for it (a group plan's units are its groups).
const FewGroups = 30

// readHeadline is the Headline of a --read scan: the space and RAM as
// 95%% ranges and the verdict, each marked an estimate.
func (s *Report) readHeadline() []string {
	r := s.Read
	iec := nicenum.IEC
	span := func(i ddt.Interval) string {
		return iec(uint64(i.Low)) + "–" + iec(uint64(i.High))
	}
	var lines []string
	if r.UsedWith.High > 0 {
		lines = append(lines, fmt.Sprintf("Space (%s, 95%%): without dedup USED %s; with dedup ALLOC %s",
			EstimateMark, span(r.UsedWithout), span(r.AllocWith)))
	}
	if r.DDTInCore.High > 0 {
		lines = append(lines, fmt.Sprintf("RAM (%s, 95%%): dedup table %s%s", EstimateMark, span(r.DDTInCore), r.arcText()))
	}
	verdict := "none: nothing to decide on"
	switch {
	case r.Read == 0 && r.Records > 0:
		verdict = fmt.Sprintf("none: no record was read (0 of %d); read a larger fraction", r.Records)
	case r.Verdict != "" && !strings.HasPrefix(r.Verdict, "undecided"):
		verdict = r.Verdict
	case r.Verdict != "":
		verdict = "undecided: the range straddles the rule; read a larger fraction"
	}
	partial := ""
	if s.Partial {
		partial = ", partial" // as a full scan's "Verdict (partial)"
	}
	return append(lines, fmt.Sprintf("Verdict (%s, %s read%s): %s", EstimateMark, pct(r.Fraction), partial, verdict))
}

// readCSV writes the estimates as CSV summary rows (field, value):
// estimate_FIGURE, _low and _high; ratios as decimals, counts and bytes
// as whole numbers.
func (s *Report) readCSV(kv func(k, v string)) {
	r := s.Read
	kv("estimate", "true")
	kv("estimate_fraction", strconv.FormatFloat(r.Fraction, 'f', -1, 64))
	kv("estimate_seed", strconv.FormatUint(r.Seed, 10))
	kv("estimate_groups", strconv.FormatBool(r.Groups))
	kv("estimate_records_read", strconv.FormatUint(r.Read, 10))
	if r.Groups {
		kv("estimate_groups_read", strconv.FormatUint(r.GroupsRead, 10))
	}
	kv("estimate_bytes_read", strconv.FormatUint(r.ReadBytes, 10))
	for _, f := range []struct {
		k     string
		v     ddt.Interval
		ratio bool
	}{{"dedup", r.Dedup, true}, {"compress", r.Compress, true}, {"combined", r.Combined, true}, {"ddt_entries", r.Entries, false},
		{"stored_blocks", r.Stored, false}, {"referenced_lsize", r.RefLSize, false}, {"referenced_psize", r.RefPSize, false},
		{"referenced_dsize", r.RefDSize, false}, {"allocated_dsize", r.AllocDSize, false},
		{"used_without_dedup", r.UsedWithout, false}, {"used_with_dedup", r.UsedWith, false},
		{"alloc_without_dedup", r.AllocWithout, false}, {"alloc_with_dedup", r.AllocWith, false}, {"ddt_in_core", r.DDTInCore, false}} {
		// Whole numbers: the ends rounded outwards (a range is not
		// narrowed by its printing: found by a new user, 630.8 → 631).
		g := func(v float64, end int) string {
			if f.ratio {
				return strconv.FormatFloat(v, 'f', -1, 64)
			}
			switch end {
			case -1:
				v = outward(v, 1, false)
			case 1:
				v = outward(v, 1, true)
			}
			return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
		}
		if s.NothingRead() {
			kv("estimate_"+f.k, "") // no point: only the range
		} else {
			kv("estimate_"+f.k, g(f.v.Value, 0))
		}
		kv("estimate_"+f.k+"_low", g(f.v.Low, -1))
		kv("estimate_"+f.k+"_high", g(f.v.High, 1))
	}
	kv("estimate_verdict", r.Verdict)
}

// readHTML is the HTML page's mark and note for the estimates.
func (s *Report) readHTML() (mark, note string) {
	r := s.Read
	return "ESTIMATE, " + pct(r.Fraction) + " read", fmt.Sprintf(
		"ESTIMATE: only %s of the records holding data were read, chosen at random (seed %d); the table and every figure are estimates. "+
			"95%% ranges: dedup %.2f to %.2f, compression %.2f to %.2f, DDT entries %.0f to %.0f, DDT RAM %s to %s. Verdict: %s.",
		pct(r.Fraction), r.Seed, outward(r.Dedup.Low, 100, false), outward(r.Dedup.High, 100, true), outward(r.Compress.Low, 100, false),
		outward(r.Compress.High, 100, true), outward(r.Entries.Low, 1, false), outward(r.Entries.High, 1, true),
		nicenum.Format(uint64(r.DDTInCore.Low), true), nicenum.Format(uint64(r.DDTInCore.High), true), r.Verdict)
}

// outward is v rounded to 1/scale (1: whole numbers, 100: two decimals)
// down at a range's low end, up at its high end (up), so that a printed
// range holds the computed one; within a relative 1e-12 of a step, v is
// taken as that step.
func outward(v, scale float64, up bool) float64 {
	x := v * scale
	if r := math.Round(x); math.Abs(x-r) <= 1e-12*math.Abs(x) {
		return r / scale
	}
	if up {
		return math.Ceil(x) / scale
	}
	return math.Floor(x) / scale
}

// NothingRead reports whether a --read scan read no record although
// there were records to read: its estimates have ranges and no point.
func (s *Report) NothingRead() bool {
	return s.Read != nil && s.Read.Read == 0 && s.Read.Records > 0
}

// MarshalJSON writes r with "value": null in each range when no record
// was read (NothingRead): there is no point, only the ranges.
func (r *ReadEstimate) MarshalJSON() ([]byte, error) {
	type plain ReadEstimate
	b, err := json.Marshal((*plain)(r))
	if err != nil || r.Estimate == nil || r.Read > 0 || r.Records == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range m {
		var iv map[string]json.RawMessage
		if json.Unmarshal(v, &iv) != nil {
			continue
		}
		if _, ok := iv["value"]; ok {
			iv["value"] = json.RawMessage("null")
			if m[k], err = json.Marshal(iv); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(m)
}
