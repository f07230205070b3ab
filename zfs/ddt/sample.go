package ddt

import (
	"encoding/binary"
	"encoding/json"
	"math"
)

// InSample reports whether key k is in the 1/n of the hash space that a
// sampled scan keeps: its first 8 bytes, read as a big-endian integer, are
// below 2^64/n. BLAKE3 spreads contents uniformly, so each unique content
// is kept with probability 1/n, independently of the others, and every
// copy of a kept content is kept with it.
func InSample(k Key, n uint64) bool {
	return n <= 1 || SampleClass(k, n) == 0
}

// SampleClass splits the hash space into n equal ranges by the key's first
// 8 bytes and returns the range k falls in, 0 … n−1 (InSample keeps class
// 0). The classes are n disjoint samples of the same data, which is how the
// tests check the estimators' coverage.
func SampleClass(k Key, n uint64) uint64 {
	return min(binary.BigEndian.Uint64(k[:8])/(math.MaxUint64/n), n-1)
}

// Interval is an estimate with a 95% confidence interval.
type Interval struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// SampleEstimate holds what a 1/N content sample says about the whole data.
type SampleEstimate struct {
	N         uint64     `json:"n"`         // the sampling rate is 1/N
	Sampled   uint64     `json:"sampled"`   // unique contents in the sample
	Histogram *Histogram `json:"-"`         // the sample's histogram scaled by N (counts and sizes)
	Entries   Interval   `json:"entries"`   // DDT entries (unique stored blocks)
	Dedup     Interval   `json:"dedup"`     // referenced DSIZE / allocated DSIZE
	Compress  Interval   `json:"compress"`  // referenced LSIZE / referenced PSIZE
	Combined  Interval   `json:"combined"`  // dedup × compress / copies
	Allocated Interval   `json:"allocated"` // allocated DSIZE, bytes
	// Reliable is false when fewer than MinReliableSample contents were
	// kept: the normal approximation behind the intervals then fails
	// (measured: intervals missing the truth on the 518-content golden
	// set at 1/16 and 1/64), and the estimates can be far off.
	Reliable bool `json:"reliable"`
	// Blocks is the sample's estimate of the data's blocks (stored and
	// embedded, every reference), n × the sampled references.
	Blocks Interval `json:"blocks"`
	// Counted is the data's blocks as the scan counted them, every
	// record hashed whether sampled or not (set by CheckCounted; 0 when
	// not checked).
	Counted uint64 `json:"counted_blocks,omitempty"`
	// Skewed reports that Blocks and Counted disagree beyond sampling
	// noise: a few contents referenced very often fell out of the sample
	// (or into it), so the dedup estimate is far off, whatever its
	// interval says. Reliable is then false too.
	Skewed bool `json:"skewed,omitempty"`
	// DedupByCount (when Skewed) is the dedup estimate scaled by Counted /
	// Blocks, and at least 1: the references the sample missed (or
	// over-counted) taken to be to blocks of the sample's mean size. A hint, not an estimate with
	// an interval: its error is at least that of Entries.
	DedupByCount float64 `json:"dedup_by_count,omitempty"`
}

// CheckCounted compares the sample's estimate of the data's blocks with
// the count of every block the scan hashed (records that are not holes),
// and sets Skewed (and clears Reliable) when they differ by more than a
// quarter, or by more than a tenth and twice the 95% interval's half-width
// (about 4 standard errors: on evenly duplicated data a false alarm is
// rare, TestSampleEstimatesCoverTruth).
func (e *SampleEstimate) CheckCounted(counted uint64) {
	e.Counted = counted
	if e.Sampled == 0 || counted == 0 {
		return
	}
	c, b := float64(counted), e.Blocks.Value
	d := math.Abs(b - c)
	if d > 0.25*c || d > 0.1*c && d > 2*(e.Blocks.High-e.Blocks.Value) {
		e.Skewed, e.Reliable = true, false
		if b > 0 {
			// A dedup ratio is at least 1 (found by a new user:
			// "about 0.67").
			e.DedupByCount = math.Max(1, e.Dedup.Value*c/b)
		}
	}
}

// MarshalJSON writes the estimate as its fields; when no content was
// sampled nothing can be estimated, and the intervals are null (not a
// ratio of 0 with an interval of width 0).
func (e SampleEstimate) MarshalJSON() ([]byte, error) {
	type fields SampleEstimate // without this method
	if e.Sampled > 0 {
		return json.Marshal(fields(e))
	}
	return json.Marshal(struct {
		N         uint64    `json:"n"`
		Sampled   uint64    `json:"sampled"`
		Entries   *Interval `json:"entries"`
		Dedup     *Interval `json:"dedup"`
		Compress  *Interval `json:"compress"`
		Combined  *Interval `json:"combined"`
		Allocated *Interval `json:"allocated"`
		Reliable  bool      `json:"reliable"`
	}{N: e.N, Sampled: e.Sampled, Reliable: e.Reliable})
}

