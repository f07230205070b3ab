package estimate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// klRange holds the expectation of sums of independent values in [0, 1]
// at least as often as it says (1 − 2e^−l), and is tighter than
// Bernstein's (poissonRange) where the sum is small: a row of the Unseen
// program that saw no content allows about a third of what it did.
func TestKLRange(t *testing.T) {
	l := math.Log(2 / 0.05)
	if lo, hi := klRange(0, l); lo != 0 || math.Abs(hi-l) > 1e-9 {
		t.Errorf("x = 0: [%g, %g], want [0, %g]", lo, hi, l)
	}
	_, bhi := poissonRange(0, l, 1)
	if _, hi := klRange(0, l); !(hi < bhi/3) {
		t.Errorf("x = 0: high end %g, not a third of Bernstein's %g", hi, bhi)
	}
	for _, x := range []float64{0.5, 3, 40, 1e4} {
		lo, hi := klRange(x, l)
		plo, phi := poissonRange(x, l, 1)
		if !(lo < x && x < hi) || lo < plo-1e-9 || hi > phi+1e-9 {
			t.Errorf("x = %g: [%g, %g], not around x within Bernstein's [%g, %g]", x, lo, hi, plo, phi)
		}
	}
	// Coverage: sums of n values, each 0 or a uniform value in [0, 1]
	// with a small probability, whose expectations are known.
	rng := rand.New(rand.NewPCG(5, 6))
	for _, mean := range []float64{0.5, 2, 10, 200} {
		const runs = 4000
		n := 2000
		q := 2 * mean / float64(n) // each value: U(0,1) with probability q, E = q/2
		miss := 0
		for range runs {
			var x float64
			for range n {
				if rng.Float64() < q {
					x += rng.Float64()
				}
			}
			if lo, hi := klRange(x, l); mean < lo || mean > hi {
				miss++
			}
		}
		if rate := float64(miss) / runs; rate > 0.05 {
			t.Errorf("E = %g: the range missed it in %.1f%% of %d sums, more than 5%%", mean, 100*rate, runs)
		}
	}
}
