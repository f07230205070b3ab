package estimate

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// content is one content of a synthetic population: referenced refs
// times, each reference of these sizes.
type content struct {
	refs         uint64
	lsize, psize uint32
	dsize        uint64
}

// truth is a population's exact figures, computed here from its list of
// contents (independently of Compute).
type truth struct {
	stored, entries, refL, refP, refD, allocD float64
}

func truthOf(pop []content, holes uint64) (truth, uint64) {
	var t truth
	recs := holes
	for _, c := range pop {
		r := float64(c.refs)
		t.stored += r
		t.entries++
		t.refL += r * float64(c.lsize)
		t.refP += r * float64(c.psize)
		t.refD += r * float64(c.dsize)
		t.allocD += float64(c.dsize)
		recs += c.refs
	}
	return t, recs
}

// holeLSize is the LSIZE of the all-zero records of the populations.
const holeLSize = 128 << 10

// sample reads each record of pop (and holes all-zero records of
// holeLSize) with probability p and returns the Input of the sample's
// table, with what the metadata gives: every record's LSIZE, and the
// largest DSIZE (DSIZE = PSIZE here: an uncompressed block's is LSIZE).
func sample(pop []content, holes uint64, p float64, rng *rand.Rand) Input {
	var entries []ddt.Entry
	var in Input
	add := func(l uint32, read uint64, refs uint64) {
		in.LSize += uint64(l) * refs
		in.MaxLSize = max(in.MaxLSize, uint64(l))
		in.ReadLSize += uint64(l) * read
		in.ReadLSizeSq += uint64(l/512) * uint64(l/512) * read
		in.Read += read
	}
	for _, c := range pop {
		var k uint64
		for range c.refs {
			if rng.Float64() < p {
				k++
			}
		}
		if k > 0 {
			entries = append(entries, ddt.Entry{Refcnt: k, LSize: c.lsize, PSize: c.psize, DSize: c.dsize})
		}
		add(c.lsize, k, c.refs)
	}
	var hk uint64
	for range holes {
		if rng.Float64() < p {
			hk++
		}
	}
	add(holeLSize, hk, holes)
	_, recs := truthOf(pop, holes)
	in.Fraction, in.Records, in.MaxDSize = p, recs, in.MaxLSize
	in.DataMaxDSize = in.LSize // DSIZE = PSIZE ≤ LSIZE here
	in.Entries = func(f func(ddt.Entry) bool) {
		for _, e := range entries {
			if !f(e) {
				return
			}
		}
	}
	return in
}

// shapes are synthetic populations of known truth.
func shapes(rng *rand.Rand) map[string][]content {
	rec := func(refs uint64) content {
		ps := uint32(512 * (1 + rng.IntN(256)))
		return content{refs: refs, lsize: 128 << 10, psize: ps, dsize: uint64(ps)}
	}
	out := map[string][]content{}
	var u, clones, backups, zipf, small []content
	for range 20000 {
		u = append(u, rec(1))
	}
	// 10 clones of a 2,000-record image, 5% of each clone's records changed.
	for range 2000 {
		c := rec(10)
		for range 10 {
			if rng.Float64() < 0.05 {
				c.refs--
				clones = append(clones, rec(1))
			}
		}
		clones = append(clones, c)
	}
	// 30 full backups of a tree that changes 3% between backups.
	for range 1000 {
		left := uint64(30)
		for left > 0 {
			life := min(left, uint64(1+rng.ExpFloat64()*33))
			backups = append(backups, rec(life))
			left -= life
		}
	}
	// Zipf-like: a few contents referenced very often, most once.
	for i := range 8000 {
		zipf = append(zipf, rec(uint64(1+2000/(1+i*i%7919))))
	}
	// Small files: sizes of 512 B to 64 K, a fifth of them duplicated.
	for range 15000 {
		ls := uint32(512 * (1 + rng.IntN(128)))
		ps := min(ls, uint32(512*(1+rng.IntN(int(ls/512)))))
		refs := uint64(1)
		if rng.IntN(5) == 0 {
			refs = uint64(2 + rng.IntN(4))
		}
		small = append(small, content{refs: refs, lsize: ls, psize: ps, dsize: uint64(ps)})
	}
	out["unique"], out["clones"], out["backups"], out["zipf"], out["small"] = u, clones, backups, zipf, small
	return out
}

