package estimate

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
