package estimate

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// Fingerprint is a sample's frequency of frequencies: Seen[k] is the
// weight of the contents seen exactly k times in the sample (k ≥ 1; a
// count of contents, or their sizes divided by the largest, so that each
// content weighs at most 1), and Records the sample's records (each
// weighing at most 1 in the same unit).
type Fingerprint struct {
	Seen    map[uint64]float64
	Records float64
	// Cluster, when above 1, is the most that one unit of the sample can
	// add to a row, or to Records: under a group plan the contents of a
	// group are read together, so a row is a sum of the groups' shares,
	// each at most the records a group can hold, not of independent
	// contents (0 or 1: a plan of single records).
	Cluster float64
	// Strata, when two or more, are the sample stratum by stratum (a
	// group plan's Strata): each row and Records are the sums of the
	// strata's, and each stratum's share is bounded with its own Cluster
	// (the most records of its groups), where Cluster bounds them all.
	Strata []FingerprintStratum
}

// FingerprintStratum is one stratum's share of a Fingerprint: Seen[k] and
// Records are what its groups read of the contents seen k times (each
// content's weight shared evenly among the groups it was seen in) and of
// the records; Cluster is the most one of its groups can add to a row;
// Most is the most its records read weigh in expectation, known a priori
// (the fraction read of its records).
type FingerprintStratum struct {
	Seen    map[uint64]float64
	Records float64
	Cluster float64
	Most    float64
}

// Unseen is what the linear program says of the contents of the whole
// data: Point and the range [Low, High] of their total weight (Σ_j h_j),
// and Hist, the point solution's weight per multiplicity j (a refcnt of
// the whole data).
type Unseen struct {
	Point, Low, High float64
	Hist             map[uint64]float64
}

// errNoSolution: the program had no solution even over the widest region
// (numerical trouble); the caller falls back to a plainer range.
var errNoSolution = errors.New("estimate: the unseen program has no solution")

// exactRows is how many fingerprint rows (k = 1 … exactRows) the program
// keeps one by one; larger k are grouped in ranges growing by half.
const exactRows = 16

var debugLP = false

// program is the linear program of one fingerprint at one sampling
// probability: the multiplicity grid (the columns) and each row's
// coefficients and observed value.
type program struct {
	p     float64
	grid  []uint64    // multiplicities j
	rows  [][]float64 // E[row] = Σ_j rows[r][j]·y_j
	obs   []float64   // observed row values
	recs  []float64   // records row: E = Σ_j recs[j]·y_j
	obj   []float64   // Σ_j h_j = Σ_j obj[j]·y_j
	scale float64     // y_j = h_j·j·p / scale
	nrec  float64
	cl    float64 // Fingerprint.Cluster, at least 1
	// With strata (Fingerprint.Strata), each one's share of the rows.
	strata []progStratum
}

// progStratum is a stratum's share of a program's observations: its rows'
// (obs, as program.obs), its records, and its Cluster and Most.
type progStratum struct {
	obs            []float64
	nrec, cl, most float64
}

// newProgram sets up the program of f at sampling probability p: the
// variables are y_j, the expected share of the sample's records that
// come from contents of multiplicity j, so that the coefficients stay
// near 1 whatever the data's size.
func newProgram(f Fingerprint, p float64) *program {
	// The keys in order: the rows' sums do not depend on the map's.
	keys := sortedKeys(f.Seen)
	var maxK uint64
	if len(keys) > 0 {
		maxK = keys[len(keys)-1]
	}
	pr := &program{p: p, scale: math.Max(f.Records, 1), nrec: f.Records, cl: math.Max(f.Cluster, 1)}
	// Multiplicities: every j up to 32, then growing by 12%, up to where
	// a content would be seen well over maxK times.
	jmax := uint64(math.Ceil((float64(maxK) + 6*math.Sqrt(float64(maxK)) + 12) / p))
	for j := uint64(1); j <= jmax; {
		pr.grid = append(pr.grid, j)
		if j < 32 {
			j++
		} else {
			j = max(j+1, uint64(float64(j)*1.12))
		}
	}
	// Rows: k = 1 … exactRows, then ranges [a, b] growing by half, up to
	// maxK and one range past it (no content was seen that often).
	type kr struct{ a, b uint64 }
	var ranges []kr
	for k := uint64(1); k <= exactRows; k++ {
		ranges = append(ranges, kr{k, k})
	}
	for a := uint64(exactRows + 1); a <= maxK+1; {
		b := a + a/2
		if a > maxK {
			b = math.MaxUint64
		}
		ranges = append(ranges, kr{a, b})
		if b == math.MaxUint64 {
			break
		}
		a = b + 1
	}
	for _, r := range ranges {
		row := make([]float64, len(pr.grid))
		for i, j := range pr.grid {
			row[i] = binomRange(j, p, r.a, r.b) / (float64(j) * p) * pr.scale
		}
		pr.rows = append(pr.rows, row)
		pr.obs = append(pr.obs, seenIn(f.Seen, keys, r.a, r.b))
	}
	if len(f.Strata) > 1 {
		for _, st := range f.Strata {
			ps := progStratum{nrec: st.Records, cl: math.Max(st.Cluster, 1), most: st.Most}
			ks := sortedKeys(st.Seen)
			for _, r := range ranges {
				ps.obs = append(ps.obs, seenIn(st.Seen, ks, r.a, r.b))
			}
			pr.strata = append(pr.strata, ps)
		}
	}
	pr.recs = make([]float64, len(pr.grid))
	pr.obj = make([]float64, len(pr.grid))
	for i, j := range pr.grid {
		pr.recs[i] = pr.scale
		pr.obj[i] = pr.scale / (float64(j) * p)
	}
	return pr
}

