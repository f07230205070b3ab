package zio

import (
	"strings"
	"testing"
)

func mustVdev(t *testing.T, spec string, ashift int) Vdev {
	t.Helper()
	v, n, err := ParseVdev(spec, ashift)
	if err != nil {
		t.Fatalf("ParseVdev(%q, %d): %v", spec, ashift, err)
	}
	if n != 1 && !strings.HasPrefix(spec, "stripe") {
		t.Fatalf("ParseVdev(%q): count %d", spec, n)
	}
	return v
}

// zfs-semantics §6.2 (worked examples, single copy), plus the issue's
// acceptance values: 128K on raidz1 of 4 at ashift 12 is 130944, 4K on
// raidz2 of 6 is 8184.
func TestWorkedExamples(t *testing.T) {
	t.Parallel()
	cases := []struct {
		vdev   string
		ashift int
		psize  uint64
		asize  uint64
		ratio  uint64
		dsize  uint64
	}{
		{"disk", 9, 4608, 4608, 512, 4608},
		{"disk", 12, 4608, 8192, 512, 8192},
		{"raidz1 4", 12, 131072, 180224, 372, 130944},
		{"raidz2 6", 12, 4096, 12288, 341, 8184},
		{"raidz1 4", 12, 4096, 8192, 372, 5952},
		{"raidz2 6", 12, 131072, 196608, 341, 130944},
		{"raidz1 5", 12, 131072, 163840, 409, 130880},
		{"raidz1 4", 9, 512, 1024, 383, 766},
		{"draid1:4d 5", 12, 4096, 20480, 409, 16360},
		// Not in §6.2: the other layouts of the golden cases.
		{"raidz 4", 12, 131072, 180224, 372, 130944},
		{"mirror 2", 12, 4608, 8192, 512, 8192},
		{"mirror 3", 9, 4608, 4608, 512, 4608},
		{"stripe 3", 12, 512, 4096, 512, 4096},
		{"raidz3 8", 12, 131072, 229376, 292, 130816}, // 32 + 3·7 = 53 → 56 sectors
		{"raidz3 8", 12, 4096, 16384, 292, 9344},      // 1 + 3 = 4 sectors
		{"draid2 8", 12, 131072, 196608, 341, 130944}, // 6 rows of 6+2
		{"draid2 8", 12, 4096, 32768, 341, 21824},     // one row of 6+2
		{"draid2:4d:1s:11c", 12, 16384, 24576, 341, 16368},
	}
	for _, c := range cases {
		v := mustVdev(t, c.vdev, c.ashift)
		if got := v.ASize(c.psize); got != c.asize {
			t.Errorf("%s ashift %d: ASIZE(%d) = %d, want %d", c.vdev, c.ashift, c.psize, got, c.asize)
		}
		if got := v.DeflateRatio(); got != c.ratio {
			t.Errorf("%s ashift %d: deflate ratio %d, want %d", c.vdev, c.ashift, got, c.ratio)
		}
		p := layoutPolicy(t, 1, c.ashift, c.vdev)
		if got := p.DSize(c.psize); got != c.dsize {
			t.Errorf("%s ashift %d: DSIZE(%d) = %d, want %d", c.vdev, c.ashift, c.psize, got, c.dsize)
		}
	}
}

