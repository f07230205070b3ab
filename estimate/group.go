package estimate

import (
	"maps"
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
	n          float64
	sum        [nG]float64
	prod       [nG][nG]float64
}

// Add counts one group read.
func (m *GroupMoments) Add(g GroupSums) {
	v := [nG]float64{float64(g.Records), float64(g.Stored), float64(g.LSize), float64(g.StoredLSize), float64(g.PSize), float64(g.DSize)}
	m.n++
	for i := range v {
		m.sum[i] += v[i]
		for j := range v {
			m.prod[i][j] += v[i] * v[j]
		}
	}
}

// Merge adds o's groups to m (no group in both); the larger Groups and
// MaxRecords stand.
func (m *GroupMoments) Merge(o *GroupMoments) {
	m.n += o.n
	for i := range m.sum {
		m.sum[i] += o.sum[i]
		for j := range m.prod[i] {
			m.prod[i][j] += o.prod[i][j]
		}
	}
	m.Groups = max(m.Groups, o.Groups)
	m.MaxRecords = max(m.MaxRecords, o.MaxRecords)
}

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
// record's group (Plan.Group), and the records of each group read. Its
// memory grows with the contents and the groups read (about 100 bytes
// each). The zero value is not usable: NewGroupSample.
type GroupSample struct {
	contents map[uint64]*seenContent // stored contents
	embedded map[uint64]*seenContent // contents stored in block pointers
	groups   map[uint64]*GroupSums
}

// seenContent is what the sample read of one content: its records, in how
// many groups, and its entry's sizes.
type seenContent struct {
	refs, groups uint64
	e            ddt.Entry
}

// NewGroupSample returns an empty sample.
func NewGroupSample() *GroupSample {
	return &GroupSample{contents: map[uint64]*seenContent{}, embedded: map[uint64]*seenContent{}, groups: map[uint64]*GroupSums{}}
}

func (s *GroupSample) group(g uint64) *GroupSums {
	x := s.groups[g]
	if x == nil {
		x = &GroupSums{}
		s.groups[g] = x
	}
	return x
}

// AddEntry adds one entry of the sample's table: the records of content
// (the first 64 bits of its key) read in group g (each (content, group)
// once). An embedded entry (PSize 0) is no stored block: its records
// count through AddRecords only.
func (s *GroupSample) AddEntry(content, g uint64, e ddt.Entry) {
	m := s.contents
	if e.PSize == 0 {
		m = s.embedded
	}
	c := m[content]
	if c == nil {
		c = &seenContent{e: e}
		m[content] = c
	}
	c.refs += e.Refcnt
	c.groups++
	if e.PSize == 0 {
		return
	}
	x := s.group(g)
	x.Stored += e.Refcnt
	x.StoredLSize += e.Refcnt * uint64(e.LSize)
	x.PSize += e.Refcnt * uint64(e.PSize)
	x.DSize += e.Refcnt * e.DSize
}

// AddRecords adds records read of group g holding data, of lsize bytes
// of LSIZE in all (holes and embedded records among them).
func (s *GroupSample) AddRecords(g, records, lsize uint64) {
	x := s.group(g)
	x.Records += records
	x.LSize += lsize
}

// Merge adds o to s: samples of disjoint sets of table keys (partitions
// of one table), whose groups' records are added once (AddRecords on one
// of them).
func (s *GroupSample) Merge(o *GroupSample) {
	for _, m := range []struct{ dst, src map[uint64]*seenContent }{{s.contents, o.contents}, {s.embedded, o.embedded}} {
		for k, c := range m.src {
			if x := m.dst[k]; x != nil {
				x.refs += c.refs
				x.groups += c.groups
			} else {
				cc := *c
				m.dst[k] = &cc
			}
		}
	}
	for g, c := range o.groups {
		x := s.group(g)
		x.Records += c.Records
		x.Stored += c.Stored
		x.LSize += c.LSize
		x.StoredLSize += c.StoredLSize
		x.PSize += c.PSize
		x.DSize += c.DSize
	}
}

// Inputs returns the tally and the groups' moments of the sample, for
// Input.Tally and Input.Groups; maxRecords is the most records a group
// can hold (GroupMoments.MaxRecords). The groups are added in the order
// of their keys, so that the sums do not depend on the maps' order.
func (s *GroupSample) Inputs(maxRecords uint64) (*Tally, *GroupMoments) {
	t := NewTally()
	for _, c := range s.contents {
		e := c.e
		e.Refcnt = c.refs
		t.AddGroups(e, c.groups)
	}
	m := &GroupMoments{MaxRecords: maxRecords}
	for _, g := range slices.Sorted(maps.Keys(s.groups)) {
		m.Add(*s.groups[g])
	}
	return t, m
}

// Histogram is the sample's table by content, as a table keyed by
// content alone would summarize it (ddt.Table.Summarize): each content
// read once, of its records read in every group.
func (s *GroupSample) Histogram() (*ddt.Histogram, ddt.Summary) {
	h := &ddt.Histogram{}
	var sum ddt.Summary
	for _, c := range s.contents {
		h.Add(c.refs, uint64(c.e.LSize), uint64(c.e.PSize), c.e.DSize)
		sum.Entries++
		sum.Refs += c.refs
	}
	for _, c := range s.embedded {
		sum.EmbeddedEntries++
		sum.EmbeddedRefs += c.refs
		sum.EmbeddedLSize += c.refs * uint64(c.e.LSize)
	}
	return h, sum
}