func in(iv ddt.Interval, v float64) bool {
	const eps = 1e-9
	return iv.Low <= v*(1+eps)+eps && v <= iv.High*(1+eps)+eps
}

// TestCoverage checks that the 95% ranges hold the truth of synthetic
// populations in at least 90% of the samples, at 1%, 5% and 15%.
func TestCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	seeds := 12
	for name, pop := range shapes(rng) {
		tr, _ := truthOf(pop, 500)
		for _, p := range []float64{0.01, 0.05, 0.15} {
			var miss map[string]int = map[string]int{}
			var errD float64
			for s := range seeds {
				e := Compute(sample(pop, 500, p, rand.New(rand.NewPCG(uint64(s), 7))))
				check := func(what string, iv ddt.Interval, v float64) {
					if !in(iv, v) {
						miss[what]++
					}
				}
				check("entries", e.Entries, tr.entries)
				check("allocated", e.AllocDSize, tr.allocD)
				check("referenced", e.RefDSize, tr.refD)
				check("stored", e.Stored, tr.stored)
				check("dedup", e.Dedup, tr.refD/tr.allocD)
				check("compress", e.Compress, tr.refL/tr.refP)
				errD += math.Abs(e.Dedup.Value/(tr.refD/tr.allocD) - 1)
				if s == 0 {
					t.Logf("%s p=%.2f dedup %.3f [%.3f, %.3f] truth %.3f; entries %.0f [%.0f, %.0f] truth %.0f; compress %.3f [%.3f, %.3f] truth %.3f",
						name, p, e.Dedup.Value, e.Dedup.Low, e.Dedup.High, tr.refD/tr.allocD, e.Entries.Value, e.Entries.Low, e.Entries.High, tr.entries,
						e.Compress.Value, e.Compress.Low, e.Compress.High, tr.refL/tr.refP)
				}
			}
			for what, m := range miss {
				if float64(m) > 0.1*float64(seeds) {
					t.Errorf("%s at %.0f%%: %s missed the truth in %d of %d samples", name, 100*p, what, m, seeds)
				}
			}
		}
	}
}

// TestWholeIsExact: a plan that reads every record gives the exact
// figures with ranges of width 0.
func TestWholeIsExact(t *testing.T) {
	pop := shapes(rand.New(rand.NewPCG(3, 4)))["backups"]
	tr, _ := truthOf(pop, 10)
	e := Compute(sample(pop, 10, 1, rand.New(rand.NewPCG(1, 1))))
	for _, c := range []struct {
		what string
		iv   ddt.Interval
		want float64
	}{{"entries", e.Entries, tr.entries}, {"allocated", e.AllocDSize, tr.allocD}, {"referenced", e.RefDSize, tr.refD}} {
		if math.Abs(c.iv.Value-c.want) > 1e-6*c.want || c.iv.High-c.iv.Low > 1e-6*c.want {
			t.Errorf("%s: %+v, want exactly %.0f", c.what, c.iv, c.want)
		}
	}
}

// TestPlanReadsFraction: the plan reads about the fraction asked, the
// same records for the same seed, other records for another.
func TestPlanReadsFraction(t *testing.T) {
	for _, f := range []float64{0.01, 0.05, 0.15} {
		a, b := Plan{Fraction: f, Seed: 1}, Plan{Fraction: f, Seed: 2}
		ka, kb := a.FileKey("/x/y", 1<<40, 1<<30), b.FileKey("/x/y", 1<<40, 1<<30)
		var na, both int
		const n = 200000
		for i := range uint64(n) {
			ra := a.Reads(ka, i)
			if ra {
				na++
			}
			if ra && b.Reads(kb, i) {
				both++
			}
			if ra != a.Reads(a.FileKey("/x/y", 1<<40, 1<<30), i) {
				t.Fatal("not reproducible")
			}
		}
		// Binomial(n, f): 5 standard deviations.
		if sd := math.Sqrt(n * f * (1 - f)); math.Abs(float64(na)-n*f) > 5*sd {
			t.Errorf("fraction %v: read %d of %d", f, na, n)
		}
		if sd := math.Sqrt(n * f * f); math.Abs(float64(both)-n*f*f) > 5*sd+5 {
			t.Errorf("fraction %v: seeds 1 and 2 share %d records, want about %.0f", f, both, n*f*f)
		}
	}
}

