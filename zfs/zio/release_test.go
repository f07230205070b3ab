package zio

import "testing"

func releasePolicy(t *testing.T, release string, ashift int) *Policy {
	t.Helper()
	rel, err := LookupRelease(release)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDisk(ashift)
	if err != nil {
		t.Fatal(err)
	}
	return &Policy{Release: rel, RecordSize: 128 << 10, Compression: LZ4, Copies: 1, Vdev: d}
}

// The table of zfs-semantics §4.3 ("Practical effect of P6"): the PSIZE of
// one block, given its compressed size c, under each band. 0 = stored
// uncompressed, -1 = embedded.
func TestBandsWorkedExamples(t *testing.T) {
	t.Parallel()
	type row struct {
		name       string
		lsize, c   uint64
		ashift     int
		p1, p2, p3 int64 // P3 stands for P3–P5
		p6         int64
	}
	rows := []row{
		{"128K c=60000", 131072, 60000, 12, 60416, 60416, 61440, 61440},
		{"128K c=116000", 131072, 116000, 12, 0, 0, 0, 0},
		{"5000-byte file ashift 9", 5120, 4400, 9, 0, 4608, 4608, 0},
		{"5000-byte file ashift 12", 5120, 4400, 12, 0, 4608, 0, 0},
		{"4.5K file ashift 12", 4608, 3000, 12, 3072, 3072, 4096, 0},
		{"9216 ashift 12", 9216, 6000, 12, 6144, 6144, 8192, 0},
		{"512 c=60", 512, 60, 12, 0, -1, -1, -1},
		{"4K ashift 12", 4096, 3000, 12, 3072, 3072, 0, 0},
	}
	for _, r := range rows {
		for _, rel := range []struct {
			name string
			want int64
		}{{"0.6.3", r.p1}, {"0.6.4", r.p2}, {"0.6.5", r.p3}, {"0.7.13", r.p3}, {"2.0", r.p3}, {"2.1.11", r.p3},
			{"2.2", r.p3}, {"2.3.0", r.p6}, {"2.3.2", r.p6}, {"2.4.4", r.p6}} {
			p := releasePolicy(t, rel.name, r.ashift)
			d := p.MaxCompressedSize(r.lsize)
			b := p.Outcome(r.lsize, r.c, d > 0 && r.c <= d)
			var got int64
			switch {
			case b.Kind == Embedded:
				got = -1
			case b.Compression == Off:
				if b.PSize != r.lsize {
					t.Errorf("%s, %s: uncompressed with PSIZE %d", r.name, rel.name, b.PSize)
				}
			default:
				got = int64(b.PSize)
			}
			if got != rel.want {
				t.Errorf("%s under %s (band P%d, D=%d): PSIZE %d, want %d", r.name, rel.name, p.Release.Band, d, got, rel.want)
			}
		}
	}
}

// P1 (0.6.0-0.6.3) never tries a 512-byte block: its capacity rounds to 0.
func TestP1SmallBlock(t *testing.T) {
	t.Parallel()
	if d := releasePolicy(t, "0.6.2", 9).MaxCompressedSize(512); d != 0 {
		t.Errorf("P1 capacity of a 512-byte block = %d, want 0", d)
	}
}

func TestLookupRelease(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0.6.0": "0.6.0", "0.6.3": "0.6.1", "0.6.1": "0.6.1", "0.6.4": "0.6.4", "0.6.5.11": "0.6.5", "0.6": "0.6.5",
		"0.7.13": "0.7", "0.8.6": "0.7", "2.0.7": "2.0", "2.1": "2.1", "2.1.11": "2.1", "2.2.0": "2.2",
		"2.3.0": "2.3.0", "2.3.1": "2.3.0", "2.3.2": "2.3.2", "2.3.3": "2.3.3", "2.3.4": "2.3.4", "2.3.9": "2.3.4", "2.3": "2.3.4", "2.4.0": "2.4", "2.4": "2.4", "2.4.4": "2.4",
		"latest": "2.4", "zfs-2.1.11": "2.1",
	} {
		r, err := LookupRelease(in)
		if err != nil || r.Name != want {
			t.Errorf("LookupRelease(%q) = %v, %v; want row %s", in, r, err, want)
		}
	}
	for _, bad := range []string{"0.5.11", "2.5.0", "3", "two", "2.1.x", "1.0", "0.6.5.12", "0.7.99", "2.1.0.5",
		"2.1.17", "2.2.12", "0.8.7", "0.6.6", "2.4.5"} {
		if _, err := LookupRelease(bad); err == nil {
			t.Errorf("LookupRelease(%q) accepted", bad)
		}
	}
}

