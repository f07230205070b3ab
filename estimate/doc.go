// Package estimate turns a random sample of the records of some data into
// estimates, with 95% ranges, of what a scan of all of it would say: the
// compression ratio, the dedup ratio, the DDT entries (unique blocks) and
// the sizes behind them. It owns the sample plan too (Plan: which records
// `ddtsim --read P%` reads) so that the scan that reads and the tests that
// simulate a read choose the very same records.
//
// The plan (Plan) is Bernoulli sampling of groups of records: each record
// that ZFS would store (a record lying wholly in a hole of the source file
// that ZFS leaves a hole is known without reading and is not sampled: it
// is accounted exactly; with compression=off copied without holes its
// zeros are stored, and it is sampled like data) belongs to a group, one
// record index of the files of one size (a file of one record: a group of
// its own), and each group is read with probability P, decided by a hash
// of the seed and the group, independently of every other group. A
// content whose copies all lie in one group (a clone's unchanged record,
// a backup's unchanged record of a file that kept its size) is then seen
// whole or not at all. Given the number of groups read, they are a simple
// random sample without replacement of the groups, which is what the
// bounds below assume, taken over groups (GroupMoments) in strata
// (Strata: by the files of the group's size and its records' LSIZE), each
// group's values at most its stratum's largest group at its largest
// sizes; the strata's ranges add up, weighed by their records or LSIZE,
// known exactly from the metadata. Runs of neighbouring records would read
// faster on disks that seek, but neighbours are duplicated together
// without being copies of each other: the plan does not read runs. Scans
// saved before groups read single records (a plan without Groups: each
// record its own group), and still resume and merge so.
//
// What the metadata gives is used exactly, not estimated: every record's
// LSIZE (recordsize, or a small file's size rounded up to 512), so the sum
// of the LSIZE of the records holding data and the largest LSIZE are known
// without reading, and so is the largest DSIZE a record can have (an
// uncompressed block of the largest LSIZE, every copy and parity). Only
// whether a record is a hole (all zeros) or embedded, and its PSIZE and
// DSIZE, need its content. Each total over records (referenced LSIZE,
// PSIZE, DSIZE) is then that known LSIZE times a ratio R = Σy/ΣLSIZE, and
// the compression ratio is c = ΣLSIZE/ΣPSIZE; each ratio's range is the
// set of R for which the population mean of y − R·LSIZE, which is 0 at
// the truth and lies in an interval known a priori (PSIZE ≤ LSIZE, DSIZE
// ≤ the largest DSIZE), is not ruled out from 0 by the sample (a test
// inverted). The bound is the smaller of the empirical-Bernstein-Serfling
// bound (Bardenet and Maillard, "Concentration inequalities for sampling
// without replacement", Bernoulli 21(3), 2015, Theorem 3) and the
// Hoeffding-Serfling bound (ibid., Corollary 2.5), each at half the risk: a
// bound that holds for any data, not a normal approximation. Harnik et
// al., "To Zip or not to Zip: Effective Resource Usage for Real-Time
// Compression", FAST 2013, bound per-record PSIZE/LSIZE in Hoeffding form
// the same way. The values are never normalised by the largest the sample
// saw: a record larger than any read would break such a bound.
//
// The DDT entries and the allocated DSIZE come from the sample's
// frequency of frequencies (F_k: the contents seen in k of the groups
// read; under single records, read k times) through the
// Unseen linear program of Valiant and Valiant ("Estimating the unseen: an
// n/log(n)-sample estimator for entropy and support size", STOC 2011), in
// the form Harnik, Khaitzin and Sotnikov give it for deduplication,
// "Estimating Unseen Deduplication — from Theory to Practice", FAST 2016
// ("Range Unseen"): the unknowns are the numbers h_j of contents found in
// j groups (referenced j times, under single records); each group is in
// the sample with probability P, so a content in j groups is seen in
// Binomial(j, P) of them and E[F_k] = Σ_j h_j · Binomial(j, P)(k). Every
// h ≥ 0 whose expected fingerprint lies within a Chernoff bound of the
// observed one (each F_k a sum of independent indicators, the bound in
// Poisson form; a union bound over the rows), and whose expected number
// of (content, group) pairs read lies within a Bernstein bound of the
// number read, is a possible truth; the range is the minimum and maximum
// of Σ_j h_j over that feasible region, solved with gonum's simplex
// (gonum.org/v1/gonum/optimize/convex/lp). The point estimate is the middle
// of the same range over a tighter region (one standard deviation). The
// allocated DSIZE is the same program with each content weighted by its
// DSIZE. The point histogram spreads the program's contents of each j over
// the sample's contents seen in as many groups, each at its own refcnt
// (its records read, over its groups read, times j). The code is written
// from the papers' method.
package estimate
