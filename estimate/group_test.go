package estimate

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/stress"
	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// grouped is a synthetic population in groups: contents (each its own
// sizes) and, per group, its contents and how many records of each.
type grouped struct {
	contents []content // refs unused: the groups hold them
	groups   [][]ref
	// caps, when set, are each group's capacity (the files of its size):
	// the sample is then given strata (Strata), as a scan gives them.
	caps []uint64
}

// ref is refs records of content c in one group.
type ref struct{ c, refs uint64 }

// groupShapes are populations of about n records of 16K in the groups a
// group plan would form (one record index of files of one size):
//   - clones: the harness's 8 clones of an image, 3% of each clone's
//     records changed: a group is one record index of the 8 images;
//   - backups: the harness's 12 full backups, 5% of the records
//     rewritten between backups: a group is one record of one file in
//     the 12 backups;
//   - grown: clones of which two grew (their records in groups of
//     their own): each base content is in three groups;
//   - small: small files, one a group, a fifth of them copies under
//     other names (in other groups);
//   - same-size: the backups of 16 files of one size: a group is one
//     record index of all 16 files in the 12 backups (25 contents a
//     group), which the programs' bounds must allow for.
//
// Half the 16K contents compress to 1–32 sectors, half not at all.
func groupShapes(rng *rand.Rand, n int) map[string]grouped {
	rec := func(p *grouped) uint64 {
		ps := uint32(16 << 10)
		if rng.IntN(2) == 0 {
			ps = uint32(512 * (1 + rng.IntN(32)))
		}
		p.contents = append(p.contents, content{lsize: 16 << 10, psize: ps, dsize: uint64(ps)})
		return uint64(len(p.contents) - 1)
	}
	// images adds a group of k clones' records: the base content where
	// unchanged, a new one where changed.
	images := func(p *grouped, base uint64, k int) {
		var g []ref
		var same uint64
		for range k {
			if rng.Float64() < 0.03 {
				g = append(g, ref{rec(p), 1})
			} else {
				same++
			}
		}
		if same > 0 {
			g = append(g, ref{base, same})
		}
		p.groups = append(p.groups, g)
	}
	out := map[string]grouped{}
	var clones, grown, backups, small grouped
	for range n / 8 {
		images(&clones, rec(&clones), 8)
		base := rec(&grown)
		for _, k := range []int{6, 1, 1} {
			images(&grown, base, k)
		}
	}
	// versions appends to g one record's contents in 12 backups, 5% of
	// them rewritten between backups: each content lives on until then.
	versions := func(p *grouped, g []ref) []ref {
		var life uint64
		for b := range 12 {
			life++
			if b == 11 || rng.Float64() < 0.05 {
				g = append(g, ref{rec(p), life})
				life = 0
			}
		}
		return g
	}
	for range n / 12 {
		backups.groups = append(backups.groups, versions(&backups, nil))
	}
	var same grouped
	for range n / 192 {
		var g []ref
		for range 16 {
			g = versions(&same, g)
		}
		same.groups = append(same.groups, g)
	}
	out["same-size"] = same
	for range n {
		if len(small.contents) > 0 && rng.IntN(5) == 0 {
			small.groups = append(small.groups, []ref{{uint64(rng.IntN(len(small.contents))), 1}})
			continue
		}
		ls := uint32(512 * (1 + rng.IntN(24)))
		ps := min(ls, uint32(512*(1+rng.IntN(int(ls/512)))))
		small.contents = append(small.contents, content{lsize: ls, psize: ps, dsize: uint64(ps)})
		small.groups = append(small.groups, []ref{{uint64(len(small.contents) - 1), uint64(1 + rng.IntN(2))}})
	}
	out["clones"], out["grown"], out["backups"], out["small"] = clones, grown, backups, small
	// few-large: clones (groups of 8), small files (their own group each),
	// and 20 unrelated files of one size, 16 records each (16 groups of 20
	// records): strata keep those 20 from widening every range (given
	// caps; without them, every group is bounded as one of 20 records).
	var mixed grouped
	for range n / 16 {
		images(&mixed, rec(&mixed), 8)
		mixed.caps = append(mixed.caps, 8)
	}
	for range n / 4 {
		ls := uint32(512 * (1 + rng.IntN(24)))
		ps := min(ls, uint32(512*(1+rng.IntN(int(ls/512)))))
		mixed.contents = append(mixed.contents, content{lsize: ls, psize: ps, dsize: uint64(ps)})
		mixed.groups = append(mixed.groups, []ref{{uint64(len(mixed.contents) - 1), 1}})
		mixed.caps = append(mixed.caps, 1)
	}
	for range 16 {
		var g []ref
		for range 20 {
			g = append(g, ref{rec(&mixed), 1})
		}
		mixed.groups = append(mixed.groups, g)
		mixed.caps = append(mixed.caps, 20)
	}
	out["few-large"] = mixed
	return out
}

