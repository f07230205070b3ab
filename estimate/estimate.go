package estimate

import (
	"cmp"
	"math"
	"slices"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Confidence is the probability with which each range of an Estimate
// holds the whole data's figure.
const Confidence = 0.95

// Input is what a scan that read a sample of the records saw, and what
// the metadata told it of every record without reading.
type Input struct {
	// Fraction is the plan's probability of reading a record (Plan).
	Fraction float64
	// Records are the records ZFS would store (not those lying wholly in
	// a hole of the source file that stay holes), read or not: the
	// population sampled.
	Records uint64
	// Read are those of them read: the sample (what Entries holds, and
	// the all-zero records that became holes, and the embedded ones).
	Read uint64
	// LSize is the sum of the Records' LSIZE, bytes, and MaxLSize the
	// largest, both known from the metadata without reading
	// (zio.FileRecords: recordsize, or a small file's size rounded up to
	// 512); ReadLSize and ReadLSizeSq are the sum over the Read records
	// of LSIZE, bytes, and of (LSIZE/512)². Only whether a record is a
	// hole or embedded, and its PSIZE and DSIZE, need its content.
	LSize, MaxLSize, ReadLSize, ReadLSizeSq uint64
	// MaxDSize is the largest DSIZE a record can have, bytes: the
	// policy's DSIZE of an uncompressed block of MaxLSize, every copy and
	// parity counted (zio.Policy.DSize). Values are bounded by it, not
	// by the largest the sample saw.
	MaxDSize uint64
	// DataMaxDSize, when not 0, is the most the Records can take, bytes:
	// the sum of the policy's DSIZE of each record uncompressed. The
	// referenced and allocated DSIZE are no larger (every record at
	// MaxDSize is the bound without it).
	DataMaxDSize uint64
	// LeastRatio, when not 0, is the least LSIZE/DSIZE a stored record
	// can have: over the LSIZEs records can have (multiples of 512 up to
	// MaxLSize), the least of LSIZE over the policy's DSIZE of that
	// block uncompressed (1/8 for a 512-byte block at ashift 12, one
	// copy). The combined ratio is no lower: each stored record's LSIZE
	// is at least that share of its DSIZE, and dedup only lowers the
	// DSIZE.
	LeastRatio float64
	// Entries calls f with each entry of the sample's table (Refcnt: the
	// times the content was read), until f returns false; Tally, when
	// set, is that table already tallied (a merge's), and Entries is not
	// used. The order of the entries does not change the estimate.
	Entries func(f func(ddt.Entry) bool)
	Tally   *Tally
	// Groups, when not nil, says that the plan read whole groups of
	// records, each group with probability Fraction (a group plan:
	// records likely copies of each other, such as one record index of
	// files of one size, read together or not at all), and holds the
	// sums over the groups read. The sizes' bounds are then taken over
	// groups, and the Unseen programs run on how many of the groups read
	// each content was seen in (the Tally's groups, Tally.AddGroups):
	// a content whose copies all lie in one group is seen whole or not
	// at all. Nil: a plan of single records (each record its own group).
	Groups *GroupMoments
}

// Estimate is what a sample says of the whole data, each figure a point
// and its 95% range (Confidence). Sizes are bytes.
type Estimate struct {
	Fraction float64 `json:"fraction"` // the plan's probability of reading a record
	Seed     uint64  `json:"seed"`     // the plan's seed (set by the caller)
	Groups   bool    `json:"groups"`   // the plan read groups of records (Plan.Groups; set by the caller)
	Records  uint64  `json:"records"`  // records holding data, the population
	Read     uint64  `json:"read"`     // of them, read
	// GroupsRead are, under a group plan, the groups the sample read (its
	// units: few of them make wide ranges); 0 under a plan of single
	// records.
	GroupsRead uint64 `json:"groups_read,omitempty"`
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
	// Histogram is the point estimate of the whole data's DDT histogram,
	// its columns adding up to the points above and its rows rows zdb
	// could print; Best and Worst are it, before its rows were fitted,
	// scaled to the ranges' ends most and least favourable to dedup
	// (Best: the fewest entries and least allocated, the most referenced;
	// Worst the other way), from which the figures built on the table
	// (space, DDT RAM, the verdict) get their ranges: each lies between
	// its values at the two.
	Histogram *ddt.Histogram `json:"-"`
	Best      *ddt.Histogram `json:"-"`
	Worst     *ddt.Histogram `json:"-"`
	// Unfitted is the count program's point histogram, before its rows
	// were fitted or a sample without pairs made it all unique (Best and
	// Worst are it scaled): a figure's range built on the table spans
	// its value at Unfitted too.
	Unfitted *ddt.Histogram `json:"-"`
}

// Compute estimates the whole data's figures from in. The sizes are
// ratios to the LSIZE the metadata gives (Input.LSize), each record's
// value bounded a priori (PSIZE ≤ LSIZE, DSIZE ≤ Input.MaxDSize); a
// sample with no stored block gives zero figures with ranges that say how
// much could have been missed.
func Compute(in Input) *Estimate {
	p := in.Fraction
	e := &Estimate{Fraction: p, Records: in.Records, Read: in.Read}
	if in.Records > 0 && in.Read >= in.Records {
		// Every record read (a fraction near 1, or little data): the
		// sample is the data, and the figures are exact (found by a new
		// user: --read 99.9999% of 3600 records, all read, printed a
		// refcnt-8 row the data has not and ranges of width 4%).
		p = 1
	}
	delta := 1 - Confidence
	popN := float64(in.Records)
	popN0 := popN // the records, whatever the units
	n := float64(in.Read)
	// The units: the largest LSIZE and DSIZE any record can have (from
	// the metadata; the sample's largest when the caller gave none).
	tally := in.Tally
	if tally == nil {
		tally = TallyOf(in.Entries)
	}
	lm, dm := float64(in.MaxLSize), float64(in.MaxDSize)
	if lm == 0 || dm == 0 {
		tally.each(func(x kind, _ uint64) {
			if in.MaxLSize == 0 {
				lm = math.Max(lm, float64(x.LSize))
			}
			if in.MaxDSize == 0 {
				dm = math.Max(dm, float64(x.DSize))
			}
		})
	}
	lm, dm = math.Max(lm, 1), math.Max(dm, 1)
	// The sample's units: records, or groups of at most u records (a
	// group plan) whose values are taken over u records at the largest.
	u := 1.0
	if in.Groups != nil {
		u = math.Max(float64(in.Groups.MaxRecords), 1)
	}
	ul, ud := lm*u, dm*u
	lsize := float64(in.LSize) / ul // Σ l over the population
	// Per unit of the sample, in those units: l its LSIZE, and its
	// stored LSIZE, PSIZE and DSIZE (0 for a hole or an embedded one).
	var st moments
	var sl, sp, sd, cmp pairs // (stored LSIZE, l), (PSIZE, l), (DSIZE, l), (stored LSIZE, PSIZE)
	var str pairs             // group plans: (stored records, records)
	var ns, nl, nl2 float64   // stored records, their Σ l and Σ l²
	cnt := Fingerprint{Seen: map[uint64]float64{}}
	seenD := map[uint64]float64{} // Σ DSIZE, bytes, of the contents read k times
	wgt := Fingerprint{Seen: map[uint64]float64{}}
	var sampleEntries, sampleAlloc, sampleL, sampleP, sampleD float64
	// Each kind of entry (the embedded ones left out: zdb -S does not
	// count them) weighs its count c: c contents, r·c records, seen in
	// j·c groups read (j = r under a plan of single records).
	tally.each(func(x kind, k uint64) {
		c := float64(k)
		r := float64(x.Refcnt) * c
		l, ps, d := float64(x.LSize)/lm, float64(x.PSize)/lm, float64(x.DSize)/dm
		if in.Groups == nil {
			st.add(1, r)
			sl.add(l, l, r)
			sp.add(ps, l, r)
			sd.add(d, l, r)
			cmp.add(l, ps, r)
		}
		ns += r
		nl += l * r
		nl2 += l * l * r
		cnt.Seen[x.groups] += c
		seenD[x.groups] += float64(x.DSize) * c
		cnt.Records += float64(x.groups) * c
		wgt.Seen[x.groups] += d * c
		wgt.Records += d * float64(x.groups) * c
		sampleEntries += c
		sampleAlloc += float64(x.DSize) * c
		sampleL += float64(x.LSize) * r
		sampleP += float64(x.PSize) * r
		sampleD += float64(x.DSize) * r
	})
	if g := in.Groups; g != nil {
		e.GroupsRead = uint64(g.n)
		// A group's contents are read together: the programs' rows
		// are sums over groups of at most u contents each.
		cnt.Cluster, wgt.Cluster = u, u
		// The groups read, each a value of the sample: its sums.
		sl, sp, sd, cmp = g.pairs(gStoredL, gL, ul, ul), g.pairs(gP, gL, ul, ul), g.pairs(gD, gL, ud, ul), g.pairs(gStoredL, gP, ul, ul)
		str = g.pairs(gStored, gRecords, u, u)
		// The population of groups: as many as the caller counted, or
		// at most one a record (the bounds' finite-population factor
		// grows with it: an upper bound is the safe side).
		popN = float64(in.Records)
		switch {
		case p >= 1:
			popN = g.n // every group read: the sample is the data
		case float64(g.Groups) >= g.n:
			// (A shard's own count can fall short of the groups it read:
			// a file split between shards is counted by one.)
			popN = float64(g.Groups)
		}
	} else {
		// The rest of the records read hold nothing zdb -S counts: 0
		// stored, of the LSIZE the metadata gave (what is not the
		// stored ones').
		rest := math.Max(n-ns, 0)
		restL := math.Max(float64(in.ReadLSize)/lm-nl, 0)
		restL2 := math.Max(float64(in.ReadLSizeSq)*(512/lm)*(512/lm)-nl2, 0)
		if in.ReadLSize == 0 {
			restL, restL2 = rest, rest // no metadata given: the largest
		}
		st.n += rest
		for _, q := range []*pairs{&sl, &sp, &sd} {
			q.n += rest
			q.sb += restL
			q.sbb += restL2
		}
		cmp.n += rest
	}
	if lsize == 0 {
		lsize = float64(in.Records) / u // no metadata given: every record the largest
	}
	// A group plan's strata (Strata), when two or more, each bounded over
	// its own groups (stratified.go).
	var ss []StratumSample
	if in.Groups != nil && len(in.Groups.Strata) > 1 && in.LSize > 0 {
		ss = in.Groups.Strata
		// The programs' strata: those of one capacity as one (the
		// rows' bounds depend on it alone), in order of capacity.
		fp := func(weight func(x StratumSeen) float64) []FingerprintStratum {
			var fs []FingerprintStratum
			at := map[uint64]int{}
			for i := range ss {
				st := &ss[i]
				j, ok := at[st.Cap]
				if !ok {
					j = len(fs)
					at[st.Cap] = j
					fs = append(fs, FingerprintStratum{Seen: map[uint64]float64{}, Cluster: float64(max(st.Cap, 1))})
				}
				f := &fs[j]
				f.Most += p * float64(st.Records)
				for _, k := range sortedSeen(st.Seen) {
					w := weight(st.Seen[k])
					f.Seen[k] += w / float64(k)
					f.Records += w
				}
			}
			return fs
		}
		cnt.Strata = fp(func(x StratumSeen) float64 { return float64(x.Pairs) })
		wgt.Strata = fp(func(x StratumSeen) float64 { return float64(x.DSize) / dm })
	}
	// stratified is iv, a total of the values a (each at most am per
	// record of the largest LSIZE lm: am is lm or dm, and a stratum's own
	// am(st)) over LSIZE, with its range from the strata (strataRatio);
	// hiOf is the ratio's bound a priori in a stratum's units.
	stratified := func(iv ddt.Interval, a int, am float64, amOf func(st *StratumSample) float64, span func(float64) float64, hiOf func(st *StratumSample) float64, d float64) ddt.Interval {
		if ss == nil {
			return iv
		}
		scale := float64(in.LSize) * am / lm // bytes per unit of the ratio
		v, lo, hi := strataRatio(ss, func(st *StratumSample) (pairs, float64) {
			c, sa, sl := float64(max(st.Cap, 1)), amOf(st), float64(max(st.MaxLSize, 1))
			// The stratum's ratio, of a/(c·sa) to l/(c·sl), is (lm/am)·(sa/sl) of the whole's unit.
			return st.Read.pairs(a, gL, sa*c, sl*c), (sa / sl) * (lm / am)
		}, func(st *StratumSample) float64 { return float64(st.LSize) }, span, 0, hiOf, iv.Value/scale, p, d)
		return ddt.Interval{Value: v * scale, Low: lo * scale, High: hi * scale}
	}
	lOf := func(st *StratumSample) float64 { return float64(max(st.MaxLSize, 1)) }
	dOf := func(st *StratumSample) float64 { return float64(max(st.MaxDSize, 1)) }
	hi1 := func(*StratumSample) float64 { return 1 }
	total := func(q pairs, unit float64, span func(float64) float64, hi, d float64) ddt.Interval {
		v, lo, h := ratioRange(q, popN, span, 0, hi, d)
		return ddt.Interval{Value: v * lsize * unit, Low: lo * lsize * unit, High: h * lsize * unit}
	}
	one := func(float64) float64 { return 1 }
	if in.Groups != nil {
		// Stored records over records, each group's in [0, its records]:
		// less R·records, in [−R, 1 − R].
		v, lo, hi := ratioRange(str, popN, one, 0, 1, delta)
		if ss != nil {
			v, lo, hi = strataRatio(ss, func(st *StratumSample) (pairs, float64) {
				c := float64(max(st.Cap, 1))
				return st.Read.pairs(gStored, gRecords, c, c), 1
			}, func(st *StratumSample) float64 { return float64(st.Records) }, one, 0, hi1, v, p, delta)
		}
		recs := float64(in.Records)
		e.Stored = ddt.Interval{Value: v * recs, Low: lo * recs, High: hi * recs}
	} else {
		mean, lo, hi := meanRange(st, popN, delta)
		e.Stored = ddt.Interval{Value: mean * popN, Low: lo * popN, High: hi * popN}
	}
	// Stored LSIZE and PSIZE lie in [0, l]: their difference with R·l in
	// [−R, 1 − R] for R ≤ 1. DSIZE lies in [0, 1]: less R·l, in [−R, 1].
	e.RefLSize = stratified(total(sl, ul, one, 1, delta), gStoredL, lm, lOf, one, hi1, delta)
	e.RefPSize = stratified(total(sp, ul, one, 1, delta), gP, lm, lOf, one, hi1, delta)
	// DSIZE: at most every record at the largest; at half the risk, for
	// the ratios built on it.
	dHi := float64(in.Records) / u / math.Max(lsize, 1e-300)
	dSpan := func(r float64) float64 { return 1 + r }
	e.RefDSize = stratified(total(sd, ud, dSpan, dHi, delta/2), gD, dm, dOf, dSpan, func(st *StratumSample) float64 {
		return float64(st.Records) * lOf(st) / math.Max(float64(st.LSize), 1e-300)
	}, delta/2)
	// What the sample holds is there for sure.
	atLeast := func(iv *ddt.Interval, v float64) {
		iv.Low = math.Max(iv.Low, v)
		iv.High = math.Max(iv.High, iv.Low)
		iv.Value = math.Max(iv.Value, iv.Low)
	}
	atLeast(&e.RefLSize, sampleL)
	atLeast(&e.RefPSize, sampleP)
	atLeast(&e.RefDSize, sampleD)
	// No more than every record uncompressed (found by a new user: USED
	// up to 245 MiB for 129 MiB of files, every record taken at the
	// largest LSIZE's DSIZE).
	if m := float64(in.DataMaxDSize); m > 0 && m >= e.RefDSize.Low {
		e.RefDSize.High = math.Min(e.RefDSize.High, m)
		e.RefDSize.Value = math.Min(e.RefDSize.Value, e.RefDSize.High)
	}
	e.Compress = compressRange(cmp, popN, lm, delta)
	if ss != nil && e.Compress.Value > 0 {
		e.Compress = strataCompress(ss, e.Compress.Value, lm, p, delta)
	}

	if ns == 0 {
		// Nothing stored was read: every figure is 0 but for what the
		// records unread could hold; the ratios lie anywhere they can:
		// dedup up to one content for every block, compression up to a
		// record in one 512-byte sector.
		e.Entries = ddt.Interval{High: e.Stored.High}
		e.AllocDSize = ddt.Interval{High: e.RefDSize.High}
		if e.Stored.High > 0 {
			e.Dedup = ddt.Interval{Value: 1, Low: 1, High: math.Max(1, e.Stored.High)}
			e.Compress = ddt.Interval{Value: 1, Low: 1, High: math.Max(1, lm/512)}
			e.Combined = leastCombined(ddt.Interval{Value: 1, Low: 0, High: math.Max(1, lm/512) * math.Max(1, e.Stored.High)}, in.LeastRatio)
		}
		// The ends: nothing stored, or every record that may be stored
		// a content of its own at the largest sizes.
		e.Histogram, e.Best, e.Worst = &ddt.Histogram{}, &ddt.Histogram{}, &ddt.Histogram{}
		all := ddt.Stat{Blocks: roundOut(e.Stored.High, true), LSize: roundOut(e.RefLSize.High, true),
			PSize: roundOut(e.RefPSize.High, true), DSize: roundOut(e.RefDSize.High, true)}
		e.Worst[0] = ddt.Bucket{Allocated: all, Referenced: all}
		return e
	}
	uc, err := solveUnseen(cnt, p, delta)
	if err != nil {
		uc = plainUnseen(cnt, p, e.Stored)
	}
	uw, err := solveUnseen(wgt, p, delta/2)
	if err != nil {
		uw = plainUnseen(wgt, p, ddt.Interval{Value: e.RefDSize.Value / dm, Low: e.RefDSize.Low / dm, High: e.RefDSize.High / dm})
	}
	// What the sample holds is there for sure; no more entries than
	// blocks, no more allocated than referenced.
	clampIv := func(iv ddt.Interval, lo, hi float64) ddt.Interval {
		iv.Low = math.Min(math.Max(iv.Low, lo), hi)
		iv.High = math.Max(math.Min(iv.High, hi), iv.Low)
		iv.Value = math.Min(math.Max(iv.Value, iv.Low), iv.High)
		return iv
	}
	// No more entries than those read and one for each record unread,
	// nor more allocated than theirs and every record unread at the
	// largest DSIZE (found by a new user: 758 entries at most, with 235
	// read and 73 records unread).
	unread := math.Max(popN0-n, 0)
	e.Stored.Low = math.Max(e.Stored.Low, ns)
	e.Stored.High = math.Max(math.Min(e.Stored.High, ns+unread), e.Stored.Low)
	e.Stored.Value = math.Min(math.Max(e.Stored.Value, e.Stored.Low), e.Stored.High)
	e.Entries = clampIv(ddt.Interval{Value: uc.Point, Low: uc.Low, High: uc.High}, sampleEntries, math.Min(e.Stored.High, sampleEntries+unread))
	// The point: the count program's contents per multiplicity, each at
	// the mean DSIZE of the contents read as often as one of that
	// multiplicity would be (dsizeOf); the weighted program's own point
	// strayed twice as far (TestDedupErrorByScale). Its range stands.
	dj := dsizeOf(cnt, seenD, p)
	var allocPoint float64
	for _, j := range sortedKeys(uc.Hist) {
		allocPoint += uc.Hist[j] * dj(j)
	}
	e.AllocDSize = clampIv(ddt.Interval{Value: allocPoint, Low: uw.Low * dm, High: uw.High * dm}, sampleAlloc, math.Min(e.RefDSize.High, sampleAlloc+unread*dm))
	// Referenced is at least allocated: its range starts no lower (found
	// by a new user: on disk 0 B without dedup, 132 KiB with, at the
	// range's low end).
	atLeast(&e.RefDSize, e.AllocDSize.Low)
	// The points: a content takes a block, so no more entries than
	// blocks referenced, nor more allocated than referenced (on unique
	// data the programs' points overshot the sample's means by 1-3%, a
	// table zdb could not print: fitHistogram).
	e.Entries.Value = math.Max(e.Entries.Low, math.Min(e.Entries.Value, e.Stored.Value))
	e.AllocDSize.Value = math.Max(e.AllocDSize.Low, math.Min(e.AllocDSize.Value, e.RefDSize.Value))
	// A sample in which no content was read twice has no pair of reads
	// of one content, whose count estimates the data's pairs of
	// duplicates (p² of them are read): the point is no duplicate at all.
	// The program's point, the middle of a range that spans both, put
	// the dedup ratio of 400 MiB of random data read at 1% at 1.53 (found
	// by a new user). The ranges stand.
	// Under a group plan, no content read twice in one group either.
	noDup := true
	tally.each(func(x kind, _ uint64) { noDup = noDup && x.Refcnt <= 1 && x.groups <= 1 })
	if noDup {
		e.Entries.Value = math.Min(math.Max(e.Stored.Value, e.Entries.Low), e.Entries.High)
		e.AllocDSize.Value = math.Min(math.Max(e.RefDSize.Value, e.AllocDSize.Low), e.AllocDSize.High)
	}
	var h *ddt.Histogram
	if in.Groups != nil {
		h = histogramOf(groupRows(uc, tally, p), e)
	} else {
		h = histogramOf(unseenRows(uc, dj), e)
	}
	e.Best = scaled(h, e, true)
	e.Worst = scaled(h, e, false)
	// The point is the histogram fitted to rows zdb could print; it may
	// move the allocated sizes (fitHistogram), and the points of the
	// allocated DSIZE and the ratios follow it.
	unfitted := h
	if noDup {
		h = histogramOf(unseenRows(Unseen{Hist: map[uint64]float64{1: 1}}, dj), e)
	}
	fit := *h
	fitHistogram(&fit, uint64(lm), uint64(dm))
	e.Histogram, e.Unfitted = &fit, unfitted
	// Where the bounds left a total short of its point (no entry larger
	// than the largest block: the referenced sizes and blocks are
	// estimated apart), the point follows the table, within its range.
	ft := fit.Total()
	for _, x := range []struct {
		iv *ddt.Interval
		v  uint64
	}{{&e.AllocDSize, ft.Allocated.DSize}, {&e.RefLSize, ft.Referenced.LSize}, {&e.RefPSize, ft.Referenced.PSize}, {&e.RefDSize, ft.Referenced.DSize}} {
		if v := float64(x.v); v >= x.iv.Low && v <= x.iv.High {
			x.iv.Value = v
		}
	}
	e.Dedup = ratioOf(e.RefDSize, e.AllocDSize)
	e.Dedup.Low = math.Max(e.Dedup.Low, 1)
	e.Dedup.Value = math.Max(e.Dedup.Value, 1)
	// The dedup ratio is a mean of the contents' refcnts (weighted by
	// DSIZE), so at most the largest refcnt: every block stored but one
	// per other entry (found by a new user: 1.00 to 64.00 with 1 of 26
	// records read, the ratio of two ends of independent ranges).
	if most := e.Stored.High - math.Max(e.Entries.Low, 1) + 1; most >= 1 {
		e.Dedup.High = math.Max(math.Min(e.Dedup.High, most), e.Dedup.Value)
	}
	refL := stratified(total(sl, ul, one, 1, delta/2), gStoredL, lm, lOf, one, hi1, delta/2)
	atLeast(&refL, sampleL)
	e.Combined = ratioOf(refL, e.AllocDSize)
	e.Combined = leastCombined(e.Combined, in.LeastRatio)
	return e
}

// leastCombined is the combined ratio's range no lower than least (a
// ratio's ends from two ranges each at half the risk went below what
// any data could give: 0.07 at ashift 12, where 1/8 is the least).
func leastCombined(iv ddt.Interval, least float64) ddt.Interval {
	if least <= 0 || iv.High == 0 {
		return iv
	}
	iv.Low = math.Max(iv.Low, least)
	iv.Value = math.Max(iv.Value, iv.Low)
	iv.High = math.Max(iv.High, iv.Value)
	return iv
}

// ratioOf is a/b with the range from the ends of both (each at half
// the risk).
func ratioOf(a, b ddt.Interval) ddt.Interval {
	if b.Value <= 0 {
		return ddt.Interval{}
	}
	iv := ddt.Interval{Value: a.Value / b.Value, Low: a.Low / b.High, High: math.MaxFloat64}
	if b.Low > 0 {
		iv.High = a.High / b.Low
	}
	return iv
}

// compressRange is the range of the compression ratio c = ΣLSIZE/ΣPSIZE
// over the stored records, from the sample's sums q (a: stored LSIZE, b:
// PSIZE, over the largest LSIZE; 0 for the records not stored) out of
// popN records: the c for which the mean of LSIZE − c·PSIZE is not ruled
// out from 0 (ratioRange). PSIZE ≤ LSIZE ≤ 1, so c ≥ 1 and the value lies
// in [1 − c, 1], of width c; a block takes a 512-byte sector at least, so
// c is at most lm (the largest LSIZE, bytes) / 512.
func compressRange(q pairs, popN, lm, delta float64) ddt.Interval {
	if q.sb == 0 {
		return ddt.Interval{}
	}
	v, lo, hi := ratioRange(q, popN, func(c float64) float64 { return c }, 1, math.Max(1, lm/512), delta)
	return ddt.Interval{Value: v, Low: lo, High: hi}
}

// plainUnseen is the fallback when the program fails: the contents seen,
// scaled by 1/p, within [the contents seen, the records].
func plainUnseen(f Fingerprint, p float64, recs ddt.Interval) Unseen {
	var seen float64
	u := Unseen{Hist: map[uint64]float64{}}
	for _, k := range sortedKeys(f.Seen) {
		w := f.Seen[k]
		seen += w
		u.Hist[uint64(math.Max(1, math.Round(float64(k)/p)))] += w
	}
	u.Point, u.Low, u.High = seen, seen, math.Max(recs.High, seen)
	return u
}

// row is a part of the point histogram before its columns are scaled:
// contents (a weight) of one refcnt, each of one DSIZE, bytes.
type row struct {
	refcnt uint64
	w, d   float64
}

// unseenRows are the rows of the count program's solution under a plan
// of single records: its contents of multiplicity j (a refcnt), at DSIZE
// dj(j) each, in a fixed order (the sums do not depend on the map's).
func unseenRows(uc Unseen, dj func(j uint64) float64) []row {
	var rows []row
	for _, j := range sortedKeys(uc.Hist) {
		rows = append(rows, row{refcnt: j, w: uc.Hist[j], d: dj(j)})
	}
	return rows
}

// groupRows are the rows of the count program's solution under a group
// plan, where its multiplicities are counts of groups, not refcnts. The
// contents of multiplicity k are seen in j of the groups read with
// probability Binomial(k, p)(j); they are spread over the sample's
// contents seen in j ≥ 1 groups in proportion to those probabilities,
// each taking the refcnt r·k/j (r: its records read, all its records in
// the j groups read) and its DSIZE. A content seen in one group is seen
// whole: the refcnt of a clone's unchanged record is read exactly.
func groupRows(uc Unseen, tally *Tally, p float64) []row {
	type seen struct {
		k kind
		n float64
	}
	byJ := map[uint64][]seen{}
	fj := map[uint64]float64{}
	tally.each(func(x kind, n uint64) {
		byJ[x.groups] = append(byJ[x.groups], seen{x, float64(n)})
		fj[x.groups] += float64(n)
	})
	js := sortedKeys(fj)
	var meanD, nAll float64
	for _, j := range js {
		for _, s := range byJ[j] {
			meanD += float64(s.k.DSize) * s.n
			nAll += s.n
		}
	}
	meanD /= math.Max(nAll, 1)
	var rows []row
	for _, k := range sortedKeys(uc.Hist) {
		w := uc.Hist[k]
		var z float64
		for _, j := range js {
			z += binomRange(k, p, j, j)
		}
		if z == 0 {
			// None like it could have been read (each content read was
			// seen in more groups than it has): one record a group, at
			// the sample's mean DSIZE.
			rows = append(rows, row{refcnt: k, w: w, d: meanD})
			continue
		}
		for _, j := range js {
			share := w * binomRange(k, p, j, j) / z / fj[j]
			if share == 0 {
				continue
			}
			for _, s := range byJ[j] {
				r := max(1, uint64(math.Round(float64(s.k.Refcnt)*float64(k)/float64(j))))
				rows = append(rows, row{refcnt: r, w: share * s.n, d: float64(s.k.DSize)})
			}
		}
	}
	return rows
}

// histogramOf builds the point histogram from rows: per refcnt bucket
// the rows' contents at their DSIZE; LSIZE and PSIZE follow DSIZE at the
// sample's ratios; each column is then scaled to the totals estimated
// (entries and allocated DSIZE from the programs, referenced blocks and
// sizes from the sample's means).
func histogramOf(rows []row, e *Estimate) *ddt.Histogram {
	var ab, rb, ad, rd [64]float64
	for _, x := range rows {
		b := bucket(x.refcnt)
		ab[b] += x.w
		rb[b] += x.w * float64(x.refcnt)
		ad[b] += x.w * x.d
		rd[b] += x.w * x.d * float64(x.refcnt)
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
	// A row needs an entry: the rows where the count program has none
	// (or less than half of one) are left out, and the others scaled up
	// to keep the totals (found by TestReadHarness: the referenced DSIZE
	// of such rows was lost, and zfs list USED fell below its range).
	keep := func(b int) bool { return round(ab[b]*fab) > 0 }
	var kb, kd, krb, krd float64
	for b := range ab {
		if keep(b) {
			kb, kd, krb, krd = kb+ab[b]*fab, kd+ad[b]*fad, krb+rb[b]*frb, krd+rd[b]*frd
		}
	}
	gab, gad := f(e.Entries.Value, kb), f(e.AllocDSize.Value, kd)
	grb, grd := f(e.Stored.Value, krb), f(e.RefDSize.Value, krd)
	h := &ddt.Histogram{}
	for b := range h {
		if !keep(b) {
			continue
		}
		a, r := ad[b]*fad*gad, rd[b]*frd*grd
		h[b] = ddt.Bucket{
			Allocated:  ddt.Stat{Blocks: round(ab[b] * fab * gab), LSize: round(a * lr), PSize: round(a * pr), DSize: round(a)},
			Referenced: ddt.Stat{Blocks: round(rb[b] * frb * grb), LSize: round(r * lr), PSize: round(r * pr), DSize: round(r)},
		}
	}
	// Each column adds up to its total exactly: the rows' rounding is
	// settled on the largest row (a figure at the end of its range, the
	// DSIZE of incompressible data, was a byte short of it).
	settle := func(total float64, col func(*ddt.Bucket) *uint64) {
		var sum uint64
		big := -1
		for b := range h {
			v := *col(&h[b])
			sum += v
			if v > 0 && (big < 0 || v > *col(&h[big])) {
				big = b
			}
		}
		want := round(total)
		if big < 0 || want == sum {
			return
		}
		if v := col(&h[big]); want > sum || *v > sum-want {
			*v = *v + want - sum
		}
	}
	settle(e.Entries.Value, func(k *ddt.Bucket) *uint64 { return &k.Allocated.Blocks })
	settle(e.AllocDSize.Value, func(k *ddt.Bucket) *uint64 { return &k.Allocated.DSize })
	settle(e.AllocDSize.Value*lr, func(k *ddt.Bucket) *uint64 { return &k.Allocated.LSize })
	settle(e.AllocDSize.Value*pr, func(k *ddt.Bucket) *uint64 { return &k.Allocated.PSize })
	settle(e.Stored.Value, func(k *ddt.Bucket) *uint64 { return &k.Referenced.Blocks })
	settle(e.RefDSize.Value, func(k *ddt.Bucket) *uint64 { return &k.Referenced.DSize })
	settle(e.RefLSize.Value, func(k *ddt.Bucket) *uint64 { return &k.Referenced.LSize })
	settle(e.RefPSize.Value, func(k *ddt.Bucket) *uint64 { return &k.Referenced.PSize })
	return h
}

// fitHistogram makes the rows of h rows zdb could print, keeping the
// totals of its blocks columns: the refcnt-1 row references what it
// allocates, and the row of refcnts 2^b to 2^(b+1)−1 references between
// 2^b and 2^(b+1)−1 times what it allocates, in blocks and in each size.
// The allocated columns (from the programs) and the referenced ones (from
// the sample's means) are estimated apart, so until then their rows need
// not agree: a new user saw a refcnt-1 row of 44.4K blocks allocated and
// 44.6K referenced, and a content read in 1% of 262,144 records of zeros
// sat in the 256K row with 251K references.
//
// The refcnt-1 row keeps its entries and references them once; the
// duplicate rows share the references left, each entry at least two
// (where there are too few, the fewest entries move to the refcnt-1 row,
// from the rows of fewest references per entry; where there are
// references left and no duplicate row, the fewest entries of the
// refcnt-1 row become duplicates), in proportion to what each row had
// over two per entry. Each row's entries then go to the row of their mean
// refcnt (split between two neighbouring rows where the mean falls
// between them), taking their share of the row's allocated sizes along.
// Last, each referenced size column is its rows' references at their
// allocated mean, spread to its total within the rows' bounds (fitRows);
// no entry or reference is larger than the largest block (maxL bytes of
// LSIZE or PSIZE, maxD of DSIZE; 0: no bound).
// The ranges are not built on this histogram (Compute scales the unfitted
// one), only the point.
func fitHistogram(h *ddt.Histogram, maxL, maxD uint64) {
	tot := h.Total()
	e, st := tot.Allocated.Blocks, tot.Referenced.Blocks
	if e == 0 || st < e {
		return
	}
	// A group: entries and their allocated sizes (Blocks: the entries),
	// and the references they get.
	type group struct {
		alloc ddt.Stat
		refs  uint64
	}
	// part is the share of x entries of s, sizes in proportion.
	part := func(s ddt.Stat, x uint64) ddt.Stat {
		if x >= s.Blocks {
			return s
		}
		f := float64(x) / float64(s.Blocks)
		return ddt.Stat{Blocks: x, LSize: round(f * float64(s.LSize)), PSize: round(f * float64(s.PSize)), DSize: round(f * float64(s.DSize))}
	}
	sub := func(s, t ddt.Stat) ddt.Stat {
		return ddt.Stat{Blocks: s.Blocks - t.Blocks, LSize: s.LSize - t.LSize, PSize: s.PSize - t.PSize, DSize: s.DSize - t.DSize}
	}
	one := h[0].Allocated
	var dups []group
	var n uint64
	for b := 1; b < len(h); b++ {
		if a := h[b].Allocated; a.Blocks > 0 {
			dups = append(dups, group{alloc: a, refs: h[b].Referenced.Blocks})
			n += a.Blocks
		}
	}
	refs := st - one.Blocks // what the duplicate rows reference
	switch {
	case refs < 2*n:
		// Too few references for two per duplicate entry: 2n − refs
		// entries move to the refcnt-1 row (each takes one reference
		// with it), from the rows of fewest references per entry.
		x := 2*n - refs
		slices.SortStableFunc(dups, func(p, q group) int {
			return cmp.Compare(float64(p.refs)/float64(p.alloc.Blocks), float64(q.refs)/float64(q.alloc.Blocks))
		})
		for i := range dups {
			k := min(x, dups[i].alloc.Blocks)
			m := part(dups[i].alloc, k)
			dups[i].alloc = sub(dups[i].alloc, m)
			one.Add(m)
			x -= k
			n -= k
		}
		refs = st - one.Blocks
	case n == 0 && refs > 0:
		// References left and no duplicate row: the fewest entries of
		// the refcnt-1 row become duplicates, two references each at
		// least.
		x := min(one.Blocks, refs)
		m := part(one, x)
		one = sub(one, m)
		dups = append(dups, group{alloc: m})
		n = x
		refs = st - one.Blocks
	}
	// The references over two per entry, shared in proportion to what
	// each row had over two per entry (to its entries where none had).
	var w []float64
	var ws float64
	for _, g := range dups {
		v := math.Max(float64(g.refs)-2*float64(g.alloc.Blocks), 0)
		w = append(w, v)
		ws += v
	}
	if ws == 0 {
		for i, g := range dups {
			w[i] = float64(g.alloc.Blocks)
			ws += w[i]
		}
	}
	over := refs - 2*n
	var given uint64
	big := -1
	for i := range dups {
		d := uint64(0)
		if ws > 0 {
			d = uint64(math.Floor(float64(over) * w[i] / ws))
		}
		dups[i].refs = 2*dups[i].alloc.Blocks + d
		given += d
		if dups[i].alloc.Blocks > 0 && (big < 0 || w[i] > w[big]) {
			big = i
		}
	}
	if big >= 0 {
		dups[big].refs += over - given
	}
	// Each group to the row of its mean refcnt m = refs/entries, between
	// 2^b and 2^(b+1)−1; a mean between 2^(b+1)−1 and 2^(b+1) puts y
	// entries at 2^(b+1) and the others at 2^(b+1)−1.
	out := ddt.Histogram{}
	add := func(b int, a ddt.Stat, r uint64) {
		out[b].Allocated.Add(a)
		out[b].Referenced.Blocks += r
	}
	add(0, one, one.Blocks)
	for _, g := range dups {
		a := g.alloc.Blocks
		if a == 0 {
			continue
		}
		b := min(bucket(g.refs/a), 62)
		top := uint64(1)<<(b+1) - 1
		if g.refs <= a*top || b == 62 {
			add(b, g.alloc, g.refs)
			continue
		}
		y := g.refs - a*top
		m := part(g.alloc, y)
		add(b+1, m, y*(top+1))
		add(b, sub(g.alloc, m), (a-y)*top)
	}
	// The referenced sizes: the refcnt-1 row's its allocated ones, each
	// other row's its references at its allocated mean; then each column
	// spread to its total.
	for b := range out {
		a, r := out[b].Allocated, &out[b].Referenced
		if b == 0 {
			*r = a
			continue
		}
		if a.Blocks > 0 {
			k := float64(r.Blocks) / float64(a.Blocks)
			r.LSize, r.PSize, r.DSize = round(k*float64(a.LSize)), round(k*float64(a.PSize)), round(k*float64(a.DSize))
		}
	}
	for _, c := range []struct {
		col       func(s *ddt.Stat) *uint64
		want, per uint64
	}{
		{func(s *ddt.Stat) *uint64 { return &s.LSize }, tot.Referenced.LSize, maxL},
		{func(s *ddt.Stat) *uint64 { return &s.PSize }, tot.Referenced.PSize, maxL},
		{func(s *ddt.Stat) *uint64 { return &s.DSize }, tot.Referenced.DSize, maxD},
	} {
		// No entry larger than the largest block.
		for b := range out {
			if a := c.col(&out[b].Allocated); c.per > 0 && *a > out[b].Allocated.Blocks*c.per {
				*a = out[b].Allocated.Blocks * c.per
				r := c.col(&out[b].Referenced)
				*r = min(*r, out[b].Referenced.Blocks*c.per)
			}
		}
		fitRows(&out, c.col, c.want, c.per)
		var sum uint64
		for b := range out {
			sum += *c.col(&out[b].Referenced)
		}
		// What the rows have no room for moves their allocated sizes,
		// the least it can: the highest duplicate row's first (each of
		// its bytes allocated holds the most references), down to 512
		// bytes an entry; then the refcnt-1 row's. On 262,144 records of
		// zeros read at 1%, the mean size of the zeros' entry was 98K of
		// 128K: its 34 GB referenced did not fit.
		for b := len(out) - 2; b >= 0 && sum != c.want; b-- {
			blocks := out[b].Allocated.Blocks
			if blocks == 0 {
				continue
			}
			a, r := c.col(&out[b].Allocated), c.col(&out[b].Referenced)
			if b == 0 {
				if *a+c.want >= sum {
					na := *a + c.want - sum
					if c.per > 0 {
						na = min(na, blocks*c.per)
					}
					sum = sum - *r + na
					*a, *r = na, na
				}
				break
			}
			lo, hi := uint64(1)<<b, uint64(1)<<(b+1)-1
			if sum < c.want {
				nr := *r + c.want - sum
				if c.per > 0 {
					nr = min(nr, out[b].Referenced.Blocks*c.per)
				}
				*a = max(*a, (nr+hi-1)/hi)
				sum += nr - *r
				*r = nr
				continue
			}
			floor := blocks * 512
			nr := max(*r-min(*r, sum-c.want), floor*lo)
			if nr >= *r {
				continue
			}
			*a = min(*a, max(nr/lo, floor))
			sum -= *r - nr
			*r = nr
		}
	}
	*h = out
}

// fitRows puts each row of one referenced column of h (col: blocks,
// LSIZE, PSIZE or DSIZE) within its bounds (fitHistogram's; and, with per
// > 0, at most per bytes a referenced block) and then
// moves what the column lacks of want, or has over it, to the rows, each
// within its bounds and in proportion to its room; what no row has room
// for stays off the total (fitHistogram makes room for the blocks).
func fitRows(h *ddt.Histogram, col func(*ddt.Stat) *uint64, want, per uint64) {
	var sum uint64
	var lo, hi [64]uint64
	for b := range h {
		a, r := *col(&h[b].Allocated), col(&h[b].Referenced)
		lo[b], hi[b] = a<<b, a*(1<<(b+1)-1)
		if b == 0 {
			hi[b] = a
		}
		if b >= 63 || a > math.MaxUint64>>(b+1) {
			lo[b], hi[b] = min(lo[b], *r), max(hi[b], *r) // no such rows in practice
		}
		if n := h[b].Referenced.Blocks; per > 0 && n <= math.MaxUint64/per {
			hi[b] = max(lo[b], min(hi[b], n*per))
		}
		*r = min(max(*r, lo[b]), hi[b])
		sum += *r
	}
	for pass := 0; pass < 2 && sum != want; pass++ {
		var room uint64
		for b := range h {
			if sum < want {
				room += hi[b] - *col(&h[b].Referenced)
			} else {
				room += *col(&h[b].Referenced) - lo[b]
			}
		}
		if room == 0 {
			return
		}
		gap := want - sum
		if sum > want {
			gap = sum - want
		}
		gap = min(gap, room)
		g0 := gap
		// Pass 0 shares the gap in proportion to each row's room (rounded
		// down); pass 1 places what rounding left, row by row.
		for b := range h {
			r := col(&h[b].Referenced)
			rm := hi[b] - *r
			if sum > want {
				rm = *r - lo[b]
			}
			d := rm
			if pass == 0 {
				d = uint64(float64(g0) * float64(rm) / float64(room))
			}
			d = min(d, gap, rm)
			if sum < want {
				*r += d
				sum += d
			} else {
				*r -= d
				sum -= d
			}
			gap -= d
			if pass == 1 && gap == 0 {
				break
			}
		}
	}
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
	// Rounded outwards (up at a high end, down at a low one), so that a
	// figure at the end of its range, such as the referenced DSIZE of
	// incompressible data, is not a byte short of it.
	ra := func(v float64) uint64 { return roundOut(v, !best) }
	rr := func(v float64) uint64 { return roundOut(v, best) }
	out := &ddt.Histogram{}
	for b, k := range h {
		out[b] = ddt.Bucket{
			Allocated: ddt.Stat{Blocks: ra(float64(k.Allocated.Blocks) * fe), LSize: ra(float64(k.Allocated.LSize) * fa),
				PSize: ra(float64(k.Allocated.PSize) * fa), DSize: ra(float64(k.Allocated.DSize) * fa)},
			Referenced: ddt.Stat{Blocks: rr(float64(k.Referenced.Blocks) * fs), LSize: rr(float64(k.Referenced.LSize) * fr),
				PSize: rr(float64(k.Referenced.PSize) * fr), DSize: rr(float64(k.Referenced.DSize) * fr)},
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

// roundOut is v rounded up (or down), within a relative 1e-12 of an
// integer taken as that integer.
func roundOut(v float64, up bool) uint64 {
	if r := math.Round(v); math.Abs(v-r) <= 1e-12*math.Abs(v) {
		return round(r)
	}
	if up {
		return round(math.Ceil(v))
	}
	return round(math.Floor(v))
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

// dsizeOf returns the mean DSIZE, bytes, expected of a content of
// multiplicity j (a refcnt of the whole data), from the sample's contents:
// seenD[k] is the DSIZE summed over the f.Seen[k] contents read k times. A
// content of multiplicity j is read k times with probability Bin(j, p)(k);
// its DSIZE is taken as the mean of the contents read k times, averaged
// over k ≥ 1 with those weights (a row k the sample has none of lends
// the nearest row's mean). Contents never read are assumed of the size
// of those read of the same multiplicity: the point estimate's one
// assumption, which the weighted program's range does not make.
func dsizeOf(f Fingerprint, seenD map[uint64]float64, p float64) func(j uint64) float64 {
	ks := sortedKeys(f.Seen)
	mean := func(k uint64) float64 {
		i, _ := slices.BinarySearch(ks, k)
		switch {
		case i == len(ks):
			i--
		case ks[i] != k && i > 0 && k-ks[i-1] < ks[i]-k:
			i--
		}
		return seenD[ks[i]] / f.Seen[ks[i]]
	}
	cache := map[uint64]float64{}
	return func(j uint64) float64 {
		if v, ok := cache[j]; ok {
			return v
		}
		var s, w float64
		if len(ks) > 0 {
			top := min(j, ks[len(ks)-1]+uint64(6*math.Sqrt(float64(ks[len(ks)-1])))+6)
			for k := uint64(1); k <= top; k++ {
				b := binomRange(j, p, k, k)
				s += b * mean(k)
				w += b
			}
		}
		v := 0.0
		if w > 0 {
			v = s / w
		}
		cache[j] = v
		return v
	}
}
