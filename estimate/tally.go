package estimate

import (
	"cmp"
	"slices"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Tally is a sample's table reduced to what Compute reads of it: how many
// entries have each (groups, refcnt, LSIZE, PSIZE, DSIZE), where groups is
// how many of the groups read the content was seen in (Groups; under a
// plan of single records, each record its own group, its refcnt). Compute's figures from
// a tally do not depend on the order its entries came in, so the merged
// table of a scan's shards gives the single scan's estimate bit for bit.
// Embedded entries (PSIZE 0), which zdb -S does not count, are left out.
// The zero value is not usable: NewTally.
type Tally struct {
	m map[kind]uint64
}

// kind is one kind of entry of a tally: an entry of the sample's table
// and the number of groups read that its content was seen in.
type kind struct {
	ddt.Entry
	groups uint64
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{m: map[kind]uint64{}} }

// TallyOf tallies the entries entries gives (until f returns false).
func TallyOf(entries func(f func(ddt.Entry) bool)) *Tally {
	t := NewTally()
	if entries != nil {
		entries(func(e ddt.Entry) bool { t.Add(e); return true })
	}
	return t
}

// Add counts one entry of the sample's table (Refcnt: the times its
// content was read); an embedded one (PSize 0) is left out.
func (t *Tally) Add(e ddt.Entry) { t.AddGroups(e, e.Refcnt) }

// AddGroups counts one entry of a group sample's table (Groups): Refcnt
// the records of its content read, groups (1 ≤ groups ≤ Refcnt) the
// groups read it was seen in. An embedded one (PSize 0) is left out.
func (t *Tally) AddGroups(e ddt.Entry, groups uint64) {
	if e.PSize == 0 {
		return
	}
	t.m[kind{e, groups}]++
}

// Merge adds o's entries to t: the tally of two tables with no key in
// common (two partitions of one table). The tallies of two shards' tables
// do not add up so: a content both read is one entry of the summed refcnt
// in the merged table.
func (t *Tally) Merge(o *Tally) {
	for e, n := range o.m {
		t.m[e] += n
	}
}

// Len returns the number of distinct (groups, refcnt, LSIZE, PSIZE, DSIZE) kinds
// the tally holds: its size in memory.
func (t *Tally) Len() int { return len(t.m) }

// each calls f with each kind of entry and how many entries are of it,
// in a fixed order (by refcnt, LSIZE, PSIZE, DSIZE, groups), so that the
// sums of Compute are the same however the entries came.
func (t *Tally) each(f func(e kind, n uint64)) {
	kinds := make([]kind, 0, len(t.m))
	for e := range t.m {
		kinds = append(kinds, e)
	}
	slices.SortFunc(kinds, func(a, b kind) int {
		return cmp.Or(cmp.Compare(a.Refcnt, b.Refcnt), cmp.Compare(a.LSize, b.LSize),
			cmp.Compare(a.PSize, b.PSize), cmp.Compare(a.DSize, b.DSize), cmp.Compare(a.groups, b.groups))
	})
	for _, e := range kinds {
		f(e, t.m[e])
	}
}