// truth is the population's exact figures, from its groups.
func (g grouped) truth() truth {
	var t truth
	seen := map[uint64]bool{}
	for _, grp := range g.groups {
		for _, r := range grp {
			c, n := g.contents[r.c], float64(r.refs)
			t.stored += n
			t.refL += n * float64(c.lsize)
			t.refP += n * float64(c.psize)
			t.refD += n * float64(c.dsize)
			if !seen[r.c] {
				seen[r.c] = true
				t.entries++
				t.allocD += float64(c.dsize)
			}
		}
	}
	return t
}

// sampleGroups reads each group of g with probability p and returns the
// Input of a group plan's sample: the table's entries with the groups
// each content was seen in, the groups' moments, and what the metadata
// gives (every record's LSIZE, the groups, the largest group).
func sampleGroups(g grouped, p float64, rng *rand.Rand) Input {
	in := Input{Fraction: p, Groups: &GroupMoments{Groups: uint64(len(g.groups))}}
	type seen struct{ refs, groups uint64 }
	read := map[uint64]*seen{}
	var readGroups []int
	for i, grp := range g.groups {
		var s GroupSums
		for _, r := range grp {
			c := g.contents[r.c]
			s.Records += r.refs
			s.Stored += r.refs
			s.LSize += r.refs * uint64(c.lsize)
			s.StoredLSize += r.refs * uint64(c.lsize)
			s.PSize += r.refs * uint64(c.psize)
			s.DSize += r.refs * c.dsize
			in.MaxLSize = max(in.MaxLSize, uint64(c.lsize))
		}
		in.Records += s.Records
		in.LSize += s.LSize
		in.Groups.MaxRecords = max(in.Groups.MaxRecords, s.Records)
		if g.caps != nil {
			in.Groups.MaxRecords = max(in.Groups.MaxRecords, g.caps[i])
		}
		if rng.Float64() >= p {
			continue
		}
		in.Groups.Add(s)
		readGroups = append(readGroups, i)
		in.Read += s.Records
		for _, r := range grp {
			l := uint64(g.contents[r.c].lsize)
			in.ReadLSize += r.refs * l
			in.ReadLSizeSq += r.refs * (l / 512) * (l / 512)
			if read[r.c] == nil {
				read[r.c] = &seen{}
			}
			read[r.c].refs += r.refs
			read[r.c].groups++
		}
	}
	in.MaxDSize, in.DataMaxDSize = in.MaxLSize, in.LSize
	in.Tally = NewTally()
	for c, s := range read {
		x := g.contents[c]
		in.Tally.AddGroups(ddt.Entry{Refcnt: s.refs, LSize: x.lsize, PSize: x.psize, DSize: x.dsize}, s.groups)
	}
	if g.caps != nil {
		groupsOf := map[uint64]uint64{}
		for c, s := range read {
			groupsOf[c] = s.groups
		}
		in.Groups.Strata = g.strata(readGroups, groupsOf)
	}
	return in
}