// seenIn is the weight of seen's contents seen k times, a ≤ k ≤ b, added
// in the order of keys (seen's keys, sorted).
func seenIn(seen map[uint64]float64, keys []uint64, a, b uint64) float64 {
	var o float64
	for _, k := range keys {
		if k >= a && k <= b {
			o += seen[k]
		}
	}
	return o
}

// binomRange is P(a ≤ Binomial(j, p) ≤ b).
func binomRange(j uint64, p float64, a, b uint64) float64 {
	if a > j {
		return 0
	}
	b = min(b, j)
	if p >= 1 {
		if a <= j && j <= b {
			return 1
		}
		return 0
	}
	var s float64
	lj := lgamma(float64(j) + 1)
	lp, lq := math.Log(p), math.Log1p(-p)
	mean := float64(j) * p
	for k := a; k <= b; k++ {
		t := math.Exp(lj - lgamma(float64(k)+1) - lgamma(float64(j-k)+1) + float64(k)*lp + float64(j-k)*lq)
		s += t
		if float64(k) > mean && t < 1e-17*math.Max(s, 1e-300) {
			break
		}
	}
	return math.Min(s, 1)
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// solve returns the minimum and maximum of Σ h_j, and the solutions
// reaching them, over the region where every row lies within Bernstein's
// bound of its observed value at log-confidence l (poissonRange), and the
// records row within it at lRec; ok is false when the region is empty.
//
// With kl, the rows' ranges are the Chernoff bound's (klRange), which
// holds as Bernstein's does and is tighter where a row saw few contents
// (a row that saw none: a third as wide); the point's search keeps
// Bernstein's, whose regions it was tuned on.
func (pr *program) solve(l, lRec float64, kl bool) (lo, hi float64, xlo, xhi []float64, ok bool) {
	rowRange := func(x, l float64) (float64, float64) {
		if kl {
			return klRange(x, l)
		}
		return poissonRange(x, l, 1)
	}
	nv := len(pr.grid)
	var g [][]float64
	var h []float64
	add := func(row []float64, olo, ohi float64) {
		g = append(g, row)
		h = append(h, ohi)
		if olo > 0 {
			neg := make([]float64, nv)
			for i, v := range row {
				neg[i] = -v
			}
			g = append(g, neg)
			h = append(h, -olo)
		}
	}
	// A row is a sum of independent units, each in [0, cl] (cl: 1 for
	// single records, the most records of a group under a group plan):
	// Bernstein's bound of x/cl, scaled back (found by TestReadHarness:
	// 16 files of one size in 12 backups, whose groups hold 25 contents
	// each, held the DDT entries in 33 of 50 runs with the bound of
	// independent contents).
	if pr.cl > 1 && len(pr.strata) > 1 {
		// Stratum by stratum, each with its own groups' bound and a share
		// of the risk as its records', no more than its records allow;
		// the row's range is the sum of theirs.
		var most float64
		for _, st := range pr.strata {
			most += st.most
		}
		stratified := func(obs func(st *progStratum) float64, l, vf float64) (lo, hi float64) {
			for i := range pr.strata {
				st := &pr.strata[i]
				// Its share of the risk: as its records' (Most).
				k := 0.0
				if most > 0 && st.most > 0 {
					k = math.Log(most / st.most)
				}
				olo, ohi := poissonRange(obs(st)/st.cl, l+k, vf)
				if vf == 1 {
					olo, ohi = rowRange(obs(st)/st.cl, l+k)
				}
				lo += olo * st.cl
				hi += math.Max(math.Min(ohi*st.cl, st.most), olo*st.cl)
			}
			return lo, hi
		}
		for r, row := range pr.rows {
			lo, hi := stratified(func(st *progStratum) float64 { return st.obs[r] }, l, 1)
			add(row, lo, hi)
		}
		lo, hi := stratified(func(st *progStratum) float64 { return st.nrec }, lRec, 1-pr.p)
		add(pr.recs, lo, hi)
	} else {
		for r, row := range pr.rows {
			olo, ohi := rowRange(pr.obs[r]/pr.cl, l)
			add(row, olo*pr.cl, ohi*pr.cl)
		}
		// The records read: E = p·N, variance p(1−p)·N = E·(1−p).
		rlo, rhi := poissonRange(pr.nrec/pr.cl, lRec, 1-pr.p)
		add(pr.recs, rlo*pr.cl, rhi*pr.cl)
	}
	// Standard form directly: [G | I]·(y, s) = h, y, s ≥ 0.
	m := len(g)
	A := mat.NewDense(m, nv+m, nil)
	for r, row := range g {
		for i, v := range row {
			A.Set(r, i, v/pr.scale)
		}
		A.Set(r, nv+r, 1)
		h[r] /= pr.scale
	}
	run := func(sign float64) (_ float64, _ []float64, ok bool) {
		c := make([]float64, nv+m)
		for i, v := range pr.obj {
			c[i] = sign * v / pr.scale
		}
		// gonum's simplex panics on some degenerate programs ("subcolumns
		// of A for supplied initial basic singular", found when a row's
		// range shrank to a point): no solution, as an error would say.
		defer func() {
			if r := recover(); r != nil {
				ok = false
				if debugLP {
					println("simplex panicked:", r)
				}
			}
		}()
		opt, x, err := lp.Simplex(c, A, h, 1e-10, nil)
		if debugLP && err != nil {
			println("simplex:", err.Error())
		}
		if err != nil {
			return 0, nil, false
		}
		return sign * opt * pr.scale, x[:nv], true
	}
	var ok1, ok2 bool
	lo, xlo, ok1 = run(1)
	hi, xhi, ok2 = run(-1)
	return lo, hi, xlo, xhi, ok1 && ok2
}

// solveUnseen runs the program of f at sampling probability p: the range
// over the region at confidence 1 − delta, and the point estimate, the
// middle of the range over the tightest region that has a solution (from
// half a standard deviation, widened by half each time: the tighter the
// region, the less room for the surplus of singletons that the widest
// solution puts in, which made the point overestimate the entries of
// clones and backups by half at 5%).
func solveUnseen(f Fingerprint, p, delta float64) (Unseen, error) {
	if p >= 1 {
		u := Unseen{Hist: map[uint64]float64{}}
		for _, k := range sortedKeys(f.Seen) {
			u.Point += f.Seen[k]
			u.Hist[k] += f.Seen[k]
		}
		u.Low, u.High = u.Point, u.Point
		return u, nil
	}
	pr := newProgram(f, p)
	m := float64(len(pr.rows) + 1)
	l := math.Log(2 * m / delta)
	lo, hi, _, _, ok := pr.solve(l, l, true)
	if !ok {
		// The Chernoff bounds' region empty (a row beyond its bound, or
		// the simplex's numerical trouble): Bernstein's, wider, as before.
		lo, hi, _, _, ok = pr.solve(l, l, false)
	}
	if !ok {
		return Unseen{}, errNoSolution
	}
	u := Unseen{Low: lo, High: hi}
	// The point is sought as if the units were single contents (cl 1):
	// the tightest region is a guess of where the truth is likely, not
	// a bound, and the groups' bound made it so loose that the point
	// strayed (the dedup ratio's median error at 5% of clones: 14.6%,
	// 5.6% so). Where that finds no region, the groups' bound does.
	cl := pr.cl
	pr.cl = 1
	for t := 0.125; ; t *= 1.5 {
		tl := math.Min(t, l)
		plo, phi, xlo, xhi, ok := pr.solve(tl, tl, false)
		if !ok && tl == l && pr.cl != cl {
			pr.cl, t = cl, 0.125/1.5 // again, with the groups' bound
			continue
		}
		if ok {
			u.Point = (plo + phi) / 2
			u.Hist = map[uint64]float64{}
			for i, j := range pr.grid {
				// h_j = y_j·scale/(j·p); the middle of the two solutions.
				w := (xlo[i] + xhi[i]) / 2 * pr.scale / (float64(j) * p)
				if w > 0 {
					u.Hist[j] += w
				}
			}
			break
		}
		if tl == l {
			return Unseen{}, errNoSolution
		}
	}
	u.Point = math.Min(math.Max(u.Point, u.Low), u.High)
	return u, nil
}

// sortedKeys returns m's keys in increasing order.
func sortedKeys(m map[uint64]float64) []uint64 {
	ks := make([]uint64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
