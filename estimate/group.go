package estimate

import (
	"maps"
	"math/bits"
	"slices"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// GroupSums are one group's sums over its records, bytes but for the two
// counts: what a group plan's scan adds up, per group read, before
// GroupMoments.Add. Records are all the group's records that the metadata
// says hold data (the population's records); Stored those of them zdb -S
// counts (not holes, not embedded).
type GroupSums struct {
	Records, Stored           uint64
	LSize, StoredLSize, PSize uint64 // LSIZE of all, of the stored; PSIZE of the stored
	DSize                     uint64 // DSIZE of the stored
}

// add adds o's sums to g's.
func (g *GroupSums) add(o GroupSums) {
	g.Records += o.Records
	g.Stored += o.Stored
	g.LSize += o.LSize
	g.StoredLSize += o.StoredLSize
	g.PSize += o.PSize
	g.DSize += o.DSize
}

// values are g's values in the order of GroupMoments' sums.
func (g GroupSums) values() [nG]uint64 {
	return [nG]uint64{g.Records, g.Stored, g.LSize, g.StoredLSize, g.PSize, g.DSize}
}

// The values of a group, in the order of GroupMoments' sums.
const (
	gRecords = iota
	gStored
	gL
	gStoredL
	gP
	gD
	nG
)

// GroupMoments are the sums over the groups a group plan read of each
// group's values (GroupSums) and of their products two by two, from which
// Compute takes the bounds over groups (Input.Groups). A group's sums
// must be complete before Add: the moments of two sets of groups add up
// (Merge) only if no group is in both.
type GroupMoments struct {
	// Groups is how many groups the data has, read or not; 0: not
	// counted (the records are taken as an upper bound, which only
	// widens the ranges).
	Groups uint64
	// MaxRecords is the most records a group can hold, known without
	// reading (from the metadata): the bounds' unit, a group's values
	// being at most MaxRecords records at the largest LSIZE or DSIZE.
	// A group of more records breaks the bounds.
	MaxRecords uint64
	// Strata, when not nil, are the same sample stratum by stratum (two
	// or more: GroupSample.Inputs), whose bounds Compute adds up.
	Strata []StratumSample
	n      float64
	sum    [nG]float64
	prod   [nG][nG]float64
}

// Add counts one group read.
func (m *GroupMoments) Add(g GroupSums) {
	var v [nG]float64
	for i, x := range g.values() {
		v[i] = float64(x)
	}
	m.n++
	for i := range v {
		m.sum[i] += v[i]
		for j := range v {
			m.prod[i][j] += v[i] * v[j]
		}
	}
}

// addExact counts the groups of e.
func (m *GroupMoments) addExact(e *exactMoments) {
	m.n += float64(e.n)
	for i := range m.sum {
		m.sum[i] += float64(e.sum[i])
		for j := range m.prod[i] {
			m.prod[i][j] += e.prod[min(i, j)][max(i, j)].float()
		}
	}
}

// exactMoments are GroupMoments' sums kept as integers, for groups
// counted in any order (a group sample's groups of one record, met a
// content at a time): integer sums do not depend on the order, so shards
// merged give what one scan gives, to the bit. A group of one record has
// values below 2^25 (LSIZE at most 16 MiB): their sums fit 64 bits up to
// 2^39 groups, their products' sums take 128 bits.
type exactMoments struct {
	n    uint64
	sum  [nG]uint64
	prod [nG][nG]uint128 // i ≤ j only
}

func (e *exactMoments) add(g GroupSums) {
	v := g.values()
	e.n++
	for i := range v {
		e.sum[i] += v[i]
		for j := i; j < nG; j++ {
			e.prod[i][j].addProduct(v[i], v[j])
		}
	}
}

func (e *exactMoments) merge(o *exactMoments) {
	e.n += o.n
	for i := range e.sum {
		e.sum[i] += o.sum[i]
		for j := i; j < nG; j++ {
			e.prod[i][j].add(o.prod[i][j])
		}
	}
}

// uint128 is an unsigned 128-bit integer.
type uint128 struct{ hi, lo uint64 }

func (u *uint128) add(o uint128) {
	var c uint64
	u.lo, c = bits.Add64(u.lo, o.lo, 0)
	u.hi += o.hi + c
}

// addProduct adds a·b.
func (u *uint128) addProduct(a, b uint64) {
	hi, lo := bits.Mul64(a, b)
	u.add(uint128{hi, lo})
}

func (u uint128) float() float64 { return float64(u.hi)*(1<<64) + float64(u.lo) }

// Read returns the number of groups read.
func (m *GroupMoments) Read() uint64 { return uint64(m.n) }

// pairs are the sample's sums of values a and b of each group, divided
// by ua and ub.
func (m *GroupMoments) pairs(a, b int, ua, ub float64) pairs {
	return pairs{n: m.n, sa: m.sum[a] / ua, sb: m.sum[b] / ub,
		saa: m.prod[a][a] / (ua * ua), sbb: m.prod[b][b] / (ub * ub), sab: m.prod[a][b] / (ua * ub)}
}

// GroupSample gathers a group plan's sample (Plan.Groups) for Compute:
// the sample's table, whose keys are a content's first 64 bits and the
// record's group (Plan.TableGroup), with the records read that were zeros
// left holes under their group's ddt.HoleGroupKey. The table's entries
// must come a content at a time: each content's entries of all its groups
// one after another (ddt.Table.RangeGrouped, or a merge in key order). A
// content is then counted as soon as the next begins, so the sample's
// memory does not grow with the contents.
//
// A group's sums (GroupSums) are those of its entries. A file of one
// record is a group of one entry, counted at once (exactMoments): the
// many small files of a tree take no memory. The groups of more than one
// record are added up until the end: in a map, some 80 bytes a group
// read, and past a limit in sorted runs on disk (Spill). The zero value is
// not usable: NewGroupSample; Close removes the runs.
type GroupSample struct {
	tally  *Tally
	hist   ddt.Histogram
	sum    ddt.Summary
	groups *groupTable  // the groups of more than one record
	single exactMoments // the groups of one record

	// With strata (NewGroupSample): each content's groups read per
	// stratum (cur), and per stratum what the contents seen in k groups
	// read there (seen).
	strata  *Strata
	cur     []uint64
	seen    []map[uint64]StratumSeen
	singles []exactMoments // the groups of one record, per stratum

	// The content being gathered: its stored and its embedded entries.
	content       uint64
	stored1, emb1 seenContent
}

// StratumSeen is what one stratum's groups read of the contents seen in
// k groups in all: Pairs, the (content, group) pairs of the stratum's
// groups, and DSize, their DSIZE (each pair's content's), bytes. Integers:
// their sums do not depend on the order the contents came in.
type StratumSeen struct{ Pairs, DSize uint64 }

// seenContent is what the sample read of one content: its records, in how
// many groups, and its entry's sizes.
type seenContent struct {
	refs, groups uint64
	e            ddt.Entry
}

// NewGroupSample returns an empty sample whose groups are sorted into
// strata by st (Strata.Of; nil: one stratum).
func NewGroupSample(st *Strata) *GroupSample {
	s := &GroupSample{tally: NewTally(), groups: newGroupTable()}
	if st != nil && len(st.List) > 1 {
		s.strata = st
		s.cur = make([]uint64, len(st.List))
		s.seen = make([]map[uint64]StratumSeen, len(st.List))
		s.singles = make([]exactMoments, len(st.List))
		for i := range s.seen {
			s.seen[i] = map[uint64]StratumSeen{}
		}
	}
	return s
}

// GroupBytes is what a group of more than one record read takes in a
// GroupSample's memory, bytes (84 measured with a million groups, rounded
// up): the unit by which Spill turns a memory size into groups.
const GroupBytes = 100

// Spill makes the sample keep its groups of more than one record in about
// mem bytes of memory (mem/GroupBytes groups, at least one), the others in
// sorted runs of 56 bytes a group in dir (a directory that the caller
// removes, or Close). If writing a run fails, the groups stay in memory
// and SpillErr says why.
func (s *GroupSample) Spill(dir string, mem int64) {
	s.groups.spill(dir, int(max(mem/GroupBytes, 1)))
}

// SpillErr is the first failure to write a run (Spill): nothing was lost,
// the sample took memory instead.
func (s *GroupSample) SpillErr() error { return s.groups.err }

// Close removes the sample's runs on disk (Spill); Inputs then fails.
func (s *GroupSample) Close() { s.groups.close() }

// AddEntry adds one entry of the sample's table: the records of content
// (the first 64 bits of its key) read in group g (each (content, group)
// once, and a content's entries one after another: see GroupSample). An
// embedded entry (PSize 0) is no stored block, nor are a group's holes
// (ddt.HoleGroupKey): they count among their group's records only.
func (s *GroupSample) AddEntry(content, g uint64, e ddt.Entry) {
	x := GroupSums{Records: e.Refcnt, LSize: e.Refcnt * uint64(e.LSize)}
	switch {
	case ddt.HoleGroup(content, g):
	case e.PSize == 0:
		s.addContent(content, &s.emb1, e)
	default:
		s.addContent(content, &s.stored1, e)
		if s.strata != nil {
			s.cur[s.strata.Of(g, uint64(e.LSize))]++
		}
		x.Stored, x.StoredLSize, x.PSize, x.DSize = e.Refcnt, e.Refcnt*uint64(e.LSize), e.Refcnt*uint64(e.PSize), e.Refcnt*e.DSize
	}
	if OneRecordGroup(g) {
		s.single.add(x)
		if s.strata != nil {
			s.singles[s.strata.Of(g, uint64(e.LSize))].add(x)
		}
		return
	}
	s.groups.add(g, x)
}

// addContent adds e, an entry of content, to c, the content's stored or
// embedded entries, first counting the content gathered before if it is
// another.
func (s *GroupSample) addContent(content uint64, c *seenContent, e ddt.Entry) {
	if content != s.content {
		s.flush()
		s.content = content
	}
	if c.groups == 0 {
		c.e = e
	}
	c.refs += e.Refcnt
	c.groups++
}

// flush counts the content being gathered, if any.
func (s *GroupSample) flush() {
	if c := &s.stored1; c.groups > 0 {
		s.hist.Add(c.refs, uint64(c.e.LSize), uint64(c.e.PSize), c.e.DSize)
		s.sum.Entries++
		s.sum.Refs += c.refs
		e := c.e
		e.Refcnt = c.refs
		s.tally.AddGroups(e, c.groups)
		for i, n := range s.cur {
			if n > 0 {
				x := s.seen[i][c.groups]
				x.Pairs += n
				x.DSize += n * c.e.DSize
				s.seen[i][c.groups] = x
				s.cur[i] = 0
			}
		}
	}
	if c := &s.emb1; c.groups > 0 {
		s.sum.EmbeddedEntries++
		s.sum.EmbeddedRefs += c.refs
		s.sum.EmbeddedLSize += c.refs * uint64(c.e.LSize)
	}
	s.stored1, s.emb1 = seenContent{}, seenContent{}
}

// Merge adds o to s: samples of disjoint sets of contents (partitions of
// one table by content, its holes' keys among them). s takes o's runs on
// disk (Spill): o is empty after.
func (s *GroupSample) Merge(o *GroupSample) {
	s.flush()
	o.flush()
	s.tally.Merge(o.tally)
	s.hist.Merge(&o.hist)
	s.sum.Add(o.sum)
	s.single.merge(&o.single)
	s.groups.merge(o.groups)
	for i := range s.seen {
		s.singles[i].merge(&o.singles[i])
		for k, x := range o.seen[i] {
			y := s.seen[i][k]
			y.Pairs += x.Pairs
			y.DSize += x.DSize
			s.seen[i][k] = y
		}
	}
}

// Records returns the records read that hold data, in all groups: the
// population's records read (analyzer.Counters.Population minus Unread).
// It fails reading the runs back (Spill).
func (s *GroupSample) Records() (uint64, error) {
	n := s.single.sum[gRecords]
	err := s.groups.each(func(_ uint64, x GroupSums) error { n += x.Records; return nil })
	return n, err
}

// Inputs returns the tally and the groups' moments of the sample, for
// Input.Tally and Input.Groups, with the strata's moments and contents
// seen (GroupMoments.Strata) where the sample has strata
// (NewGroupSample); maxRecords is the most records a group can hold
// (GroupMoments.MaxRecords). The groups are added in the order of their
// keys (the files of one record as integers, in any order), so that the
// sums do not depend on the order the entries came in, nor on where they
// were kept. It fails reading the runs back (Spill).
func (s *GroupSample) Inputs(maxRecords uint64) (*Tally, *GroupMoments, error) {
	s.flush()
	t := NewTally()
	t.Merge(s.tally)
	m := &GroupMoments{MaxRecords: maxRecords}
	m.addExact(&s.single)
	var strata []StratumSample
	if s.strata != nil {
		strata = make([]StratumSample, len(s.strata.List))
		for i := range strata {
			strata[i].Stratum = s.strata.List[i]
			strata[i].Seen = maps.Clone(s.seen[i])
			strata[i].Read.addExact(&s.singles[i])
		}
	}
	err := s.groups.each(func(g uint64, x GroupSums) error {
		m.Add(x)
		if strata != nil {
			strata[s.strata.Of(g, x.LSize/max(x.Records, 1))].Read.Add(x)
		}
		return nil
	})
	m.Strata = strata
	return t, m, err
}

// sortedSeen returns m's keys in increasing order.
func sortedSeen(m map[uint64]StratumSeen) []uint64 {
	return slices.Sorted(maps.Keys(m))
}

// StratumSample is what a group plan's sample read of one stratum of its
// groups (Strata).
type StratumSample struct {
	Stratum
	// Read are the moments of the stratum's groups read.
	Read GroupMoments
	// Seen are, per k, what the stratum's groups read of the contents
	// seen in k groups in all (k ≥ 1).
	Seen map[uint64]StratumSeen
}

// Histogram is the sample's table by content, as a table keyed by
// content alone would summarize it (ddt.Table.Summarize): each content
// read once, of its records read in every group.
func (s *GroupSample) Histogram() (*ddt.Histogram, ddt.Summary) {
	s.flush()
	h := s.hist
	return &h, s.sum
}
