// Package sourcetest helps the tests of the packages that read through a
// source (analyzer, sweep, scan) inject faults into a walk's reads
// (source.Faults).
package sourcetest

import (
	"sync/atomic"

	"github.com/ddtsim/ddtsim/input/source"
)

// ShortReads returns faults under which every read returns only short(n)
// of the n bytes asked (source.Fault.Short), and reads, which says how many
// reads went through them so far. For tests that check a scan of short
// reads equals a clean one (and that the seam was reached at all).
func ShortReads(short func(n int) int) (faults *source.Faults, reads func() int64) {
	var count atomic.Int64
	return &source.Faults{Read: func(path string, off uint64, n int) source.Fault {
		count.Add(1)
		return source.Fault{Short: short(n)}
	}}, count.Load
}