// MinReliableSample is the number of sampled unique contents below which
// a sample's intervals are not to be trusted.
const MinReliableSample = 300

// EstimateTable is EstimateSample over every entry of t.
func EstimateTable(t *Table, n uint64) *SampleEstimate {
	return EstimateSample(func(f func(Entry) bool) {
		t.Range(func(_ Key, e Entry) bool { return f(e) })
	}, n)
}

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959964

// sampleAcc accumulates the per-key sums the estimators need.
type sampleAcc struct {
	n              float64 // sampled keys
	refs, refs2    float64 // Σ refcnt and Σ refcnt² over every sampled key, embedded ones included
	rL, rP, rD, aD float64 // sums of referenced LSIZE/PSIZE/DSIZE and allocated DSIZE
	keys           [][4]float64
	histogram      Histogram
}

// EstimateSample turns the table of a scan sampled at 1/n into estimates
// for the whole data. Each unique content is in the sample independently
// with probability p = 1/n (Poisson sampling), so a total is estimated by
// n × its sample sum (Horvitz–Thompson), with variance Σ x²(1−p)/p² over
// the sampled keys; a ratio A/B by the ratio of the estimated totals, its
// variance by linearisation: Σ (a − R·b)²(1−p)/p² / B². Intervals are ±1.96
// standard errors (normal approximation: it needs some tens of sampled
// contents; with few, the interval says so by being wide).
func EstimateSample(entries func(func(Entry) bool), n uint64) *SampleEstimate {
	p := 1 / float64(n)
	var a sampleAcc
	entries(func(e Entry) bool {
		a.refs += float64(e.Refcnt)
		a.refs2 += float64(e.Refcnt) * float64(e.Refcnt)
		if e.PSize == 0 {
			return true // embedded
		}
		r := float64(e.Refcnt)
		k := [4]float64{r * float64(e.LSize), r * float64(e.PSize), r * float64(e.DSize), float64(e.DSize)}
		a.keys = append(a.keys, k)
		a.n++
		a.rL += k[0]
		a.rP += k[1]
		a.rD += k[2]
		a.aD += k[3]
		a.histogram.Add(e.Refcnt, uint64(e.LSize), uint64(e.PSize), e.DSize)
		return true
	})
	est := &SampleEstimate{N: n, Sampled: uint64(a.n), Histogram: scaleHistogram(&a.histogram, n),
		Reliable: a.n >= MinReliableSample}
	f := (1 - p) / (p * p)
	nf := float64(n)
	// Entries: x = 1 per key.
	ev := math.Sqrt(a.n * f)
	est.Entries = Interval{a.n * nf, math.Max(0, a.n*nf-z95*ev), a.n*nf + z95*ev}
	bv := z95 * math.Sqrt(a.refs2*f)
	est.Blocks = Interval{a.refs * nf, math.Max(0, a.refs*nf-bv), a.refs*nf + bv}
	ratio := func(ai, bi int, A, B float64) Interval {
		if B == 0 {
			return Interval{}
		}
		R := A / B
		var v float64
		for _, k := range a.keys {
			d := k[ai] - R*k[bi]
			v += d * d
		}
		se := math.Sqrt(v*f) / (B * nf)
		return Interval{R, R - z95*se, R + z95*se}
	}
	est.Dedup = ratio(2, 3, a.rD, a.aD)
	est.Compress = ratio(0, 1, a.rL, a.rP)
	// combined = dedup × compress / copies = rL / aD.
	est.Combined = ratio(0, 3, a.rL, a.aD)
	var v float64
	for _, k := range a.keys {
		v += k[3] * k[3]
	}
	se := math.Sqrt(v * f)
	est.Allocated = Interval{a.aD * nf, math.Max(0, a.aD*nf-z95*se), a.aD*nf + z95*se}
	return est
}

// scaleHistogram returns the whole-data estimate from a sample's
// histogram: each sampled content stands for n contents with the same
// refcnt (refcnts are exact), so every count and size is multiplied by n
// and the buckets stay where they are.
func scaleHistogram(h *Histogram, n uint64) *Histogram {
	out := &Histogram{}
	for i := range h {
		out[i] = Bucket{Allocated: h[i].Allocated.Times(n), Referenced: h[i].Referenced.Times(n)}
	}
	return out
}