// strata are g's groups in strata as NewStrata forms them (by capacity
// and LSIZE class: keyOf; the caller's DSIZE is the LSIZE), with the
// groups read (read: their indexes) in them.
func (g grouped) strata(read []int, groupsOf map[uint64]uint64) []StratumSample {
	key := func(i int) stratumKey {
		var l uint64
		for _, r := range g.groups[i] {
			l = max(l, uint64(g.contents[r.c].lsize))
		}
		return keyOf(g.caps[i], l)
	}
	at := map[stratumKey]int{}
	var ss []StratumSample
	of := func(i int) *StratumSample {
		k := key(i)
		j, ok := at[k]
		if !ok {
			j = len(ss)
			at[k] = j
			ss = append(ss, StratumSample{Seen: map[uint64]StratumSeen{}})
		}
		return &ss[j]
	}
	for i, grp := range g.groups {
		st := of(i)
		st.Cap = max(st.Cap, g.caps[i])
		st.Groups++
		for _, r := range grp {
			l := uint64(g.contents[r.c].lsize)
			st.MaxLSize = max(st.MaxLSize, l)
			st.Records += r.refs
			st.LSize += r.refs * l
		}
		st.MaxDSize = st.MaxLSize
	}
	for _, i := range read {
		st := of(i)
		var x GroupSums
		for _, r := range g.groups[i] {
			c := g.contents[r.c]
			x.add(GroupSums{Records: r.refs, Stored: r.refs, LSize: r.refs * uint64(c.lsize), StoredLSize: r.refs * uint64(c.lsize),
				PSize: r.refs * uint64(c.psize), DSize: r.refs * c.dsize})
			k := groupsOf[r.c]
			y := st.Seen[k]
			y.Pairs++
			y.DSize += c.dsize
			st.Seen[k] = y
		}
		st.Read.Add(x)
	}
	return ss
}

// groupRun is one shape at one fraction over seeds samples: the median
// relative error of the dedup point and each figure's misses.
type groupRun struct {
	errDedup, errEntries, errCompress float64
	miss                              map[string]int
}

func runGroups(g grouped, p float64, seeds int) groupRun {
	tr := g.truth()
	var errD, errE, errC []float64
	run := groupRun{miss: map[string]int{}}
	for s := range seeds {
		e := Compute(sampleGroups(g, p, rand.New(rand.NewPCG(uint64(s), 11))))
		for _, c := range []struct {
			what string
			iv   ddt.Interval
			v    float64
		}{{"entries", e.Entries, tr.entries}, {"allocated", e.AllocDSize, tr.allocD}, {"referenced DSIZE", e.RefDSize, tr.refD},
			{"referenced LSIZE", e.RefLSize, tr.refL}, {"referenced PSIZE", e.RefPSize, tr.refP}, {"stored", e.Stored, tr.stored},
			{"dedup", e.Dedup, tr.refD / tr.allocD}, {"compress", e.Compress, tr.refL / tr.refP}} {
			if !in(c.iv, c.v) {
				run.miss[c.what]++
			}
		}
		errD = append(errD, math.Abs(e.Dedup.Value/(tr.refD/tr.allocD)-1))
		errE = append(errE, math.Abs(e.Entries.Value/tr.entries-1))
		errC = append(errC, math.Abs(e.Compress.Value/(tr.refL/tr.refP)-1))
	}
	slices.Sort(errD)
	slices.Sort(errE)
	slices.Sort(errC)
	run.errDedup, run.errEntries, run.errCompress = errD[seeds/2], errE[seeds/2], errC[seeds/2]
	return run
}

// flat is g as a list of contents, for a plan of single records.
func (g grouped) flat() []content {
	out := slices.Clone(g.contents)
	for _, grp := range g.groups {
		for _, r := range grp {
			out[r.c].refs += r.refs
		}
	}
	return out
}

// recordDedupError is the median relative error of the dedup point of
// a plan of single records on g's records at p, over seeds samples.
func recordDedupError(g grouped, p float64, seeds int) float64 {
	tr := g.truth()
	pop := g.flat()
	var errs []float64
	for s := range seeds {
		e := Compute(sample(pop, 0, p, rand.New(rand.NewPCG(uint64(s), 11))))
		errs = append(errs, math.Abs(e.Dedup.Value/(tr.refD/tr.allocD)-1))
	}
	slices.Sort(errs)
	return errs[seeds/2]
}

