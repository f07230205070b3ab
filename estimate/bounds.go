package estimate

import "math"

// kappa is the constant of the empirical-Bernstein-Serfling bound
// (Bardenet and Maillard 2015, Theorem 3): 7/3 + 3/√2.
var kappa = 7.0/3 + 3/math.Sqrt2

// moments are the sums over a sample of a value x: count, Σx, Σx².
type moments struct{ n, s, s2 float64 }

func (m *moments) add(x, w float64) {
	m.n += w
	m.s += x * w
	m.s2 += x * x * w
}

// halfWidth is how far the population mean of a value bounded in an
// interval of width span can lie from the mean of a sample without
// replacement of n of its size popN (popN ≤ 0: unknown, taken as
// infinite) whose (biased) variance is v, on one side, with probability
// at least 1 − delta: σ̂·√(2ρ·log(5/δ)/n) + κ·span·log(5/δ)/n, where ρ is
// the finite-population factor (Bardenet and Maillard 2015, Theorem 3).
// It is +Inf for an empty sample, 0 when the sample is the population.
func halfWidth(n, popN, v, span, delta float64) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	rho := 1.0
	if popN > 0 {
		if n >= popN {
			return 0
		}
		if n <= popN/2 {
			rho = 1 - (n-1)/popN
		} else {
			rho = (1 - n/popN) * (1 + 1/n)
		}
	}
	l := math.Log(5 / delta)
	return math.Sqrt(max(v, 0)*2*rho*l/n) + kappa*span*l/n
}

// meanRange is the two-sided range (probability at least 1 − delta) of
// the population mean of a value in [0, 1], from its sample moments m and
// the population's size popN.
func meanRange(m moments, popN, delta float64) (mean, lo, hi float64) {
	if m.n <= 0 {
		return 0, 0, 1
	}
	mean = m.s / m.n
	v := m.s2/m.n - mean*mean
	w := halfWidth(m.n, popN, v, 1, delta/2)
	return mean, math.Max(0, mean-w), math.Min(1, mean+w)
}

// poissonRange is the range of the expectation E of a sum of independent
// values in [0, 1] whose variance is at most vf·E (indicators: vf = 1;
// records read with probability p: vf = 1 − p), given its observed value
// x, with probability at least 1 − 2e^−l: E lies where Bernstein's
// inequality allows x, |x − E| ≤ √(2·vf·E·l) + 2l/3, solved for E.
func poissonRange(x, l, vf float64) (lo, hi float64) {
	a := math.Sqrt(2 * l * vf)
	s := (a + math.Sqrt(a*a+4*(x+2*l/3))) / 2
	hi = s * s
	if c := x - 2*l/3; c > 0 {
		s = (-a + math.Sqrt(a*a+4*c)) / 2
		lo = s * s
	}
	return lo, hi
}