// layoutPolicy is a 2.3.2 lz4 policy on the pool made of specs.
func layoutPolicy(t *testing.T, copies, ashift int, specs ...string) *Policy {
	t.Helper()
	pool, err := NewPool(specs, ashift)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := LookupRelease("2.3.2")
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Release: rel, RecordSize: 128 << 10, Compression: LZ4, Copies: copies, Vdev: pool}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// DSIZE and the raw size sum over copies; RawSize inverts sums of DSize.
func TestCopiesAndRawSize(t *testing.T) {
	t.Parallel()
	specs := []string{"disk", "mirror 2", "raidz1 4", "raidz2 6", "raidz3 8", "draid2 8", "draid3:5d:2s:20c"}
	for _, spec := range specs {
		for copies := 1; copies <= 3; copies++ {
			p := layoutPolicy(t, copies, 12, spec)
			one := layoutPolicy(t, 1, 12, spec)
			var dsum, asum uint64
			for _, psize := range []uint64{512, 4096, 8192, 12288, 61440, 69632, 98304, 131072, 1 << 20} {
				d, a := p.DSize(psize), p.ASize(psize)
				if d != uint64(copies)*one.DSize(psize) || a != uint64(copies)*one.ASize(psize) {
					t.Errorf("%s copies=%d psize %d: DSIZE %d ASIZE %d, not %d× one copy's %d %d",
						spec, copies, psize, d, a, copies, one.DSize(psize), one.ASize(psize))
				}
				if got := p.RawSize(d); got != a {
					t.Errorf("%s copies=%d psize %d: RawSize(%d) = %d, want ASIZE %d", spec, copies, psize, d, got, a)
				}
				dsum += 7 * d
				asum += 7 * a
			}
			if got := p.RawSize(dsum); got != asum {
				t.Errorf("%s copies=%d: RawSize of a sum = %d, want %d", spec, copies, got, asum)
			}
		}
	}
	// §6.2's last row: 128K with copies=2 on one disk at ashift 12.
	if d := layoutPolicy(t, 2, 12).DSize(131072); d != 262144 {
		t.Errorf("copies=2 128K: DSIZE %d, want 262144", d)
	}
}

// PSIZE rounding on dRAID uses its allocation unit (data disks × sector):
// zfs-semantics §6.1, verified on the golden case lz4-draid2x8-a12.
func TestDRAIDRounding(t *testing.T) {
	t.Parallel()
	p := layoutPolicy(t, 1, 12, "draid2 8")
	if m := p.Vdev.MinAlloc(); m != 24576 {
		t.Errorf("min alloc %d, want 24576", m)
	}
	if d := p.MaxCompressedSize(131072); d != 98304 {
		t.Errorf("128K capacity %d, want 98304", d)
	}
	if d := p.MaxCompressedSize(16384); d != EmbeddedMax {
		t.Errorf("16K capacity %d, want %d", d, EmbeddedMax)
	}
	for c, want := range map[uint64]uint64{1000: 24576, 24576: 24576, 24577: 49152, 70000: 73728} {
		if got := p.RoundPSize(c); got != want {
			t.Errorf("RoundPSize(%d) = %d, want %d", c, got, want)
		}
	}
}