// TestGroupPlanCoverage: under a group plan every 95% range holds the
// truth in at least 90% of the samples, at 1%, 5% and 15%, on shapes
// whose copies lie in one group and on shapes whose copies do not; and
// on the harness's clones and backups shapes at 5% of 32K records the
// dedup ratio's median error is within the 10% issue 31 asks (record
// sampling: 9–26%, TestDedupErrorByScale).
func TestGroupPlanCoverage(t *testing.T) {
	n, seeds := 8<<10, 12
	if stress.On() {
		n, seeds = 32<<10, 50
	}
	var table strings.Builder
	table.WriteString("| data set | records | read | dedup: median error | DDT entries | compress | dedup, single records |\n|---|---|---|---|---|---|---|\n")
	shapes := groupShapes(rand.New(rand.NewPCG(uint64(n), 9)), n)
	for _, name := range []string{"clones", "backups", "grown", "small", "same-size", "few-large", "few-large, no strata"} {
		g, ok := shapes[name]
		if !ok {
			g = shapes["few-large"]
			g.caps = nil
		}
		for _, p := range []float64{0.01, 0.05, 0.15} {
			r := runGroups(g, p, seeds)
			fmt.Fprintf(&table, "| %s | %d | %g%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n", name, int(g.truth().stored), 100*p,
				100*r.errDedup, 100*r.errEntries, 100*r.errCompress, 100*recordDedupError(g, p, seeds))
			for what, m := range r.miss {
				if float64(m) > 0.1*float64(seeds) {
					t.Errorf("%s at %g%%: %s missed the truth in %d of %d samples", name, 100*p, what, m, seeds)
				}
			}
			if stress.On() && p == 0.05 && (name == "clones" || name == "backups") && r.errDedup > 0.10 {
				t.Errorf("%s at 5%%: dedup's median error %.1f%%, above 10%%", name, 100*r.errDedup)
			}
		}
	}
	t.Logf("group plan: median relative error of the points, %d samples each (the last column: a plan of single records on the same records):\n%s", seeds, table.String())
}

// TestStrataNarrowRanges: with strata, 20 unrelated files of one size
// among clones and small files widen the ranges by their own share only.
// Without strata every group read was bounded as one of 20 records of the
// largest LSIZE: a new user's 20 files of 2 MiB among 1.2 GB made the
// compression ratio's range 1.00 to 256 at 5%. The ranges hold either way
// (TestGroupPlanCoverage). (The DDT entries and allocated DSIZE are hardly
// narrower: their programs' rows are bounded by the most records of a
// group, 8 for the clones that weigh the most.)
func TestStrataNarrowRanges(t *testing.T) {
	n, seeds := 8<<10, 8
	g := groupShapes(rand.New(rand.NewPCG(uint64(n), 9)), n)["few-large"]
	flat := g
	flat.caps = nil
	width := func(iv ddt.Interval) float64 { return iv.High/iv.Low - 1 }
	var ws, wf [3][]float64
	for s := range seeds {
		es := Compute(sampleGroups(g, 0.05, rand.New(rand.NewPCG(uint64(s), 11))))
		ef := Compute(sampleGroups(flat, 0.05, rand.New(rand.NewPCG(uint64(s), 11))))
		for i, f := range []func(e *Estimate) ddt.Interval{
			func(e *Estimate) ddt.Interval { return e.Compress },
			func(e *Estimate) ddt.Interval { return e.RefPSize },
			func(e *Estimate) ddt.Interval { return e.RefDSize }} {
			ws[i] = append(ws[i], width(f(es)))
			wf[i] = append(wf[i], width(f(ef)))
		}
	}
	for i, what := range []string{"compression ratio", "referenced PSIZE", "referenced DSIZE"} {
		slices.Sort(ws[i])
		slices.Sort(wf[i])
		s, f := ws[i][seeds/2], wf[i][seeds/2]
		t.Logf("%s: median range high/low − 1: %.3f with strata, %.3f without", what, s, f)
		if !(s < f/2) {
			t.Errorf("%s: median range high/low − 1 %.3f with strata, %.3f without: not half", what, s, f)
		}
	}
}

