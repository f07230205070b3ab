package model

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/zio"
)

func testModel(t *testing.T) (Settings, Model, *zio.Policy) {
	t.Helper()
	st := Settings{Release: "2.1", RecordSize: 1 << 20, Compression: "zstd-fast-5", Copies: 2, Dedup: "on",
		Vdevs: []string{"raidz2 6"}, Ashift: 12, Sparse: SparseNever, Sample: 4}
	p, err := st.Policy()
	if err != nil {
		t.Fatal(err)
	}
	return st, st.Model(p), p
}

func TestModel(t *testing.T) {
	t.Parallel()
	st, m, p := testModel(t)
	q, err := m.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q, p) {
		t.Errorf("Policy() = %+v, want %+v", q, p)
	}
	if m.Compression != "zstd-fast-5" || m.Pool != "raidz2 6" || m.Release != "2.1.16" || m.Rules != "2.1" || m.Sample != 4 {
		t.Errorf("model %+v", m)
	}
	o := m
	o.Release, o.RecordSize, o.Compression, o.Vdevs, o.Pool = "2.1.11", 128<<10, "lz4", []string{"disk"}, "disk"
	o.Guest = true // a scan of guest disks is not a scan of image files
	d := strings.Join(m.Diff(o), "; ")
	for _, want := range []string{"recordsize: 1M vs 128K", "compression: zstd-fast-5 vs lz4", "vdevs: raidz2 6 vs disk", "guest: false vs true"} {
		if !strings.Contains(d, want) {
			t.Errorf("Diff %q lacks %q", d, want)
		}
	}
	if strings.Contains(d, "release") {
		t.Errorf("releases of one row differ: %q", d)
	}
	o = m
	o.Release, o.Rules = "2.2.0", "2.2"
	if d := m.Diff(o); len(d) != 1 || !strings.Contains(d[0], "release: 2.1.16") {
		t.Errorf("Diff %q", d)
	}
	// "stripe 2" and two disks make the same pool.
	a, b := m, m
	a.Vdevs, a.Pool, b.Vdevs, b.Pool = []string{"stripe 2"}, "2 × disk", []string{"disk", "disk"}, "2 × disk"
	if len(a.Diff(b)) != 0 || a.Equal(b) {
		t.Errorf("stripe 2 vs disk disk: Diff %q, Equal %v", a.Diff(b), a.Equal(b))
	}
	// A zvol scan: the policy's RecordSize is the volblocksize.
	zs := st
	zs.RecordSize, zs.Zvol, zs.VolBlockSize = 0, true, 16<<10
	zp, err := zs.Policy()
	if err != nil {
		t.Fatal(err)
	}
	z := zs.Model(zp)
	if !z.Zvol() || z.RecordSize != 0 || z.VolBlockSize != 16<<10 {
		t.Errorf("zvol model %+v", z)
	}
	if q, err := z.Policy(); err != nil || q.RecordSize != 16<<10 {
		t.Errorf("zvol Policy() = %+v, %v", q, err)
	}
	if d := strings.Join(m.Diff(z), "; "); d != "recordsize: 1M vs none; volblocksize: none vs 16K" {
		t.Errorf("Diff file vs zvol: %q", d)
	}
	bad := m
	bad.Compression = "snappy"
	if _, err := bad.Policy(); err == nil {
		t.Error("bad compression accepted")
	}
	bad = m
	bad.Pool = "disk"
	if _, err := bad.Policy(); err == nil || !strings.Contains(err.Error(), "differently") {
		t.Errorf("model inconsistent with its vdevs: %v", err)
	}
}
