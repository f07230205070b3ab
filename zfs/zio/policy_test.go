package zio

import "testing"

func policy(t *testing.T, ashift int, comp Compression, copies int) *Policy {
	t.Helper()
	d, err := NewDisk(ashift)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := LookupRelease("2.3.2")
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Release: rel, RecordSize: 128 << 10, Compression: comp, Copies: copies, Vdev: d}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// The P6 column of zfs-semantics §4.3: capacity D and the rounded PSIZE.
func TestP6CapacityAndRounding(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		ashift    int
		lsize, c  uint64
		wantD     uint64
		wantPSize uint64 // 0: stored uncompressed (c > D or rounded ≥ LSIZE)
	}{
		{"128K c=60000", 12, 131072, 60000, 114688, 61440},
		{"128K c=116000", 12, 131072, 116000, 114688, 0},
		{"5000-byte file ashift 9", 9, 5120, 4400, 4096, 0},
		{"5000-byte file ashift 12", 12, 5120, 4400, 4096, 0},
		{"4.5K file ashift 12", 12, 4608, 3000, 112, 0},
		{"9216 ashift 12", 12, 9216, 6000, 4096, 0},
		{"4K ashift 12", 12, 4096, 3000, 112, 0},
		{"TV7 lz4 ashift 12", 12, 131072, 66109, 114688, 69632},
	}
	for _, c := range cases {
		p := policy(t, c.ashift, LZ4, 1)
		d := p.MaxCompressedSize(c.lsize)
		if d != c.wantD {
			t.Errorf("%s: D = %d, want %d", c.name, d, c.wantD)
		}
		var psize uint64
		if c.c <= d {
			if r := p.RoundPSize(c.c); r < c.lsize {
				psize = r
			}
		}
		if psize != c.wantPSize {
			t.Errorf("%s: PSIZE = %d, want %d", c.name, psize, c.wantPSize)
		}
	}
}

// zfs-semantics §6.2, single-disk rows.
func TestDSizeDisk(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ashift, copies int
		psize, dsize   uint64
	}{
		{9, 1, 4608, 4608},
		{12, 1, 4608, 8192},
		{12, 2, 131072, 262144},
		{12, 3, 512, 12288},
		{9, 1, 512, 512},
	}
	for _, c := range cases {
		p := policy(t, c.ashift, Off, c.copies)
		if got := p.DSize(c.psize); got != c.dsize {
			t.Errorf("ashift %d copies %d psize %d: DSIZE %d, want %d", c.ashift, c.copies, c.psize, got, c.dsize)
		}
	}
	if r := (Disk{Ashift: 12}).DeflateRatio(); r != 512 {
		t.Errorf("disk deflate ratio %d, want 512", r)
	}
}

// LeastRatio: the least LSIZE/DSIZE of a block of each LSIZE up to the
// largest, uncompressed (TestDSizeDisk's sizes).
func TestLeastRatio(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ashift, copies int
		maxL           uint64
		want           float64
	}{
		{12, 1, 128 << 10, 512.0 / 4096},
		{12, 3, 128 << 10, 512.0 / 12288},
		{9, 1, 128 << 10, 1},
		{12, 1, 512, 512.0 / 4096},
		{12, 1, 100, 0},
	} {
		if got := policy(t, c.ashift, Off, c.copies).LeastRatio(c.maxL); got != c.want {
			t.Errorf("ashift %d copies %d up to %d: %v, want %v", c.ashift, c.copies, c.maxL, got, c.want)
		}
	}
}

// Appendix A, TV1 (100 'A' then zeros, 512 bytes; LZ4 c = 21) is embedded;
// TV4 (lcg(3000) then zeros, 4096 bytes; c = 3040) is stored uncompressed on
// ashift 12; TV7 (lcg(65536) then zeros; c = 66109) gets PSIZE 69632.
func TestWriterAppendixA(t *testing.T) {
	t.Parallel()
	lcg := func(n, l int) []byte {
		b := make([]byte, l)
		x := uint32(1)
		for k := 0; k < n; k++ {
			x = (1103515245*x + 12345) & (1<<31 - 1)
			b[k] = byte(x >> 16)
		}
		return b
	}
	tv1 := make([]byte, 512)
	for i := 0; i < 100; i++ {
		tv1[i] = 'A'
	}
	p := policy(t, 12, LZ4, 1)
	w := NewWriter(p)
	if b := w.Write(tv1); b.Kind != Embedded {
		t.Errorf("TV1: %+v, want embedded", b)
	}
	if b := w.Write(lcg(3000, 4096)); b.Kind != Stored || b.PSize != 4096 || b.Compression != Off {
		t.Errorf("TV4: %+v, want stored uncompressed 4096", b)
	}
	if b := w.Write(lcg(65536, 131072)); b.Kind != Stored || b.PSize != 69632 || b.Compression != LZ4 {
		t.Errorf("TV7: %+v, want lz4 69632", b)
	}
	// With dedup=on Debian's 2.3.2 still embeds (golden lz4-128k-a12-dedup).
	p.Dedup = true
	if b := NewWriter(p).Write(tv1); b.Kind != Embedded {
		t.Errorf("TV1 dedup=on: %+v, want embedded", b)
	}
	// compression=off stores everything as it is.
	if b := NewWriter(policy(t, 12, Off, 1)).Write(tv1); b.Kind != Stored || b.PSize != 512 {
		t.Errorf("TV1 compression=off: %+v", b)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	p := policy(t, 12, LZ4, 1)
	for _, rs := range []uint32{256, 3000, 32 << 20} {
		q := *p
		q.RecordSize = rs
		if q.Validate() == nil {
			t.Errorf("recordsize %d accepted", rs)
		}
	}
	q := *p
	q.Copies = 4
	if q.Validate() == nil {
		t.Error("copies 4 accepted")
	}
	if _, err := NewDisk(8); err == nil {
		t.Error("ashift 8 accepted")
	}
	rel := p.Release
	if _, _, err := ParseCompression("fast", rel); err == nil {
		t.Error("invalid compression accepted")
	}
}