// A group sample's memory grows with the groups of more than one record
// read, not with the contents, nor with the files of one record: each
// content is counted once its entries end (they come a content at a
// time), each file of one record at once. Measured: 84 bytes a group;
// 168 bytes a content and group when the contents were kept until the end.
func TestGroupSampleMemory(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const contents, groups = 1 << 18, 64
	for _, one := range []bool{false, true} {
		h0 := heap()
		gs := NewGroupSample(nil)
		for c := uint64(1); c <= contents; c++ {
			for g := range uint64(1 + c%3) {
				group := (c + g) % groups
				if one {
					group = (c<<2 | g) | oneRecord
				}
				gs.AddEntry(c*0x9e3779b97f4a7c15, group, ddt.Entry{Refcnt: 1, LSize: 8192, PSize: uint32(512 * (1 + c%16)), DSize: 512 * (1 + c%16)})
			}
		}
		_, sum := gs.Histogram()
		_, m, err := gs.Inputs(contents)
		if err != nil {
			t.Fatal(err)
		}
		recs, _ := gs.Records()
		grew := int64(heap()) - int64(h0)
		runtime.KeepAlive(gs)
		if sum.Entries != contents || sum.Refs != contents*2 || recs != contents*2 {
			t.Fatalf("files of one record %v: %d entries of %d refs, %d records; want %d of %d", one, sum.Entries, sum.Refs, recs, contents, contents*2)
		}
		if want := map[bool]uint64{false: groups, true: contents * 2}[one]; m.Read() != want {
			t.Errorf("files of one record %v: %d groups read; want %d", one, m.Read(), want)
		}
		if grew > 1<<20 {
			t.Errorf("files of one record %v: the sample took %d bytes for %d contents: it keeps them", one, grew, contents)
		}
	}
}

// The files of one record, counted at once as integers, give the moments
// the same groups gave added up in the map (each group one entry: stored,
// embedded, or a hole's).
func TestGroupSampleFilesOfOneRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	type ent struct {
		content, group uint64
		hole           bool
		e              ddt.Entry
	}
	var ents []ent
	for c := uint64(1); c <= 5000; c++ {
		psize := uint32(512 * (1 + rng.IntN(16)))
		if rng.IntN(10) == 0 {
			psize = 0 // embedded
		}
		lsize := uint32(512 * (16 + rng.IntN(16)))
		for range 1 + rng.IntN(4) {
			ents = append(ents, ent{c, rng.Uint64() &^ oneRecord, false, ddt.Entry{Refcnt: 1, LSize: lsize, PSize: psize, DSize: uint64(psize) * 2}})
		}
	}
	for range 30 {
		g := rng.Uint64() &^ oneRecord
		ents = append(ents, ent{0, g, true, ddt.Entry{Refcnt: 1, LSize: 8192}})
	}
	var got [2]*GroupMoments
	var tallies [2]*Tally
	var records [2]uint64
	for i, mark := range []uint64{0, oneRecord} {
		gs := NewGroupSample(nil)
		for _, x := range ents {
			content := x.content
			if x.hole {
				k := ddt.HoleGroupKey(x.group | mark)
				content = binary.BigEndian.Uint64(k[:8])
			}
			gs.AddEntry(content, x.group|mark, x.e)
		}
		var err error
		if tallies[i], got[i], err = gs.Inputs(1); err != nil {
			t.Fatal(err)
		}
		records[i], _ = gs.Records()
	}
	if !reflect.DeepEqual(tallies[0], tallies[1]) {
		t.Errorf("tallies differ")
	}
	a, b := got[0], got[1]
	if a.n != b.n || a.n != float64(len(ents)) || records[0] != records[1] || records[0] != uint64(len(ents)) {
		t.Errorf("%v groups, %d records in the map, %v, %d counted at once; want %d", a.n, records[0], b.n, records[1], len(ents))
	}
	for i := range a.sum {
		if a.sum[i] != b.sum[i] {
			t.Errorf("sum %d: %v in the map, %v at once", i, a.sum[i], b.sum[i])
		}
		for j := range a.prod[i] {
			if math.Abs(a.prod[i][j]-b.prod[i][j]) > 1e-12*a.prod[i][j] {
				t.Errorf("product %d,%d: %v in the map, %v at once", i, j, a.prod[i][j], b.prod[i][j])
			}
		}
	}
}