func TestParseFraction(t *testing.T) {
	for v, want := range map[string]float64{"5%": 0.05, "0.5%": 0.005, "0.15": 0.15, "100%": 1} {
		if got, err := ParseFraction(v); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"", "0", "0%", "101%", "1/20", "x%", "NaN"} {
		if _, err := ParseFraction(v); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}

// TestOrderDoesNotMatter: the estimate of one sample is the same, bit for
// bit, whatever the order its entries come in (a table's Range has none),
// and from the tallies of two parts of the table merged (the partitions
// of a merge of saved shards): a resumed or merged scan prints the
// report of one scan, byte for byte.
func TestOrderDoesNotMatter(t *testing.T) {
	for name, pop := range shapes(rand.New(rand.NewPCG(5, 6))) {
		in := sample(pop, 40, 0.05, rand.New(rand.NewPCG(2, 3)))
		// A largest DSIZE that is not a power of 2 (raidz's parity, 3
		// copies): the values summed are not exact in binary, and a sum
		// in another order differs in its last bits.
		in.MaxDSize = 3*in.MaxDSize + 3<<12
		var entries []ddt.Entry
		in.Entries(func(e ddt.Entry) bool { entries = append(entries, e); return true })
		want := Compute(in)
		rng := rand.New(rand.NewPCG(9, 9))
		for try := range 4 {
			rng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
			in.Entries = func(f func(ddt.Entry) bool) {
				for _, e := range entries {
					if !f(e) {
						return
					}
				}
			}
			if got := Compute(in); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: shuffle %d: %+v, want %+v", name, try, got, want)
			}
		}
		a, b := NewTally(), NewTally()
		for i, e := range entries {
			if i%3 == 0 {
				a.Add(e)
			} else {
				b.Add(e)
			}
		}
		a.Merge(b)
		in.Entries, in.Tally = nil, a
		if got := Compute(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: merged tallies: %+v, want %+v", name, got, want)
		}
	}
}