// spa_min_alloc is the minimum and spa_gcd_alloc the gcd of the top-level
// vdevs' minimum allocations (zfs-semantics §4.3); ASIZE follows the first.
func TestPoolAllocation(t *testing.T) {
	t.Parallel()
	d6 := DRAID{Parity: 2, Data: 6, Children: 8, Ashift: 12} // 24576
	d4 := DRAID{Parity: 1, Data: 4, Children: 5, Ashift: 12} // 16384
	cases := []struct {
		pool         *Pool
		min, gcd     uint64
		ratio        uint64
		mixed        bool
		top          int
		name         string
		capacity128K uint64 // MaxCompressedSize(128K) under 2.3.2
		round20000   uint64 // RoundPSize(20000)
		round10000   uint64 // RoundPSize(10000)
		asize4K      uint64 // ASIZE of a 4K block
	}{
		{pool: PoolOf(d6, d4), min: 16384, gcd: 8192, ratio: 341, mixed: true, top: 2, name: "draid2:6d:8c:0s + draid1:4d:5c:0s",
			capacity128K: 114688, round20000: 24576, round10000: 16384, asize4K: 32768},
		{pool: PoolOf(d6, Disk{Ashift: 12}), min: 4096, gcd: 4096, ratio: 341, mixed: true, top: 2, name: "draid2:6d:8c:0s + disk",
			capacity128K: 114688, round20000: 20480, round10000: 12288, asize4K: 32768},
		{pool: PoolOf(Disk{Ashift: 12}, Disk{Ashift: 9}), min: 512, gcd: 512, ratio: 512, mixed: true, top: 2, name: "disk + disk",
			capacity128K: 114688, round20000: 20480, round10000: 10240, asize4K: 4096},
		{pool: PoolOf(Disk{Ashift: 12}, Mirror{Children: 2, Ashift: 12}), min: 4096, gcd: 4096, ratio: 512, mixed: false, top: 2, name: "disk + mirror 2",
			capacity128K: 114688, round20000: 20480, round10000: 12288, asize4K: 4096},
	}
	rel, err := LookupRelease("2.3.2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		pl := c.pool
		if pl.MinAlloc() != c.min || pl.GCDAlloc() != c.gcd || GCDAlloc(pl) != c.gcd || pl.DeflateRatio() != c.ratio ||
			pl.Mixed() != c.mixed || pl.TopLevel() != c.top || pl.String() != c.name {
			t.Errorf("%s: min %d gcd %d ratio %d mixed %v top %d name %q; want %d %d %d %v %d %q", c.name,
				pl.MinAlloc(), pl.GCDAlloc(), pl.DeflateRatio(), pl.Mixed(), pl.TopLevel(), pl.String(),
				c.min, c.gcd, c.ratio, c.mixed, c.top, c.name)
		}
		p := &Policy{Release: rel, RecordSize: 128 << 10, Compression: LZ4, Copies: 1, Vdev: pl}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := p.MaxCompressedSize(131072); got != c.capacity128K {
			t.Errorf("%s: 128K capacity %d, want %d", c.name, got, c.capacity128K)
		}
		if got := p.RoundPSize(20000); got != c.round20000 {
			t.Errorf("%s: RoundPSize(20000) = %d, want %d", c.name, got, c.round20000)
		}
		if got := p.RoundPSize(10000); got != c.round10000 {
			t.Errorf("%s: RoundPSize(10000) = %d, want %d", c.name, got, c.round10000)
		}
		if got := pl.ASize(4096); got != c.asize4K {
			t.Errorf("%s: ASIZE(4K) = %d, want %d (the first vdev's)", c.name, got, c.asize4K)
		}
	}
}

func TestNewPool(t *testing.T) {
	t.Parallel()
	cases := []struct {
		specs []string
		name  string
		top   int
		mixed bool
	}{
		{nil, "disk", 1, false},
		{[]string{"stripe 1"}, "disk", 1, false},
		{[]string{"stripe 3"}, "3 × disk", 3, false},
		{[]string{"mirror 2", "mirror 2"}, "2 × mirror 2", 2, false},
		{[]string{"raidz2 8"}, "raidz2 8", 1, false},
		{[]string{"RAIDZ2 8"}, "raidz2 8", 1, false},
		{[]string{"raidz 4"}, "raidz1 4", 1, false},
		{[]string{"draid2 8"}, "draid2:6d:8c:0s", 1, false},
		{[]string{"draid2:4d:1s:11c"}, "draid2:4d:11c:1s", 1, false},
		{[]string{"draid2:4D:1S:11C 11"}, "draid2:4d:11c:1s", 1, false},
		{[]string{"draid 2"}, "draid1:1d:2c:0s", 1, false},
		{[]string{"draid3 20"}, "draid3:8d:20c:0s", 1, false},
		{[]string{"draid1:4d:5c", "draid1:4d:1s:6c"}, "draid1:4d:5c:0s + draid1:4d:6c:1s", 2, false},
		{[]string{"raidz2 8", "mirror 2"}, "raidz2 8 + mirror 2", 2, true},
		{[]string{"  mirror   3 "}, "mirror 3", 1, false},
	}
	for _, c := range cases {
		p, err := NewPool(c.specs, 12)
		if err != nil {
			t.Errorf("%q: %v", c.specs, err)
			continue
		}
		if p.String() != c.name || p.TopLevel() != c.top || p.Mixed() != c.mixed {
			t.Errorf("%q: %q, %d top-level, mixed %v; want %q, %d, %v", c.specs, p.String(), p.TopLevel(), p.Mixed(), c.name, c.top, c.mixed)
		}
	}
}