// A sample whose groups spill to runs on disk (many: merged into one past
// maxGroupRuns) gives the moments, to the bit, and the records of one
// kept in memory; a merge of two spilled samples too; Close leaves no run
// behind. A directory that cannot be written keeps the groups in memory,
// with the same result, and says why.
func TestGroupSampleSpill(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ents []ent
	for c := uint64(1); c <= 4000; c++ {
		e := ddt.Entry{LSize: 8192, PSize: uint32(512 * (1 + rng.IntN(16)))}
		e.DSize = uint64(e.PSize)
		for range 1 + rng.IntN(3) {
			e.Refcnt = uint64(1 + rng.IntN(2))
			// Groups of three size tags: two strata's, and one of
			// capacity 1 (its stratum by LSIZE).
			ents = append(ents, ent{c << 20, uint64(1+rng.IntN(3))<<tagBits | rng.Uint64N(1000), e})
		}
	}
	three := &Strata{List: []Stratum{{Cap: 1}, {Cap: 4}, {Cap: 9}}, tags: map[uint64]int{1: 1, 2: 2}, lsize: map[int]int{lsizeClass(8192): 0}}
	for _, strata := range []*Strata{nil, three} {
		testGroupSampleSpill(t, ents, strata)
	}
}

func testGroupSampleSpill(t *testing.T, ents []ent, strata *Strata) {
	sample := func(from, to int, dir string, limit int) *GroupSample {
		gs := NewGroupSample(strata)
		if dir != "" {
			gs.Spill(dir, int64(limit)*GroupBytes)
		}
		for _, x := range ents[from:to] {
			gs.AddEntry(x.content, x.group, x.e)
		}
		return gs
	}
	moments := func(gs *GroupSample) (*GroupMoments, uint64) {
		_, m, err := gs.Inputs(1)
		if err != nil {
			t.Fatal(err)
		}
		n, err := gs.Records()
		if err != nil {
			t.Fatal(err)
		}
		return m, n
	}
	want, wantN := moments(sample(0, len(ents), "", 0))
	if strata != nil {
		// The strata add up to the whole.
		var n float64
		var pairs uint64
		for i, st := range want.Strata {
			n += st.Read.n
			for _, x := range st.Seen {
				pairs += x.Pairs
			}
			if st.Read.n == 0 || st.Cap != strata.List[i].Cap {
				t.Errorf("stratum %d: %v groups read, capacity %d", i, st.Read.n, st.Cap)
			}
		}
		if len(want.Strata) != 3 || n != want.n || pairs != uint64(len(ents)) {
			t.Errorf("%d strata of %v groups and %d (content, group) pairs; want 3, %v and %d", len(want.Strata), n, pairs, want.n, len(ents))
		}
	}
	dir := t.TempDir()
	one := sample(0, len(ents), dir, 50)
	if runs, _ := filepath.Glob(filepath.Join(dir, "*")); len(runs) == 0 || len(runs) > maxGroupRuns || len(one.groups.m) > 50 {
		t.Fatalf("%d runs, %d groups in memory; want 1 to %d runs, at most 50 groups", len(runs), len(one.groups.m), maxGroupRuns)
	}
	half := len(ents) / 2
	for half < len(ents) && ents[half].content == ents[half-1].content {
		half++
	}
	two := sample(0, half, dir, 70)
	two.Merge(sample(half, len(ents), dir, 70))
	for name, gs := range map[string]*GroupSample{"spilled": one, "two spilled, merged": two} {
		got, n := moments(gs)
		if !reflect.DeepEqual(got, want) || n != wantN {
			t.Errorf("%s: moments or records (%d, want %d) differ from a sample in memory", name, n, wantN)
		}
		gs.Close()
	}
	if runs, _ := filepath.Glob(filepath.Join(dir, "*")); len(runs) != 0 {
		t.Errorf("runs left after Close: %v", runs)
	}
	bad := sample(0, len(ents), filepath.Join(dir, "gone"), 50)
	if got, n := moments(bad); bad.SpillErr() == nil || !reflect.DeepEqual(got, want) || n != wantN {
		t.Errorf("unwritable directory: error %v, moments equal %v", bad.SpillErr(), reflect.DeepEqual(got, want))
	}
}

// ent is an entry of a group sample's table: its content, group and entry.
type ent struct {
	content, group uint64
	e              ddt.Entry
}
