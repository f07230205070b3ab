package space

import (
	"strconv"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// casePolicy is the data write policy of a golden case.
func casePolicy(t *testing.T, c golden.Case) *zio.Policy {
	t.Helper()
	set, err := model.Parse(model.Text{Release: c.Release, Vdevs: []string{c.Vdevs}, Ashift: strconv.Itoa(c.Ashift),
		Sparse: c.Sparse, Properties: c.Properties()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := set.Policy()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fileSystemCases returns the golden cases of files copied into a
// dataset (not volumes).
func fileSystemCases(t *testing.T) []golden.Case {
	t.Helper()
	cases, err := golden.Cases()
	if err != nil {
		t.Fatal(err)
	}
	var fs []golden.Case
	for _, c := range cases {
		if c.Zvol == "" {
			fs = append(fs, c)
		}
	}
	return fs
}

// goldenL1s returns, for every L1 block of every file of c, its block
// pointers as IndirectBlock counts them (from the L0 blocks listed under
// it: checksums equal to an earlier one's in the same L1 are repeats) and
// the PSIZE real ZFS gave it.
func goldenL1s(t *testing.T, c golden.Case) (counts []L1, psize []uint64) {
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	for _, blocks := range tree {
		for i, b := range blocks {
			if b.Level != 1 {
				continue
			}
			var n L1
			seen := map[string]bool{}
			for _, l0 := range blocks[i+1:] {
				if l0.Level != 0 {
					break
				}
				n.N++
				switch {
				case l0.Embedded:
					n.Embedded++
				case seen[l0.Checksum]:
					n.Repeat++
				}
				seen[l0.Checksum] = true
			}
			counts, psize = append(counts, n), append(psize, b.PSize)
		}
	}
	return counts, psize
}

// TestIndirectGolden predicts the PSIZE of every L1 block of the golden
// pools from the block pointers it holds, and compares with what real ZFS
// wrote: the expected-size model must be within one allocation unit of
// 99% of them, and within 2% (or two units) in total per case.
func TestIndirectGolden(t *testing.T) {
	t.Parallel()
	var all, off int
	for _, c := range fileSystemCases(t) {
		md := Metadata(casePolicy(t, c))
		counts, psize := goldenL1s(t, c)
		var got, want uint64
		unit := md.Vdev.MinAlloc()
		for i, n := range counts {
			if n.N != uint32(0) && n.N > BPsPerBlock {
				t.Fatalf("%s: L1 with %d block pointers", c.Name, n.N)
			}
			b := IndirectBlock(md, n)
			got += b.PSize
			want += psize[i]
			all++
			d := int64(b.PSize) - int64(psize[i])
			if d > int64(unit) || -d > int64(unit) {
				off++
				t.Logf("%s: L1 %+v: PSIZE %d, real %d", c.Name, n, b.PSize, psize[i])
			}
		}
		d := int64(got) - int64(want)
		if e := float64(got)/float64(want) - 1; (e > 0.02 || e < -0.02) && (d > 2*int64(unit) || -d > 2*int64(unit)) {
			t.Errorf("%s: L1 PSIZE %d in all, real %d (%+.2f%%)", c.Name, got, want, 100*e)
		}
	}
	t.Logf("%d L1 blocks, %d off by more than one allocation unit", all, off)
	if off > all/100 {
		t.Errorf("%d of %d L1 blocks off by more than one allocation unit", off, all)
	}
}