// TestHistogramRowsZdbCouldPrint: the point histogram's rows are rows zdb
// could print (the refcnt-1 row references what it allocates, the row of
// refcnts 2^b to 2^(b+1)−1 between 2^b and 2^(b+1)−1 times what it
// allocates, in every column) and its referenced columns still add up to
// the referenced figures' points (found by a new user: a refcnt-1 row of
// 44.4K allocated and 44.6K referenced blocks, its referenced LSIZE below
// its allocated one).
func TestHistogramRowsZdbCouldPrint(t *testing.T) {
	pops := shapes(rand.New(rand.NewPCG(5, 6)))
	for name, pop := range harnessShapes(rand.New(rand.NewPCG(7, 8)), 32<<10) {
		pops["harness "+name] = pop
	}
	// Found by a new user: 4 sparse files of 8 GiB with 50 MiB of data
	// each, copied with compression=off and no holes: one content (128K
	// of zeros) referenced 262,144 times beside a few thousand unique
	// records. The first fitting moved the zeros' entry into the
	// refcnt-1 row: USED 1.36 GiB for 32 GiB.
	zeros := []content{{refs: 260000, lsize: 128 << 10, psize: 128 << 10, dsize: 128 << 10}}
	for range 1600 {
		zeros = append(zeros, content{refs: 1, lsize: 128 << 10, psize: 128 << 10, dsize: 128 << 10})
	}
	pops["zeros"] = zeros
	fitted := 0
	for name, pop := range pops {
		for _, p := range []float64{0.01, 0.05, 0.15} {
			for s := range 6 {
				in := sample(pop, 50, p, rand.New(rand.NewPCG(uint64(s), 13)))
				e := Compute(in)
				h := e.Histogram
				var tot ddt.Stat
				for b := range h {
					a, r := h[b].Allocated, h[b].Referenced
					tot.Blocks += r.Blocks
					tot.LSize += r.LSize
					tot.PSize += r.PSize
					tot.DSize += r.DSize
					// No entry, nor reference, larger than the largest
					// block (found by a new user: a row of 1 entry of
					// 129K at recordsize 128K, and a refcnt-1 row of
					// 128.4K a block).
					over := func(size, blocks, max uint64) bool { return size > blocks*max }
					if over(a.LSize, a.Blocks, in.MaxLSize) || over(r.LSize, r.Blocks, in.MaxLSize) || over(a.DSize, a.Blocks, in.MaxDSize) || over(r.DSize, r.Blocks, in.MaxDSize) {
						t.Errorf("%s at %g%%, seed %d: row %d: %+v, larger than %d (LSIZE) or %d (DSIZE) bytes a block", name, 100*p, s, 1<<b, h[b], in.MaxLSize, in.MaxDSize)
					}
					for i, pr := range [][2]uint64{{a.Blocks, r.Blocks}, {a.LSize, r.LSize}, {a.PSize, r.PSize}, {a.DSize, r.DSize}} {
						lo, hi := pr[0]<<b, pr[0]*(1<<(b+1)-1)
						if b == 0 {
							hi = lo
						}
						if pr[1] < lo || pr[1] > hi {
							t.Errorf("%s at %g%%, seed %d: row %d column %d: referenced %d for allocated %d, outside [%d, %d]",
								name, 100*p, s, 1<<b, i, pr[1], pr[0], lo, hi)
						}
					}
				}
				want := ddt.Stat{Blocks: round(e.Stored.Value), LSize: round(e.RefLSize.Value), PSize: round(e.RefPSize.Value), DSize: round(e.RefDSize.Value)}
				if tot != want {
					t.Errorf("%s at %g%%, seed %d: referenced totals %+v, the points %+v", name, 100*p, s, tot, want)
				}
				if got := float64(h.Total().Allocated.DSize); math.Abs(got-e.AllocDSize.Value) > 0.5 {
					t.Errorf("%s at %g%%, seed %d: allocated DSIZE %.0f, the point %.0f", name, 100*p, s, got, e.AllocDSize.Value)
				}
				if name == "zeros" {
					// The zeros' entry is in the row of its references:
					// 2^17 to 2^18-1 at 260,000 (or a neighbour).
					var top int
					for b := range h {
						if h[b].Allocated.Blocks > 0 {
							top = b
						}
					}
					if top < 16 || top > 18 {
						t.Errorf("zeros at %g%%, seed %d: the highest row is refcnt %d, want about 256K", 100*p, s, 1<<top)
					}
				}
				if h[0].Allocated.Blocks > 0 {
					fitted++
				}
			}
		}
	}
	if fitted == 0 {
		t.Fatal("no histogram had a refcnt-1 row")
	}
}

// TestNoPairNoDuplicates: a sample in which no content was read twice
// gives a point of no duplicates (dedup 1, one row of refcnt 1), its
// ranges still open to duplicates unseen (found by a new user: 400 MiB
// of random data read at 1% printed dedup 1.53 and rows of refcnt 2
// and 4).
func TestNoPairNoDuplicates(t *testing.T) {
	var pop []content
	for range 3200 {
		pop = append(pop, content{refs: 1, lsize: 128 << 10, psize: 128 << 10, dsize: 128 << 10})
	}
	for s := range 5 {
		e := Compute(sample(pop, 0, 0.01, rand.New(rand.NewPCG(uint64(s), 17))))
		if e.Dedup.Value != 1 || e.Entries.Value != e.Stored.Value {
			t.Errorf("seed %d: dedup %v, entries %v for %v blocks; want 1 and as many", s, e.Dedup, e.Entries.Value, e.Stored.Value)
		}
		for b := 1; b < len(e.Histogram); b++ {
			if e.Histogram[b].Allocated.Blocks != 0 {
				t.Errorf("seed %d: a row of refcnt %d: %+v", s, 1<<b, e.Histogram[b])
			}
		}
		if e.Dedup.High <= 1.01 {
			t.Errorf("seed %d: dedup range %+v: 32 records read cannot rule duplicates out", s, e.Dedup)
		}
	}
}