// Invalid layouts are errors that say what is accepted (zpool create's
// rules: cmd/zpool/zpool_vdev.c: is_grouping(), draid_config_by_type()).
func TestParseVdevErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec string
		want string
	}{
		{"", "accepted: disk, stripe N, mirror N"},
		{"raid5 4", "accepted: disk, stripe N, mirror N"},
		{"mirror 1", "mirror needs at least 2 disks"},
		{"mirror", "give the number of disks"},
		{"mirror two", "not a number of disks"},
		{"mirror 0", "not a number of disks"},
		{"stripe", "give the number of disks"},
		{"disk 3", "stripe 3"},
		{"raidz 1", "raidz1 needs 2 to 255 disks"},
		{"raidz2 2", "raidz2 needs 3 to 255 disks"},
		{"raidz3 3", "raidz3 needs 4 to 255 disks"},
		{"raidz2 256", "raidz2 needs 3 to 255 disks"},
		{"raidz4 8", "accepted: raidz, raidz1, raidz2, raidz3"},
		{"raidz0 8", "accepted: raidz, raidz1, raidz2, raidz3"},
		{"raidz02 8", "accepted: raidz, raidz1, raidz2, raidz3"},
		{"raidz2", "give the number of disks"},
		{"raidz2 6 7", "accepted"},
		{"draid2", "give the number of children"},
		{"draid4 8", "accepted: draid, draid1, draid2, draid3"},
		{"draid2 2", "draid2 needs 3 to 255 disks"},
		{"draid2:11c 10", "11 children required by :11c but 10 given"},
		{"draid3:8d 10", "8 data disks per group is too many"},
		{"draid2:2s 4", "leave none of the 4 disks for data"},
		{"draid1:1d:3c:2s", "2 spares and parity 1 leave none of the 3 children for data"},
		{"draid:0d 5", "at least 1 data disk"},
		{"draid:101s:200c", "spares 101 (accepted: 0 to 100)"},
		{"draid2:5x 8", "not <number><d|c|s>"},
		{"draid2:d 8", "not <number><d|c|s>"},
		{"draid2::8c", "not <number><d|c|s>"},
		{"draid2:4d:4d 8", "given twice"},
		{"draid2 300", "draid2 needs 3 to 255 disks"},
	}
	for _, c := range cases {
		_, _, err := ParseVdev(c.spec, 12)
		if err == nil {
			t.Errorf("%q accepted", c.spec)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %q does not say %q", c.spec, err, c.want)
		}
	}
	if _, _, err := ParseVdev("raidz2 6", 8); err == nil || !strings.Contains(err.Error(), "accepted: 9 to 16") {
		t.Errorf("ashift 8: %v", err)
	}
	if _, err := NewPool([]string{"mirror 2", "raidz2 2"}, 12); err == nil {
		t.Error("NewPool accepted raidz2 2")
	}
}

// dRAID exists from 2.1.0 on.
func TestDRAIDNeedsRelease21(t *testing.T) {
	t.Parallel()
	pool, err := NewPool([]string{"draid2 8"}, 12)
	if err != nil {
		t.Fatal(err)
	}
	for name, ok := range map[string]bool{"2.0.7": false, "0.7": false, "2.1.11": true, "2.3.2": true} {
		rel, err := LookupRelease(name)
		if err != nil {
			t.Fatal(err)
		}
		p := &Policy{Release: rel, RecordSize: 128 << 10, Compression: LZ4, Copies: 1, Vdev: pool}
		if err := p.Validate(); (err == nil) != ok {
			t.Errorf("release %s: Validate() = %v", name, err)
		}
	}
}
