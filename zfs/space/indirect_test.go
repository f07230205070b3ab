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

// TestFileRuns: a run of level-1 blocks of equal counts gives the blocks
// that the same counts written out one map entry each give, at every
// level, wherever the run starts and ends against the level-2 blocks
// above it; and a run of 2^26 + 1 records' level-1 blocks has the 65,537
// of them, 65 above and one above those (found by a new user: a run
// past 2^16 level-1 blocks had been left out).
func TestFileRuns(t *testing.T) {
	t.Parallel()
	rel, err := zio.LookupRelease("2.3")
	if err != nil {
		t.Fatal(err)
	}
	d, err := zio.NewDisk(12)
	if err != nil {
		t.Fatal(err)
	}
	md := Metadata(&zio.Policy{Release: rel, Vdev: d, Copies: 1, RecordSize: 128 << 10})
	c := L1{N: BPsPerBlock, Repeat: BPsPerBlock - 16}
	for _, r := range [][2]uint64{{1, 4}, {1, 1024}, {1, 1025}, {1023, 2049}, {3, 1500}, {700, 5000}, {1024, 2048}, {5, 3 * 1024 * 1024}, {0, 1024*1024 + 1}} {
		groups := map[uint64]L1{0: {N: 3}}
		if r[0] == 0 {
			groups = map[uint64]L1{}
		}
		spelled := map[uint64]L1{}
		for k, v := range groups {
			spelled[k] = v
		}
		for g := r[0]; g < r[1]; g++ {
			spelled[g] = c
		}
		end := r[1] + 1
		groups[r[1]] = L1{N: 7}
		spelled[r[1]] = L1{N: 7}
		blocks := end*BPsPerBlock - 10
		got := File(md, blocks, groups, []Run{{First: r[0], End: r[1], C: c}})
		want := File(md, blocks, spelled, nil)
		if got != want {
			t.Errorf("run %v: %+v, written out %+v", r, got, want)
		}
	}
	n := uint64(1<<26 + 1)
	one := File(md, n, map[uint64]L1{0: c, 65536: {N: 1}}, []Run{{First: 1, End: 65536, C: c}})
	if one.Count != 65537+65+1 {
		t.Errorf("2^26 + 1 records: %d indirect blocks, want 65,603", one.Count)
	}
}
