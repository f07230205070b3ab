package report

import (
	"fmt"
	"sort"

	"github.com/ddtsim/ddtsim/breakdown"
)

// ArrangeBreakdown returns b with its groups as every output lists them:
// largest first by logical bytes (file bytes; ties keep the breakdown's
// own order), and with top > 0 only the top largest, the others folded
// into one row named "(N others)" whose figures are their sums, so that
// the rows still add up exactly to the total (a single group left over
// keeps its own row). b itself is not changed;
// nil stays nil.
func ArrangeBreakdown(b *Breakdown, top int) *Breakdown {
	if b == nil {
		return nil
	}
	out := *b
	groups := append([]breakdown.Group(nil), b.Groups...)
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].LogicalBytes > groups[j].LogicalBytes })
	if top > 0 && len(groups) > top+1 { // one group left over keeps its own row
		rest := breakdown.SumGroups(groups[top:])
		rest.Name = fmt.Sprintf("(%d others)", len(groups)-top)
		groups = append(groups[:top:top], rest)
	}
	out.Groups = groups
	return &out
}
