package estimate

import "testing"

// NewStrata places every group by its capacity (the files of its size) and
// its records' LSIZE, weighs each stratum by its records and LSIZE, and
// finds a table group's stratum from the group alone (and its LSIZE).
func TestNewStrata(t *testing.T) {
	plan := Plan{Fraction: 0.05, Seed: 3, Groups: true}
	const rs = 128 << 10
	records := func(size uint64) (uint32, uint64) {
		if size <= rs {
			return uint32((size + 511) &^ 511), 1
		}
		return rs, (size + rs - 1) / rs
	}
	dsize := func(l uint64) uint64 { return l + 1000 }
	sizes := map[uint64]SizeCount{
		1 << 20:   {Files: 8, Holes: 3}, // clones: 8 records each, 3 in holes
		2 << 20:   {Files: 20},          // 20 files of one size
		3<<20 + 5: {Files: 1},           // a size of its own: groups of 1
	}
	oneRecord := map[uint64]uint64{512: 10, 4096: 5, rs: 2}
	pop := uint64(8*8-3) + 20*16 + 25 + 17
	lsize := uint64(8*8-3+20*16+25)*rs + 10*512 + 5*4096 + 2*rs
	s := NewStrata(plan, sizes, oneRecord, records, dsize, pop, lsize)
	if s == nil {
		t.Fatal("no strata")
	}
	want := []Stratum{
		{Cap: 1, MaxLSize: 512, MaxDSize: 1512, Groups: 10, Records: 10, LSize: 5120},
		{Cap: 1, MaxLSize: 4096, MaxDSize: 5096, Groups: 5, Records: 5, LSize: 5 * 4096},
		{Cap: 1, MaxLSize: rs, MaxDSize: rs + 1000, Groups: 2 + 25, Records: 27, LSize: 27 * rs},
		{Cap: 8, MaxLSize: rs, MaxDSize: rs + 1000, Groups: 8, Records: 61, LSize: 61 * rs},
		{Cap: 20, MaxLSize: rs, MaxDSize: rs + 1000, Groups: 16, Records: 320, LSize: 320 * rs},
	}
	if len(s.List) != len(want) {
		t.Fatalf("strata %+v, want %+v", s.List, want)
	}
	for i := range want {
		if s.List[i] != want[i] {
			t.Errorf("stratum %d: %+v, want %+v", i, s.List[i], want[i])
		}
	}
	for _, c := range []struct {
		what          string
		size, records uint64
		path          string
		lsize         uint64
		want          int
	}{
		{"a clone's record", 1 << 20, 8, "", rs, 3},
		{"one of the 20 files' records", 2 << 20, 16, "", rs, 4},
		{"a file of a size of its own", 3<<20 + 5, 25, "", rs, 2},
		{"a file of one record of 4K", 4000, 1, "a/b", 4096, 1},
		{"a file of one record of 512 B", 300, 1, "a/c", 512, 0},
	} {
		for _, blkid := range []uint64{0, c.records - 1} {
			g := plan.TableGroup(plan.FileKey(c.path, c.size, c.records), blkid, c.records)
			if got := s.Of(g, c.lsize); got != c.want {
				t.Errorf("%s, record %d: stratum %d, want %d", c.what, blkid, got, c.want)
			}
		}
	}
	// The records of the files of one size share their record index's
	// group; other sizes' do not.
	k1, k2 := plan.FileKey("x", 1<<20, 8), plan.FileKey("y", 1<<20, 8)
	if plan.TableGroup(k1, 3, 8) != plan.TableGroup(k2, 3, 8) || plan.TableGroup(k1, 3, 8) == plan.TableGroup(k1, 4, 8) ||
		plan.TableGroup(k1, 3, 8) == plan.TableGroup(plan.FileKey("x", 2<<20, 16), 3, 16) {
		t.Error("table groups: not one a record index of the files of one size")
	}
	// Counts that do not place every record (one shard's): no strata.
	for _, c := range []struct {
		what       string
		pop, lsize uint64
		sizes      map[uint64]SizeCount
	}{
		{"a record more", pop + 1, lsize + rs, sizes},
		{"LSIZE otherwise", pop, lsize + 512, sizes},
		{"holes of a size no file counted", pop, lsize, map[uint64]SizeCount{1 << 20: {Files: 8, Holes: 3}, 2 << 20: {Files: 20}, 3<<20 + 5: {Files: 1}, 5 << 20: {Holes: 2}}},
	} {
		if s := NewStrata(plan, c.sizes, oneRecord, records, dsize, c.pop, c.lsize); s != nil {
			t.Errorf("%s: strata %+v, want none", c.what, s.List)
		}
	}
	var none *Strata
	if none.Of(12345, 4096) != 0 {
		t.Error("nil strata: not one stratum")
	}
}
