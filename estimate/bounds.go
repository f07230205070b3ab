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
	rho := serflingRho(n, popN)
	if rho == 0 {
		return 0
	}
	l := math.Log(5 / delta)
	return math.Sqrt(max(v, 0)*2*rho*l/n) + kappa*span*l/n
}

// serflingRho is the finite-population factor ρ of a sample without
// replacement of n of popN (Bardenet and Maillard 2015): 1 − (n−1)/N up to
// half the population, (1 − n/N)(1 + 1/n) beyond; 1 for an unknown
// population (popN ≤ 0), 0 when the sample is the population.
func serflingRho(n, popN float64) float64 {
	switch {
	case popN <= 0:
		return 1
	case n >= popN:
		return 0
	case n <= popN/2:
		return 1 - (n-1)/popN
	}
	return (1 - n/popN) * (1 + 1/n)
}

// hoeffdingSerfling is the Hoeffding form of the same bound: how far the
// population mean of a value bounded in an interval of width span can lie
// from the mean of a sample without replacement of n of popN, on one
// side, with probability at least 1 − delta: span·√(ρ·log(1/δ)/(2n))
// (Serfling 1974; Bardenet and Maillard 2015, Corollary 2.5). It needs no
// variance, and is the tighter of the two for small samples.
func hoeffdingSerfling(n, popN, span, delta float64) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	rho := serflingRho(n, popN)
	if rho == 0 {
		return 0
	}
	return span * math.Sqrt(rho*math.Log(1/delta)/(2*n))
}

// bound is the smaller of the empirical-Bernstein-Serfling (halfWidth) and
// the Hoeffding-Serfling (hoeffdingSerfling) half-widths, each at half the
// risk: a one-sided bound that holds with probability at least 1 − delta.
func bound(n, popN, v, span, delta float64) float64 {
	return math.Min(halfWidth(n, popN, v, span, delta/2), hoeffdingSerfling(n, popN, span, delta/2))
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
	w := bound(m.n, popN, v, 1, delta/2)
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

// bisect is the least x in [a, b] for which ok(x) holds, where ok is
// false below some x and true above it: a if ok(a), else b or within
// (b − a)/2^100 above the change.
func bisect(ok func(x float64) bool, a, b float64) float64 {
	if ok(a) {
		return a
	}
	for range 100 {
		mid := (a + b) / 2
		if ok(mid) {
			b = mid
		} else {
			a = mid
		}
	}
	return b
}

// klRange is the range of the expectation E of a sum of independent
// values in [0, 1], given its observed value x, with probability at least
// 1 − 2e^−l: the E whose Chernoff bound in Poisson form allows x,
// x·log(x/E) + E − x ≤ l (Hoeffding 1963, Theorem 1: n times the
// binary relative entropy of the means is at least that, for either
// tail). Where x is small it is much tighter than Bernstein's
// (poissonRange): x = 0 gives E ≤ l, where Bernstein's gives about 3.2·l.
func klRange(x, l float64) (lo, hi float64) {
	x = math.Max(x, 0)
	d := func(e float64) float64 {
		if x == 0 {
			return e
		}
		return x*math.Log(x/e) + e - x
	}
	// hi: d grows from 0 at E = x; lo: d falls to 0 at E = x.
	b := x + l + 1
	for d(b) <= l {
		b = 2*b + 1
	}
	hi = bisect(func(e float64) bool { return d(e) > l }, x, b)
	if x == 0 {
		return 0, hi
	}
	return bisect(func(e float64) bool { return d(e) <= l }, 0, x), hi
}

// pairs are the sums over a sample of two values a and b per record:
// count, Σa, Σb, Σa², Σb², Σab.
type pairs struct{ n, sa, sb, saa, sbb, sab float64 }

func (q *pairs) add(a, b, w float64) {
	q.n += w
	q.sa += a * w
	q.sb += b * w
	q.saa += a * a * w
	q.sbb += b * b * w
	q.sab += a * b * w
}

// ratioRange is the range (probability at least 1 − delta) of the ratio
// R = Σa/Σb over the whole population (popN records) from the sample q:
// the R in [lo, hi] for which the population mean of a − R·b, which is
// 0 at the true R, is not ruled out from 0 by the sample's mean on either
// side (bound, half the risk a side): a test inverted. span(R) is the
// width of an interval that holds a − R·b for every record of the
// population, whatever the data (known a priori, not from the sample).
// The point is the sample's Σa/Σb, within [lo, hi].
func ratioRange(q pairs, popN float64, span func(r float64) float64, lo, hi, delta float64) (point, low, high float64) {
	if q.n <= 0 || q.sb <= 0 {
		return math.Max(lo, 0), lo, hi
	}
	point = math.Min(math.Max(q.sa/q.sb, lo), hi)
	test := func(r float64) (m, w float64) {
		m = (q.sa - r*q.sb) / q.n
		v := (q.saa-2*r*q.sab+r*r*q.sbb)/q.n - m*m
		return m, bound(q.n, popN, v, span(r), delta/2)
	}
	// The mean of a − R·b falls as R grows: low is where its lower bound
	// reaches 0, high where its upper bound does.
	low = bisect(func(r float64) bool { m, w := test(r); return m-w <= 0 }, lo, point)
	high = bisect(func(r float64) bool { m, w := test(r); return m+w < 0 }, point, hi)
	if m, w := test(hi); m+w >= 0 {
		high = hi
	}
	return point, low, high
}
