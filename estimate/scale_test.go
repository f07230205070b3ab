package estimate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/stress"
)

// harnessShapes are the harness's two shapes of duplication (scan's
// TestReadHarness writes them as files) as populations of about n
// records of 16K: clones, 8 clones of an image with 3% of each clone's
// records changed; backups, 12 full backups with 5% of the records
// rewritten between backups (a record's content lives a geometric number
// of backups). Half the contents compress to 1–32 sectors, half not at
// all, as the harness's text-like and random records.
func harnessShapes(rng *rand.Rand, n int) map[string][]content {
	rec := func(refs uint64) content {
		ps := uint32(16 << 10)
		if rng.IntN(2) == 0 {
			ps = uint32(512 * (1 + rng.IntN(32)))
		}
		return content{refs: refs, lsize: 16 << 10, psize: ps, dsize: uint64(ps)}
	}
	var clones, backups []content
	for range n / 8 {
		c := rec(8)
		for range 8 {
			if rng.Float64() < 0.03 {
				c.refs--
				clones = append(clones, rec(1))
			}
		}
		if c.refs > 0 {
			clones = append(clones, c)
		}
	}
	for range n / 12 {
		var life uint64
		for b := range 12 {
			life++
			if b == 11 || rng.Float64() < 0.05 {
				backups = append(backups, rec(life))
				life = 0
			}
		}
	}
	return map[string][]content{"clones": clones, "backups": backups}
}

// TestDedupErrorByScale measures how the dedup ratio's error at a fixed
// fraction read falls as the data grows, on the harness's clones and
// backups shapes from 32K to 8M records (512 MiB to 128 GiB of 16K
// records; 4 GiB to 1 TiB of 128K ones), and holds the 95% ranges to
// 90% coverage at every size. The sample's information about duplicates
// is its pairs of reads of one content, about p²·Σ C(refs, 2): at a fixed
// p it grows with the data, so the error shrinks; the table it prints is
// docs/read-estimates.md's. Stress only (a minute).
func TestDedupErrorByScale(t *testing.T) {
	stress.Require(t)
	var table strings.Builder
	table.WriteString("| data set | records | read | dedup: median error | dedup: coverage | DDT entries: median error |\n|---|---|---|---|---|---|\n")
	for _, n := range []int{32 << 10, 128 << 10, 512 << 10, 2 << 20, 8 << 20} {
		shp := harnessShapes(rand.New(rand.NewPCG(uint64(n), 9)), n)
		seeds := 20
		for _, name := range []string{"clones", "backups"} {
			pop := shp[name]
			tr, recs := truthOf(pop, 0)
			want := tr.refD / tr.allocD
			for _, p := range []float64{0.01, 0.05, 0.15} {
				var errD, errE []float64
				cover := 0
				for s := range seeds {
					e := Compute(sample(pop, 0, p, rand.New(rand.NewPCG(uint64(s), 11))))
					errD = append(errD, math.Abs(e.Dedup.Value/want-1))
					errE = append(errE, math.Abs(e.Entries.Value/tr.entries-1))
					if in(e.Dedup, want) {
						cover++
					}
				}
				slices.Sort(errD)
				slices.Sort(errE)
				fmt.Fprintf(&table, "| %s | %d | %g%% | %.1f%% | %d/%d | %.1f%% |\n", name, recs, 100*p,
					100*errD[seeds/2], cover, seeds, 100*errE[seeds/2])
				if float64(cover) < 0.9*float64(seeds) {
					t.Errorf("%s, %d records, %g%%: the dedup range held the truth in %d of %d samples", name, recs, 100*p, cover, seeds)
				}
			}
		}
	}
	t.Logf("median relative error of the point and coverage of the 95%% range, 20 samples each:\n%s", table.String())
}
