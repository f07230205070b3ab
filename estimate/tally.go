package estimate

import (
	"cmp"
	"slices"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Tally is a sample's table reduced to what Compute reads of it: how many
// entries have each (refcnt, LSIZE, PSIZE, DSIZE). Compute's figures from
// a tally do not depend on the order its entries came in, so the merged
// table of a scan's shards gives the single scan's estimate bit for bit.
// Embedded entries (PSIZE 0), which zdb -S does not count, are left out.
// The zero value is not usable: NewTally.
type Tally struct {
	m map[ddt.Entry]uint64
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{m: map[ddt.Entry]uint64{}} }

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
func (t *Tally) Add(e ddt.Entry) {
	if e.PSize == 0 {
		return
	}
	t.m[e]++
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

// Len returns the number of distinct (refcnt, LSIZE, PSIZE, DSIZE) kinds
// the tally holds: its size in memory.
func (t *Tally) Len() int { return len(t.m) }

// each calls f with each kind of entry and how many entries are of it,
// in a fixed order (by refcnt, LSIZE, PSIZE, DSIZE), so that the sums of
// Compute are the same however the entries came.
func (t *Tally) each(f func(e ddt.Entry, n uint64)) {
	kinds := make([]ddt.Entry, 0, len(t.m))
	for e := range t.m {
		kinds = append(kinds, e)
	}
	slices.SortFunc(kinds, func(a, b ddt.Entry) int {
		return cmp.Or(cmp.Compare(a.Refcnt, b.Refcnt), cmp.Compare(a.LSize, b.LSize),
			cmp.Compare(a.PSize, b.PSize), cmp.Compare(a.DSize, b.DSize))
	})
	for _, e := range kinds {
		f(e, t.m[e])
	}
}
