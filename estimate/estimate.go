package estimate

import (
	"math"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Confidence is the probability with which each range of an Estimate
// holds the whole data's figure.
const Confidence = 0.95

// Input is what a scan that read a sample of the records saw.
type Input struct {
	// Fraction is the plan's probability of reading a record (Plan).
	Fraction float64
	// Records are the records that hold data (not lying wholly in a hole
	// of the source file), read or not: the population sampled.
	Records uint64
	// Read are those of them read: the sample (what Entries holds, and
	// the all-zero records that became holes).
	Read uint64
	// Entries calls f with each entry of the sample's table (Refcnt: the
	// times the content was read), until f returns false.
	Entries func(f func(ddt.Entry) bool)
}

// Estimate is what a sample says of the whole data, each figure a point
// and its 95% range (Confidence). Sizes are bytes.
type Estimate struct {
	Fraction float64 `json:"fraction"` // the plan's probability of reading a record
	Seed     uint64  `json:"seed"`     // the plan's seed (set by the caller)
	Records  uint64  `json:"records"`  // records holding data, the population
	Read     uint64  `json:"read"`     // of them, read
	// Stored are the blocks zdb -S counts (referenced), Entries the DDT
	// entries (unique blocks).
	Stored  ddt.Interval `json:"stored_blocks"`
	Entries ddt.Interval `json:"ddt_entries"`
	// RefLSize, RefPSize and RefDSize are the referenced sizes (without
	// dedup); AllocDSize the allocated DSIZE (with dedup).
	RefLSize   ddt.Interval `json:"referenced_lsize"`
	RefPSize   ddt.Interval `json:"referenced_psize"`
	RefDSize   ddt.Interval `json:"referenced_dsize"`
	AllocDSize ddt.Interval `json:"allocated_dsize"`
	// Dedup is referenced DSIZE / allocated DSIZE, Compress referenced
	// LSIZE / PSIZE, Combined referenced LSIZE / allocated DSIZE (zdb's
	// dedup × compress / copies).
	Dedup    ddt.Interval `json:"dedup"`
	Compress ddt.Interval `json:"compress"`
	Combined ddt.Interval `json:"combined"`
	// Histogram is the point estimate of the whole data's DDT histogram;
	// Best and Worst are it scaled to the ranges' ends most and least
	// favourable to dedup (Best: the fewest entries and least allocated,
	// the most referenced; Worst the other way), from which the figures
	// built on the table (space, DDT RAM, the verdict) get their ranges:
	// each lies between its values at the two.
	Histogram *ddt.Histogram `json:"-"`
	Best      *ddt.Histogram `json:"-"`
	Worst     *ddt.Histogram `json:"-"`
}

// Compute estimates the whole data's figures from in. A sample with no
// stored block gives zero figures with ranges that say how many could
// have been missed.
func Compute(in Input) *Estimate {
	p := in.Fraction
	e := &Estimate{Fraction: p, Records: in.Records, Read: in.Read}
	delta := 1 - Confidence
	popN := float64(in.Records)
	var lmax, dmax float64
	in.Entries(func(x ddt.Entry) bool {
		if x.PSize > 0 {
			lmax = math.Max(lmax, float64(x.LSize))
			dmax = math.Max(dmax, float64(x.DSize))
		}
		return true
	})
	// Per record of the sample (holes and embedded ones count 0): stored,
	// LSIZE, PSIZE, DSIZE, each over its largest value.
	var st, ml, mp, md moments
	var cl, cp, cl2, cp2, clp, ns float64 // compression sums over stored records
	cnt := Fingerprint{Seen: map[uint64]float64{}}
	wgt := Fingerprint{Seen: map[uint64]float64{}}
	var sampleEntries, sampleAlloc float64
	in.Entries(func(x ddt.Entry) bool {
		if x.PSize == 0 {
			return true // embedded: not in the table zdb -S counts
		}
		r := float64(x.Refcnt)
		l, ps, d := float64(x.LSize)/lmax, float64(x.PSize)/lmax, float64(x.DSize)/dmax
		st.add(1, r)
		ml.add(l, r)
		mp.add(ps, r)
		md.add(d, r)
		ns += r
		cl += l * r
		cp += ps * r
		cl2 += l * l * r
		cp2 += ps * ps * r
		clp += l * ps * r
		cnt.Seen[x.Refcnt]++
		cnt.Records += r
		wgt.Seen[x.Refcnt] += d
		wgt.Records += d * r
		sampleEntries++
		sampleAlloc += float64(x.DSize)
		return true
	})
	// The rest of the records read hold nothing zdb -S counts.
	rest := float64(in.Read) - st.n
	for _, m := range []*moments{&st, &ml, &mp, &md} {
		m.n += max(rest, 0)
	}
	total := func(m moments, unit float64, d float64) ddt.Interval {
		mean, lo, hi := meanRange(m, popN, d)
		return ddt.Interval{Value: mean * popN * unit, Low: lo * popN * unit, High: hi * popN * unit}
	}
	e.Stored = total(st, 1, delta)
	e.RefLSize = total(ml, lmax, delta)
	e.RefPSize = total(mp, lmax, delta)
	e.RefDSize = total(md, dmax, delta/2) // for the ratios: half the risk each
	e.Compress = compressRange(ns, cl, cp, cl2, cp2, clp, e.Stored.High, delta)

	if ns == 0 {
		// Nothing stored was read: every figure is 0 but for what the
		// records unread could hold.
		// The sizes are unknown (no record's size was seen); the ratios
		// lie anywhere they can: dedup up to one content for every
		// block, compression up to a 16M record in one 512-byte sector.
		e.Entries = ddt.Interval{High: e.Stored.High}
		e.AllocDSize = ddt.Interval{High: e.RefDSize.High}
		if e.Stored.High > 0 {
			e.Dedup = ddt.Interval{Value: 1, Low: 1, High: math.Max(1, e.Stored.High)}
			e.Compress = ddt.Interval{Value: 1, Low: 1, High: 1 << 15}
			e.Combined = ddt.Interval{Value: 1, Low: 0, High: 1 << 15 * math.Max(1, e.Stored.High)}
			// At most 16M a record, 8 times over (copies, parity).
			most := float64(in.Records) * (16 << 20) * 8
			e.RefDSize.High, e.RefLSize.High, e.RefPSize.High, e.AllocDSize.High = most, most, most, most
		}
		e.Histogram, e.Best, e.Worst = &ddt.Histogram{}, &ddt.Histogram{}, &ddt.Histogram{}
		return e
	}
	uc, err := solveUnseen(cnt, p, delta)
	if err != nil {
		uc = plainUnseen(cnt, p, e.Stored)
	}
	uw, err := solveUnseen(wgt, p, delta/2)
	if err != nil {
		uw = plainUnseen(wgt, p, ddt.Interval{Value: e.RefDSize.Value / dmax, Low: e.RefDSize.Low / dmax, High: e.RefDSize.High / dmax})
	}
	// What the sample holds is there for sure; no more entries than
	// blocks, no more allocated than referenced.
	clampIv := func(iv ddt.Interval, lo, hi float64) ddt.Interval {
		iv.Low = math.Min(math.Max(iv.Low, lo), hi)
		iv.High = math.Max(math.Min(iv.High, hi), iv.Low)
		iv.Value = math.Min(math.Max(iv.Value, iv.Low), iv.High)
		return iv
	}
	e.Entries = clampIv(ddt.Interval{Value: uc.Point, Low: uc.Low, High: uc.High}, sampleEntries, e.Stored.High)
	e.AllocDSize = clampIv(ddt.Interval{Value: uw.Point * dmax, Low: uw.Low * dmax, High: uw.High * dmax}, sampleAlloc, e.RefDSize.High)
	e.Dedup = ratioRange(e.RefDSize, e.AllocDSize)
	e.Dedup.Low = math.Max(e.Dedup.Low, 1)
	e.Dedup.Value = math.Max(e.Dedup.Value, 1)
	e.Combined = ratioRange(total(ml, lmax, delta/2), e.AllocDSize)
	e.Histogram = histogramOf(uc, uw, dmax, e)
	e.Best = scaled(e.Histogram, e, true)
	e.Worst = scaled(e.Histogram, e, false)
	return e
}

// ratioRange is a/b with the range from the ends of both (each at half
// the risk).
func ratioRange(a, b ddt.Interval) ddt.Interval {
	if b.Value <= 0 {
		return ddt.Interval{}
	}
	iv := ddt.Interval{Value: a.Value / b.Value, Low: a.Low / b.High, High: math.MaxFloat64}
	if b.Low > 0 {
		iv.High = a.High / b.Low
	}
	return iv
}

// compressRange is the range of the compression ratio c = ΣL/ΣP over the
// stored records, from the sample's sums (n records; L and P over the
// largest LSIZE: Σ, Σ², ΣLP) out of popN at most: the c for which the
// mean of (L − c·P), bounded in [−c, 1], is not ruled out from 0 on
// either side (empirical-Bernstein-Serfling, half the risk each side).
func compressRange(n, sl, sp, sl2, sp2, slp, popN, delta float64) ddt.Interval {
	if n == 0 || sp == 0 {
		return ddt.Interval{}
	}
	c0 := sl / sp
	bound := func(c float64) (m, w float64) {
		m = (sl - c*sp) / n
		v := (sl2-2*c*slp+c*c*sp2)/n - m*m
		return m, halfWidth(n, popN, v, 1+c, delta/2)
	}
	// c_lo: the smallest c whose lower bound is ≤ 0 (the mean falls
	// with c); c_hi: the largest whose upper bound is ≥ 0.
	find := func(ok func(c float64) bool, lo, hi float64) float64 {
		for range 100 {
			mid := math.Sqrt(lo * hi)
			if ok(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return hi
	}
	low := find(func(c float64) bool { m, w := bound(c); return m-w <= 0 }, 1e-3, c0)
	high := find(func(c float64) bool { m, w := bound(c); return m+w < 0 }, c0, 1e6)
	return ddt.Interval{Value: c0, Low: low, High: high}
}

// plainUnseen is the fallback when the program fails: the contents seen,
// scaled by 1/p, within [the contents seen, the records].
func plainUnseen(f Fingerprint, p float64, recs ddt.Interval) Unseen {
	var seen float64
	u := Unseen{Hist: map[uint64]float64{}}
	for k, w := range f.Seen {
		seen += w
		u.Hist[uint64(math.Max(1, math.Round(float64(k)/p)))] += w
	}
	u.Point, u.Low, u.High = seen, seen, math.Max(recs.High, seen)
	return u
}

// histogramOf builds the point histogram: per refcnt bucket the entries
// of the count program's solution and the DSIZE of the weighted one;
// LSIZE and PSIZE follow DSIZE at the sample's ratios; each column is
// then scaled to the totals estimated (entries and allocated DSIZE from
// the programs, referenced blocks and sizes from the sample's means).
func histogramOf(uc, uw Unseen, dmax float64, e *Estimate) *ddt.Histogram {
	var ab, rb, ad, rd [64]float64
	for j, w := range uc.Hist {
		b := bucket(j)
		ab[b] += w
		rb[b] += w * float64(j)
	}
	for j, w := range uw.Hist {
		b := bucket(j)
		ad[b] += w * dmax
		rd[b] += w * dmax * float64(j)
	}
	sum := func(a [64]float64) float64 {
		var s float64
		for _, v := range a {
			s += v
		}
		return s
	}
	f := func(target, s float64) float64 {
		if s == 0 {
			return 0
		}
		return target / s
	}
	fab, frb := f(e.Entries.Value, sum(ab)), f(e.Stored.Value, sum(rb))
	fad, frd := f(e.AllocDSize.Value, sum(ad)), f(e.RefDSize.Value, sum(rd))
	lr, pr := f(e.RefLSize.Value, e.RefDSize.Value), f(e.RefPSize.Value, e.RefDSize.Value)
	h := &ddt.Histogram{}
	for b := range h {
		a, r := ad[b]*fad, rd[b]*frd
		h[b] = ddt.Bucket{
			Allocated:  ddt.Stat{Blocks: round(ab[b] * fab), LSize: round(a * lr), PSize: round(a * pr), DSize: round(a)},
			Referenced: ddt.Stat{Blocks: round(rb[b] * frb), LSize: round(r * lr), PSize: round(r * pr), DSize: round(r)},
		}
		if h[b].Allocated.Blocks == 0 {
			h[b] = ddt.Bucket{}
		}
	}
	return h
}

// scaled is h with each column scaled to the ranges' ends best (or worst)
// for dedup: allocated columns low and referenced high, or the reverse.
func scaled(h *ddt.Histogram, e *Estimate, best bool) *ddt.Histogram {
	end := func(iv ddt.Interval, high bool) float64 {
		if iv.Value == 0 {
			return 0
		}
		if high {
			return iv.High / iv.Value
		}
		return iv.Low / iv.Value
	}
	fe, fa := end(e.Entries, !best), end(e.AllocDSize, !best)
	fs, fr := end(e.Stored, best), end(e.RefDSize, best)
	out := &ddt.Histogram{}
	for b, k := range h {
		out[b] = ddt.Bucket{
			Allocated: ddt.Stat{Blocks: round(float64(k.Allocated.Blocks) * fe), LSize: round(float64(k.Allocated.LSize) * fa),
				PSize: round(float64(k.Allocated.PSize) * fa), DSize: round(float64(k.Allocated.DSize) * fa)},
			Referenced: ddt.Stat{Blocks: round(float64(k.Referenced.Blocks) * fs), LSize: round(float64(k.Referenced.LSize) * fr),
				PSize: round(float64(k.Referenced.PSize) * fr), DSize: round(float64(k.Referenced.DSize) * fr)},
		}
	}
	return out
}

// bucket is the histogram row of refcnt j: floor(log2 j).
func bucket(j uint64) int {
	b := 0
	for j > 1 {
		j >>= 1
		b++
	}
	return b
}

func round(v float64) uint64 {
	if v <= 0 || math.IsNaN(v) {
		return 0
	}
	if math.IsInf(v, 1) || v >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(v))
}