// TestRangesKeepWhatWasRead: whatever the sample, the ranges start no
// lower than what it read (the DSIZE of the records read, referenced;
// referenced no lower than allocated) and the combined ratio's range
// starts above 0 once a stored record was read; the dedup ratio is at
// most the largest refcnt the data can hold; referenced DSIZE at most the
// records' uncompressed DSIZE. Found by a new user: 2
// records read of 26 printed "on disk 0 B to 3.25 MiB without dedup,
// 132 KiB to 3.25 MiB with dedup" and "combined 0.00 to 18.18".
func TestRangesKeepWhatWasRead(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	for name, pop := range shapes(rng) {
		pop = pop[:40]
		for s := range 30 {
			in := sample(pop, 0, 0.05, rand.New(rand.NewPCG(uint64(s), 12)))
			var readD float64
			in.Entries(func(x ddt.Entry) bool { readD += float64(x.Refcnt) * float64(x.DSize); return true })
			e := Compute(in)
			if readD == 0 {
				continue
			}
			if e.RefDSize.Low < readD || e.RefDSize.Low < e.AllocDSize.Low || e.Combined.Low <= 0 || e.Dedup.Low < 1 ||
				e.Dedup.High > e.Stored.High-math.Max(e.Entries.Low, 1)+1+1e-9 || e.RefDSize.High > float64(in.DataMaxDSize) {
				t.Errorf("%s, seed %d: referenced %+v (read %.0f), allocated %+v, combined %+v, dedup %+v",
					name, s, e.RefDSize, readD, e.AllocDSize, e.Combined, e.Dedup)
			}
		}
	}
}

// TestCombinedNoLowerThanLeast: the combined ratio's range starts no
// lower than the least LSIZE/DSIZE a record can have (Input.LeastRatio),
// where the ratio of two ranges' ends fell below it: 512-byte files at
// ashift 12 take 4K each, so no data of them has a ratio under 1/8.
func TestCombinedNoLowerThanLeast(t *testing.T) {
	var pop []content
	for i := range 400 {
		pop = append(pop, content{refs: uint64(1 + i%3), lsize: 512, psize: 512, dsize: 4096})
	}
	low := math.Inf(1)
	for s := range 20 {
		in := sample(pop, 0, 0.02, rand.New(rand.NewPCG(uint64(s), 5)))
		in.MaxDSize, in.DataMaxDSize = 4096, 4096*in.Records
		without := Compute(in)
		low = math.Min(low, without.Combined.Low)
		in.LeastRatio = 512.0 / 4096
		e := Compute(in)
		if e.Combined.Low < in.LeastRatio || e.Combined.Value < e.Combined.Low || e.Combined.High < e.Combined.Value {
			t.Errorf("seed %d: combined %+v, the least possible %v", s, e.Combined, in.LeastRatio)
		}
	}
	if low >= 512.0/4096 {
		t.Errorf("without LeastRatio the low end never fell under 1/8 (least %v): the test tests nothing", low)
	}
}

// TestRangesAtMostWhatIsUnread: no more DDT entries than those read and
// one for each record unread, nor more stored blocks than those read and
// the records unread (found by a new user: at 90% read, 758 entries at
// most with 235 read and 73 records unread), whatever the fraction.
func TestRangesAtMostWhatIsUnread(t *testing.T) {
	for name, pop := range shapes(rand.New(rand.NewPCG(5, 6))) {
		for _, p := range []float64{0.5, 0.9, 0.99} {
			in := sample(pop, 0, p, rand.New(rand.NewPCG(3, 4)))
			var seen, stored float64
			in.Entries(func(e ddt.Entry) bool { seen++; stored += float64(e.Refcnt); return true })
			e := Compute(in)
			unread := float64(in.Records - in.Read)
			if e.Entries.High > seen+unread+1e-6 || e.Stored.High > stored+unread+1e-6 || e.Stored.Low < stored-1e-6 {
				t.Errorf("%s at %g: entries up to %.0f with %.0f read and %.0f unread; stored %.0f to %.0f with %.0f read",
					name, p, e.Entries.High, seen, unread, e.Stored.Low, e.Stored.High, stored)
			}
		}
	}
}
