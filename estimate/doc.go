// Package estimate turns a random sample of the records of some data into
// estimates, with 95% ranges, of what a scan of all of it would say: the
// compression ratio, the dedup ratio, the DDT entries (unique blocks) and
// the sizes behind them. It owns the sample plan too (Plan: which records
// `ddtsim --read P%` reads) so that the scan that reads and the tests that
// simulate a read choose the very same records.
//
// The plan is Bernoulli sampling per record: each record that holds data
// (a record lying wholly in a hole of the source file is known without
// reading and is not sampled: it is accounted exactly) is read with
// probability P, decided by a hash of the seed, the file's path and the
// record's index, independently of every other record. Given the number of
// records read, they are a simple random sample without replacement of the
// records, which is what the bounds below assume; runs of neighbouring
// records would read faster on disks that seek, but neighbours are
// duplicated together (a clone's unchanged extent), so a run's records are
// not independent and the fingerprint of a run sample is not the binomial
// thinning the Unseen program models: the plan samples single records.
//
// Compression, and every total over records (referenced LSIZE, PSIZE,
// DSIZE, stored blocks), is a mean over records of a value bounded in
// [0, 1] once divided by the largest record: its range is the
// empirical-Bernstein-Serfling bound (Bardenet and Maillard, "Concentration
// inequalities for sampling without replacement", Bernoulli 21(3), 2015,
// Theorem 3), a bound that holds for any data, not a normal
// approximation; the compression ratio c = ΣLSIZE/ΣPSIZE is the set of c
// for which the mean of (LSIZE − c·PSIZE) is not ruled out from 0 (a test
// inverted), the bound on per-record PSIZE/LSIZE that Harnik et al., "To
// Zip or not to Zip: Effective Resource Usage for Real-Time Compression",
// FAST 2013, use in Hoeffding form.
//
// The DDT entries and the allocated DSIZE come from the sample's
// frequency of frequencies (F_k: the contents seen k times) through the
// Unseen linear program of Valiant and Valiant ("Estimating the unseen: an
// n/log(n)-sample estimator for entropy and support size", STOC 2011), in
// the form Harnik, Khaitzin and Sotnikov give it for deduplication,
// "Estimating Unseen Deduplication — from Theory to Practice", FAST 2016
// ("Range Unseen"): the unknowns are the numbers h_j of contents referenced
// j times; each record is in the sample with probability P, so a content
// referenced j times is seen Binomial(j, P) times and E[F_k] = Σ_j h_j ·
// Binomial(j, P)(k). Every h ≥ 0 whose expected fingerprint lies within a
// Bernstein bound of the observed one (each F_k a sum of independent
// indicators; a union bound over the rows), and whose expected number of
// records read lies within a Bernstein bound of the number read, is a
// possible truth; the range is the minimum and maximum of Σ_j h_j over
// that feasible region, solved with gonum's simplex
// (gonum.org/v1/gonum/optimize/convex/lp). The point estimate is the middle
// of the same range over a tighter region (one standard deviation). The
// allocated DSIZE is the same program with each content weighted by its
// DSIZE. The code is written from the papers' method.
package estimate
