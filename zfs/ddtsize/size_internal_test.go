package ddtsize

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// trieLeaves counts the leaves of a ZAP holding the sorted hashes h whose
// leaves hold at most c entries: split by the next bit while over c.
func trieLeaves(h []uint64, bit, c int) int {
	if len(h) <= c || bit < 0 {
		return 1
	}
	i, _ := slices.BinarySearchFunc(h, uint64(1)<<bit, func(x, m uint64) int {
		if x&m != 0 {
			return 1
		}
		return -1
	})
	return trieLeaves(h[:i], bit-1, c) + trieLeaves(h[i:], bit-1, c)
}

// TestLeafCountMonteCarlo checks the exact expectation of leafDP (and its
// scaling beyond dpMax) against leaf counts of ZAPs built from random
// hashes.
func TestLeafCountMonteCarlo(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n      int
		cap    int
		trials int
	}{{100, 39, 2000}, {402, 182, 2000}, {405, 39, 1000}, {3000, 182, 400}, {20000, 39, 40}, {50000, 182, 40}} {
		f := make([]float64, c.cap+1)
		dp := newLeafDP(c.cap, f)
		want, _ := dp.expect(uint64(c.n))
		var sum float64
		h := make([]uint64, c.n)
		for range c.trials {
			for i := range h {
				h[i] = rng.Uint64()
			}
			slices.Sort(h)
			// Within a leaf set, h's high bits select: sort puts prefix 0 first.
			sum += float64(trieLeaves(h, 63, c.cap))
		}
		got := sum / float64(c.trials)
		if math.Abs(got/want-1) > 0.02 {
			t.Errorf("n=%d, capacity %d: simulated %.2f leaves, leafDP %.2f", c.n, c.cap, got, want)
		}
	}
}

// TestMaxDepth checks the pointer-table depth estimate against simulated
// tries: within one level of the deepest leaf.
func TestMaxDepth(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var deepest func(h []uint64, bit, c int) int
	deepest = func(h []uint64, bit, c int) int {
		if len(h) <= c {
			return 63 - bit
		}
		i, _ := slices.BinarySearchFunc(h, uint64(1)<<bit, func(x, m uint64) int {
			if x&m != 0 {
				return 1
			}
			return -1
		})
		return max(deepest(h[:i], bit-1, c), deepest(h[i:], bit-1, c))
	}
	for _, c := range []struct{ n, cap int }{{100, 182}, {405, 39}, {100000, 39}, {200000, 182}} {
		h := make([]uint64, c.n)
		for i := range h {
			h[i] = rng.Uint64()
		}
		slices.Sort(h)
		got, est := deepest(h, 63, c.cap), maxDepth(uint64(c.n), c.cap)
		if got < est-1 || got > est+1 {
			t.Errorf("n=%d, capacity %d: deepest leaf at %d, estimate %d", c.n, c.cap, got, est)
		}
	}
}
