package model

import (
	"testing"

	"github.com/ddtsim/ddtsim/zfs/zio"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]uint64{"512": 512, "4K": 4096, "4k": 4096, "128K": 131072, "128KB": 131072,
		"128KiB": 131072, "1M": 1 << 20, "16M": 16 << 20, "1G": 1 << 30} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "1.5M", "-1", "12Q", "99999999999999999999"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestParseAndSet(t *testing.T) {
	t.Parallel()
	s, err := Parse(Text{Release: "2.1", Properties: []string{"recsize=1M", "compress=zstd-3", "copies=2", "dedup=sha256,verify"},
		Vdevs: []string{"raidz2 6"}, Ashift: "9", Sparse: "never", Sample: "1/8"})
	if err != nil {
		t.Fatal(err)
	}
	if s.RecordSize != 1<<20 || s.Compression != "zstd-3" || s.Copies != 2 || s.Dedup != "sha256,verify" || s.Ashift != 9 ||
		s.Sample != 8 || s.Sparse.String() != "never" || !s.DedupOn() {
		t.Errorf("Parse: %+v", s)
	}
	p, err := s.Policy()
	if err != nil || p.RecordSize != 1<<20 || p.Copies != 2 || !p.Dedup || p.Version != "2.1.16" {
		t.Fatalf("Policy: %+v, %v", p, err)
	}
	// The model a saved scan keeps gives the same settings back.
	back, err := s.Model(p).Settings()
	if err != nil {
		t.Fatal(err)
	}
	q, err := back.Policy()
	if err != nil || q.RecordSize != p.RecordSize || q.Compression != p.Compression || q.Level != p.Level || q.Release != p.Release {
		t.Errorf("round trip: %+v, %v", q, err)
	}
	for _, c := range []struct{ name, value, want string }{
		{"recordsize", "3K", "-o recordsize=3K: invalid (accepted: a power of two from 512 to 1M, e.g. 4K, 128K, 1M)"},
		{"copies", "4", "-o copies=4: invalid (accepted: 1, 2, 3)"},
		{"dedup", "blake3", "-o dedup=blake3: blake3 does not exist in release 2.1.16 (it came with 2.2.0)"},
		{"atime", "off", `-o atime=off: property "atime" is not modelled (accepted: recordsize, volblocksize, compression, copies, dedup)`},
		// Worded as the other properties (it said `-o invalid compression "lz5"`).
		{"compression", "lz5", "-o compression=lz5: invalid (accepted: " + zio.CompressionValues + ")"},
	} {
		s := Settings{Release: "2.1"}
		if err := s.Set(c.name, c.value); err == nil || err.Error() != c.want {
			t.Errorf("Set(%s, %s) = %v, want %q", c.name, c.value, err, c.want)
		}
	}
	// The release named, not the row of the release table (it said 0.7).
	old := Settings{Release: "0.8"}
	if err := old.Set("compression", "zstd"); err == nil || err.Error() != "-o compression=zstd does not exist in release 0.8.6 (zstd came with 2.0.0)" {
		t.Errorf("zstd on 0.8: %v", err)
	}
	v := Settings{Release: "2.2"}
	if err := v.Set("volblock", "64K"); err != nil || !v.Zvol || v.VolBlockSize != 64<<10 {
		t.Errorf("Set volblocksize: %+v, %v", v, err)
	}
	if p, err := v.Policy(); err != nil || p.RecordSize != 64<<10 {
		t.Errorf("volume policy: %+v, %v", p, err)
	}
	if _, err := (&Settings{Zvol: true, RecordSize: 4096}).Policy(); err == nil {
		t.Error("a recordsize on a volume accepted")
	}
	if _, err := Parse(Text{Properties: []string{"recordsize=4K", "recsize=8K"}}); err == nil || err.Error() != "-o recsize=8K: recordsize given twice (also -o recordsize=4K), as zfs create would refuse" {
		t.Errorf("repeated property: %v", err)
	}
	// Upper case is refused as zfs refuses it; sizes take any case.
	for _, c := range []struct{ prop, want string }{
		{"RECORDSIZE=4K", `-o RECORDSIZE=4K: invalid property "RECORDSIZE": zfs takes property names in lower case (recordsize)`},
		{"compression=LZ4", "-o compression=LZ4: invalid: zfs takes compression values in lower case (lz4)"},
		{"compression=lz4,LZ4", "-o compression=lz4,LZ4: invalid: zfs takes compression values in lower case (lz4)"},
		{"dedup=SHA256,verify", "-o dedup=SHA256,verify: invalid: zfs takes dedup values in lower case (sha256,verify)"},
	} {
		if _, err := Parse(Text{Properties: []string{c.prop}}); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v", c.prop, err)
		}
	}
	if _, err := Parse(Text{Vdevs: []string{"RAIDZ2 6"}}); err == nil || err.Error() != "--vdev RAIDZ2 6: invalid: zpool create takes vdev types in lower case (raidz2 6)" {
		t.Errorf("--vdev RAIDZ2 6: %v", err)
	}
	if s, err := Parse(Text{Properties: []string{"recordsize=16k"}}); err != nil || s.RecordSize != 16<<10 {
		t.Errorf("recordsize=16k: %+v, %v", s, err)
	}
}
