package estimate

import (
	"math"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// The bounds of a group plan's sample taken stratum by stratum (Strata):
// each stratum's ratio has its range from its own groups read, in units of
// its own largest group (Stratum.Cap), at an equal share of the risk (a
// union bound over the strata that hold records); a stratum of which no
// group was read lies anywhere it can a priori. The whole's ratio is the
// strata's, weighed by what the metadata gives of each exactly (its LSIZE,
// or its records): a ratio Σa/Σb of the whole is Σ_h B_h·R_h / Σ_h B_h,
// where B_h is stratum h's Σb and R_h its ratio.

// strataRisk is the risk of a stratum's bound: delta shared among the
// strata in proportion to their weight (w of total: what the metadata
// gives of each, the same whatever the sample: its LSIZE, or its
// records), so that the strata that weigh the most get the most of it; a
// stratum of which little is read weighs little in the whole's range
// anyway.
func strataRisk(w, total, delta float64) float64 {
	if total <= 0 {
		return delta
	}
	return delta * w / total
}

// totalWeight is the sum of the strata's weights.
func totalWeight(ss []StratumSample, weight func(st *StratumSample) float64) float64 {
	var w float64
	for i := range ss {
		w += max(weight(&ss[i]), 0)
	}
	return w
}

// stratumPop is the population of groups of stratum st for its bounds'
// finite-population factor: its groups (an upper bound), at least those
// read; every group read is the population at p = 1.
func stratumPop(st *StratumSample, p float64) float64 {
	if p >= 1 {
		return st.Read.n
	}
	return math.Max(float64(st.Groups), st.Read.n)
}

// strataRatio is the range (probability at least 1 − delta) of the
// whole's ratio Σa/Σb, from each stratum's range (ratioRange over its
// groups read: q(st) their sums in its units, and scale, the whole's unit
// of the ratio per the stratum's; lo and hi(st) the ratio's bounds a
// priori in the stratum's units, span as ratioRange's) weighed by
// weight(st), the stratum's Σb (known exactly). point is the ratio's
// point, in the whole's unit, which it keeps within the range.
func strataRatio(ss []StratumSample, q func(st *StratumSample) (pairs, float64), weight func(st *StratumSample) float64,
	span func(r float64) float64, lo float64, hi func(st *StratumSample) float64, point, p, delta float64) (v, low, high float64) {
	total := totalWeight(ss, weight)
	var w, sl, sh float64
	for i := range ss {
		st := &ss[i]
		b := weight(st)
		if b <= 0 {
			continue
		}
		qs, scale := q(st)
		l, h := lo, hi(st)
		if qs.n > 0 && qs.sb > 0 {
			_, l, h = ratioRange(qs, stratumPop(st, p), span, lo, h, strataRisk(b, total, delta))
		}
		w += b
		sl += b * l * scale
		sh += b * h * scale
	}
	if w <= 0 {
		return point, lo, lo
	}
	low, high = sl/w, sh/w
	return math.Min(math.Max(point, low), high), low, high
}

// strataCompress is compressRange over strata: the c for which the
// whole's Σ(stored LSIZE − c·PSIZE) is not ruled out from 0. That sum is
// Σ_h L_h·τ_h(c), L_h the stratum's LSIZE and τ_h(c) its Σ(LSIZE −
// c·PSIZE)/ΣLSIZE of all records, whose range comes from the stratum's
// groups read (ratioRange; a value in [1 − c, 1] per unit of LSIZE, so
// the difference with τ·LSIZE spans c) or, for a stratum of which no
// group was read, is [1 − c, 1]. The strata's ranges hold at the true c
// together with probability at least 1 − delta.
func strataCompress(ss []StratumSample, point, lm, p, delta float64) ddt.Interval {
	total := totalWeight(ss, func(st *StratumSample) float64 { return float64(st.LSize) })
	maxC := math.Max(1, lm/512)
	// The range of Σ_h L_h·τ_h(c), in units of the whole's LSIZE.
	sum := func(c float64) (lo, hi float64) {
		var w float64
		for i := range ss {
			st := &ss[i]
			b := float64(st.LSize)
			if b <= 0 {
				continue
			}
			l, h := 1-c, 1.0
			u := float64(max(st.Cap, 1) * max(st.MaxLSize, 1))
			if st.Read.n > 0 && st.Read.sum[gL] > 0 {
				_, l, h = ratioRange(st.Read.compressPairs(c, u), stratumPop(st, p), func(float64) float64 { return c }, 1-c, 1, strataRisk(b, total, delta))
			}
			w += b
			lo += b * l
			hi += b * h
		}
		return lo / w, hi / w
	}
	// The sum falls as c grows: the low end is the least c whose sum's
	// lower bound is at most 0, the high end the least c beyond which its
	// upper bound is below 0.
	low := bisect(func(c float64) bool { l, _ := sum(c); return l <= 0 }, 1, maxC)
	high := maxC
	if _, h := sum(maxC); h < 0 {
		high = bisect(func(c float64) bool { _, h := sum(c); return h < 0 }, low, maxC)
	}
	return ddt.Interval{Value: math.Min(math.Max(point, low), high), Low: low, High: high}
}

// compressPairs are the sums, per unit u (bytes), of the stratum's groups
// read of z = stored LSIZE − c·PSIZE and of LSIZE (strataCompress).
func (m *GroupMoments) compressPairs(c, u float64) pairs {
	a, b, l := gStoredL, gP, gL
	uu := u * u
	return pairs{n: m.n,
		sa:  (m.sum[a] - c*m.sum[b]) / u,
		sb:  m.sum[l] / u,
		saa: (m.prod[a][a] - 2*c*m.prod[a][b] + c*c*m.prod[b][b]) / uu,
		sbb: m.prod[l][l] / uu,
		sab: (m.prod[a][l] - c*m.prod[b][l]) / uu,
	}
}