// The matrix columns of zfs-semantics §0.1 that are not about PSIZE.
func TestReleaseMatrix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rel                                    string
		on, def                                Compression
		embed, embedDedup, zeroHole, zstd, eab bool
		bytes                                  bool
		maxrs                                  uint32
	}{
		{"0.6.2", LZJB, Off, false, false, false, false, false, false, 128 << 10},
		{"0.6.4", LZJB, Off, true, false, false, false, false, false, 128 << 10},
		{"0.6.5", LZ4, Off, true, false, false, false, false, false, 1 << 20},
		{"0.7.0", LZ4, Off, true, false, false, false, false, true, 1 << 20},
		{"2.0.0", LZ4, Off, true, false, false, true, false, true, 1 << 20},
		{"2.1.11", LZ4, Off, true, false, false, true, false, true, 1 << 20},
		{"2.2.0", LZ4, LZ4, true, false, false, true, true, true, 16 << 20},
		{"2.3.0", LZ4, LZ4, true, false, false, true, true, true, 16 << 20},
		{"2.3.2", LZ4, LZ4, true, true, false, true, true, true, 16 << 20},
		{"2.4.0", LZ4, LZ4, true, true, true, true, true, true, 16 << 20},
	} {
		r, err := LookupRelease(c.rel)
		if err != nil {
			t.Fatal(err)
		}
		if r.OnMeans != c.on || r.DefaultCompression != c.def || r.Embed != c.embed || r.EmbedWithDedup != c.embedDedup ||
			r.ZeroHoleWithDedup != c.zeroHole || r.Zstd != c.zstd || r.ZstdEarlyAbort != c.eab ||
			r.BytesSuffix != c.bytes || r.MaxRecordSize != c.maxrs {
			t.Errorf("release %s: row %+v does not match the matrix", c.rel, *r)
		}
	}
}

// Zero blocks with compression=off: stored unless dedup=on on 2.3.3+.
func TestZeroIsHole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rel   string
		comp  Compression
		dedup bool
		want  bool
	}{
		{"2.3.2", Off, true, false}, {"2.4", Off, true, true}, {"2.4", Off, false, false},
		{"2.1", LZ4, false, true}, {"0.6.2", LZJB, false, true},
	} {
		p := releasePolicy(t, c.rel, 12)
		p.Compression, p.Dedup = c.comp, c.dedup
		if got := p.ZeroIsHole(); got != c.want {
			t.Errorf("%s compression=%v dedup=%v: ZeroIsHole %v, want %v", c.rel, c.comp, c.dedup, got, c.want)
		}
	}
}

func TestParseCompression(t *testing.T) {
	t.Parallel()
	r232, _ := LookupRelease("2.3.2")
	r064, _ := LookupRelease("0.6.4")
	r18, _ := LookupRelease("0.7")
	for _, c := range []struct {
		rel   *Release
		in    string
		comp  Compression
		level int
	}{
		{r232, "on", LZ4, 0}, {r064, "on", LZJB, 0}, {r232, "gzip", Gzip1 + 5, 0}, {r232, "gzip-1", Gzip1, 0},
		{r232, "gzip-9", Gzip9, 0}, {r232, "zstd", Zstd, 3}, {r232, "zstd-19", Zstd, 19},
		{r232, "zstd-fast", Zstd, -1}, {r232, "zstd-fast-1000", Zstd, -1000}, {r232, "ZLE", ZLE, 0},
		{r232, "lzjb", LZJB, 0}, {r232, "off", Off, 0},
	} {
		comp, level, err := ParseCompression(c.in, c.rel)
		if err != nil || comp != c.comp || level != c.level {
			t.Errorf("ParseCompression(%q, %s) = %v, %d, %v; want %v, %d", c.in, c.rel.Name, comp, level, err, c.comp, c.level)
		}
	}
	for _, bad := range []string{"gzip-0", "gzip-10", "zstd-20", "zstd-fast-11", "zstd-fast-0", "snappy", ""} {
		if _, _, err := ParseCompression(bad, r232); err == nil {
			t.Errorf("ParseCompression(%q) accepted", bad)
		}
	}
	if _, _, err := ParseCompression("zstd", r18); err == nil {
		t.Error("zstd accepted on 0.7")
	}
}

func TestResolveRelease(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"2.1": "2.1.16", "0.6": "0.6.5.11", "2": "2.4.4", "latest": "2.4.4",
		"2.3": "2.3.9", "0.6.4": "0.6.4.2", "2.3.2": "2.3.2", "0.7": "0.7.13"} {
		_, got, err := ResolveRelease(in)
		if err != nil || got != want {
			t.Errorf("ResolveRelease(%q) = %q, %v; want %s", in, got, err, want)
		}
	}
	r, _ := LookupRelease("0.6.0")
	if _, _, err := ParseCompression("lz4", r); err == nil {
		t.Error("lz4 accepted on 0.6.0")
	}
}

func TestVersionLess(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want bool
	}{{"0.6.5.11", "0.7.0", true}, {"0.7.0", "0.7.0", false}, {"2.1.16", "2.2.0", true}, {"2.2.0", "2.1.16", false}, {"2.2", "2.2.0", false}} {
		if got := VersionLess(c.a, c.b); got != c.want {
			t.Errorf("VersionLess(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
