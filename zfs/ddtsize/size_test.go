package ddtsize_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// shapesOf is the block shape of each class from a parsed zdb histogram,
// as the tool derives it from its own (Classes, ShapeOf):
// the refcnt-1 row and the others.
func shapesOf(tab *zdb.HistogramTable) (unique, dup ddtsize.BlockShape) {
	var u, d ddt.Stat
	for _, r := range tab.Rows {
		st := ddt.Stat{Blocks: uint64(r.Allocated.Blocks.Mid()), LSize: uint64(r.Allocated.LSize.Mid()), PSize: uint64(r.Allocated.PSize.Mid())}
		if r.Bucket == 0 {
			u = st
			continue
		}
		d.Add(st)
	}
	return ddtsize.ShapeOf(u), ddtsize.ShapeOf(d)
}

// TestDDTSizeGolden checks the model against what real OpenZFS printed for
// the golden dedup=on cases: zdb -DD's per-object dspace (on disk) and
// mspace (in core), summed, must be within 10%, on disk and in core. The DDT's entries per
// class and the data size come from the same output, the release, layout
// and copies from the case.
func TestDDTSizeGolden(t *testing.T) {
	t.Parallel()
	cases, err := golden.Cases()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		text, err := os.ReadFile(filepath.Join(c.Dir, "zdb-DD.txt"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		p := zdb.ParseString(string(text))
		var unique, dup uint64
		for _, o := range p.Objects {
			switch o.Class {
			case "unique":
				unique += o.Entries
			case "duplicate":
				dup += o.Entries
			default:
				t.Fatalf("%s: unexpected class %q", c.Name, o.Class)
			}
		}
		_, disk, core := p.DDTTotals()
		tab := p.Primary()
		if len(p.Objects) == 0 || tab == nil || tab.Total == nil {
			t.Fatalf("%s: zdb -DD text not understood", c.Name)
		}
		copies := 1
		if v, ok := c.Props["copies"]; ok {
			copies, _ = strconv.Atoi(v)
		}
		rel, err := zio.LookupRelease(c.Release)
		if err != nil {
			t.Fatal(err)
		}
		pool, err := zio.NewPool([]string{c.Vdevs}, c.Ashift)
		if err != nil {
			t.Fatal(err)
		}
		us, ds := shapesOf(tab)
		s := ddtsize.Estimate(unique, dup, ddtsize.Params{Release: rel, Vdev: pool, Copies: copies,
			DataBytes: uint64(tab.Total.Allocated.DSize.Mid()), Unique: us, Duplicate: ds})
		if s.Entries != unique+dup || len(s.Objects) != len(p.Objects) {
			t.Errorf("%s: model has %d entries in %d objects, zdb %d in %d", c.Name, s.Entries, len(s.Objects), unique+dup, len(p.Objects))
		}
		wantFormat := ddtsize.FormatLegacy
		if len(p.Headers) > 0 && p.Headers[0].Kind == "FDT" {
			wantFormat = ddtsize.FormatFDT
		}
		if s.Format != wantFormat {
			t.Errorf("%s: format %s, zdb says %s", c.Name, s.Format, wantFormat)
		}
		de, ce := disk.Outside(s.OnDisk), core.Outside(s.InCore)
		t.Logf("%s (%s, %d+%d entries): on disk %d vs real %d..%d (%+.1f%%), in core %d vs %d..%d (%+.1f%%)",
			c.Name, c.Release, unique, dup, s.OnDisk, disk.Lo, disk.Hi, 100*de, s.InCore, core.Lo, core.Hi, 100*ce)
		// Both within 10% (issue 7's acceptance). Measured: 2.3.2 on disk
		// +3.5% and +1.7%, 2.1.11 −0.9%; in core −0.6% to −0.9%.
		if math.Abs(de) > 0.10 || math.Abs(ce) > 0.10 {
			t.Errorf("%s: DDT estimate off by more than 10%%: on disk %+.1f%%, in core %+.1f%%", c.Name, 100*de, 100*ce)
		}

		// zpool status -D, taken right after the copy: on 2.3 its in-core
		// figure is the dedup log's (every entry still waiting there).
		st, err := os.ReadFile(filepath.Join(c.Dir, "zpool-status-D.txt"))
		if err != nil {
			continue
		}
		for _, sum := range zdb.ParseString(string(st)).Summaries {
			if s.LogInCore > 0 && c.Zvol != "" {
				// The zvol cases wrote each volume with dd conv=fsync,
				// one after another: many txgs passed and the log had
				// been flushed to the table when zpool status -D ran,
				// so it prints the table's in-core size.
				if e := sum.InCore.Total.Outside(s.InCore); math.Abs(e) > 0.10 {
					t.Errorf("%s: zpool status -D in core %s, model's table %d (%+.1f%%)", c.Name, sum.InCore.Printed, s.InCore, 100*e)
				}
				continue
			}
			if s.LogInCore > 0 {
				if !sum.InCore.Printed.Contains(s.LogInCore) {
					t.Errorf("%s: zpool status -D in core %s, model's log %d", c.Name, sum.InCore.Printed, s.LogInCore)
				}
				continue
			}
			// 2.1: stale per-entry averages (refreshed at the DDT's last
			// sync, before its blocks were written); logged, not checked.
			t.Logf("%s: zpool status -D says %s on disk, %s in core: %+.0f%%, %+.0f%% from the model (a stale snapshot)",
				c.Name, sum.OnDisk.Printed, sum.InCore.Printed, 100*sum.OnDisk.Total.Outside(s.OnDisk), 100*sum.InCore.Total.Outside(s.InCore))
		}
	}
	if n < 3 {
		t.Fatalf("found %d golden cases with zdb -DD, want at least 3", n)
	}
}

// TestDDTSizeSmallTables checks tables of one and eight entries, whose
// sizes are exact: the oracle runs of the project (shared oracle examples:
// 1 MiB written twice over 17 blocks; real OpenZFS 2.3.2 and 2.1.11,
// zdb -DD) printed these per object.
func TestDDTSizeSmallTables(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		release, vdev          string
		disk, core             uint64 // per object (each holds 1 or 8 entries)
		wantFormat             string
		uniqueDisk, uniqueCore uint64
	}{
		{"2.3.2", "disk", 36864, 65536, ddtsize.FormatFDT, 36864, 65536},
		{"2.3.2", "raidz1 4", 53760, 65536, ddtsize.FormatFDT, 53760, 65536},
		{"2.1.11", "disk", 1536 * 8, 1024 * 8, ddtsize.FormatLegacy, 12288, 8192},
		{"2.1.11", "raidz1 4", 2240 * 8, 1024 * 8, ddtsize.FormatLegacy, 17920, 8192},
	} {
		rel, _ := zio.LookupRelease(c.release)
		pool, err := zio.NewPool([]string{c.vdev}, 12)
		if err != nil {
			t.Fatal(err)
		}
		s := ddtsize.Estimate(1, 8, ddtsize.Params{Release: rel, Vdev: pool, Copies: 1, DataBytes: 1 << 20})
		if s.Format != c.wantFormat || len(s.Objects) != 2 {
			t.Fatalf("%s %s: %+v", c.release, c.vdev, s)
		}
		dup, uniq := s.Objects[0], s.Objects[1]
		if dup.Name != "DDT-sha256-zap-duplicate" || uniq.Name != "DDT-sha256-zap-unique" {
			t.Fatalf("objects %s, %s", dup.Name, uniq.Name)
		}
		if dup.OnDisk != c.disk || dup.InCore != c.core || uniq.OnDisk != c.uniqueDisk || uniq.InCore != c.uniqueCore {
			t.Errorf("%s %s: duplicate %d/%d, unique %d/%d bytes on disk/in core; zdb -DD %d/%d, %d/%d",
				c.release, c.vdev, dup.OnDisk, dup.InCore, uniq.OnDisk, uniq.InCore, c.disk, c.core, c.uniqueDisk, c.uniqueCore)
		}
		if s.RuleOfThumb != 9*320 {
			t.Errorf("rule of thumb %d", s.RuleOfThumb)
		}
	}
}

// TestDDTSizeLargeTable checks a large table against published zdb -D
// output of a 2.2-era pool (a blake3 DDT, 32 KiB legacy leaves: 29317269
// unique entries "size 274 on disk, 146 in core", 3655384 duplicate "275
// on disk, 147 in core"; layout not published, taken as one disk, ashift
// 12): the per-entry figures within 10%.
func TestDDTSizeLargeTable(t *testing.T) {
	t.Parallel()
	rel, _ := zio.LookupRelease("2.2")
	pool, _ := zio.NewPool(nil, 12)
	s := ddtsize.Estimate(29317269, 3655384, ddtsize.Params{Release: rel, Vdev: pool, Copies: 1})
	want := map[string][2]float64{"DDT-sha256-zap-unique": {274, 146}, "DDT-sha256-zap-duplicate": {275, 147}}
	for _, o := range s.Objects {
		w := want[o.Name]
		disk, core := float64(o.OnDisk)/float64(o.Entries), float64(o.InCore)/float64(o.Entries)
		t.Logf("%s: %.0f B/entry on disk (published %.0f), %.0f in core (%.0f)", o.Name, disk, w[0], core, w[1])
		if math.Abs(disk/w[0]-1) > 0.10 || math.Abs(core/w[1]-1) > 0.10 {
			t.Errorf("%s: %.0f/%.0f B/entry on disk/in core, published %.0f/%.0f", o.Name, disk, core, w[0], w[1])
		}
	}
	if s.Basis.Fill < 0.5 || s.Basis.Fill > 1 {
		t.Errorf("fill %.2f", s.Basis.Fill)
	}
}

// TestDDTSizeBasis checks the per-entry figures of zfs-semantics §2.6.
func TestDDTSizeBasis(t *testing.T) {
	t.Parallel()
	pool, _ := zio.NewPool(nil, 12)
	for _, c := range []struct {
		release            string
		copies             int
		chunks, cap, bsize int
		format             string
		valueMin, valueMax int
	}{
		{"2.1.11", 1, 4, 39, 4096, ddtsize.FormatLegacy, 14, 21},
		{"2.1.11", 2, 5, 31, 4096, ddtsize.FormatLegacy, 22, 42},
		{"2.2", 1, 4, 319, 32768, ddtsize.FormatLegacy, 14, 21},
		{"2.3.2", 1, 7, 182, 32768, ddtsize.FormatFDT, 73, 73},
		{"2.3.2", 3, 7, 182, 32768, ddtsize.FormatFDT, 73, 73},
	} {
		rel, _ := zio.LookupRelease(c.release)
		s := ddtsize.Estimate(1000, 0, ddtsize.Params{Release: rel, Vdev: pool, Copies: c.copies})
		b := s.Basis
		if s.Format != c.format || b.EntryChunks != c.chunks || b.LeafCapacity != c.cap || b.BlockSize != uint64(c.bsize) ||
			b.ValueBytes < c.valueMin || b.ValueBytes > c.valueMax || b.EntryBytes != 24*c.chunks || b.Copies != 3 {
			t.Errorf("%s copies=%d: %s %+v", c.release, c.copies, s.Format, b)
		}
	}
}

// TestARCDefaults checks the ARC limits by release (arc_os.c:
// arc_default_max(), arc.c: arc_init()) and the verdicts.
func TestARCDefaults(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	for _, c := range []struct {
		release      string
		ram, inCore  uint64
		arcMax, meta uint64
		limit        uint64
		verdict      string
	}{
		{"2.4.4", 16 * gib, 1 * gib, 15 * gib, 0, 15 * gib, ddtsize.VerdictFits},
		{"2.3.2", 4 * gib, 3 * gib, 3 * gib, 0, 3 * gib, ddtsize.VerdictTight},     // 5/8 × 4G = 2.5G < 4G − 1G
		{"2.3.0", 1 * gib, 1 * gib, 640 << 20, 0, 640 << 20, ddtsize.VerdictNoFit}, // 5/8 × 1G > 1G − 1G
		{"2.2.7", 16 * gib, 2 * gib, 8 * gib, 0, 8 * gib, ddtsize.VerdictFits},
		{"2.1.16", 16 * gib, 5 * gib, 8 * gib, 6 * gib, 6 * gib, ddtsize.VerdictTight},
		{"0.7.13", 8 * gib, 4 * gib, 4 * gib, 3 * gib, 3 * gib, ddtsize.VerdictNoFit},
		{"0.6.2", 8 * gib, 512 << 20, 4 * gib, 1 * gib, 1 * gib, ddtsize.VerdictFits},
	} {
		a := ddtsize.ARCFor(c.release, c.ram, c.inCore, false)
		if a.ARCMax != c.arcMax || a.MetaLimit != c.meta || a.Limit != c.limit || a.Verdict != c.verdict {
			t.Errorf("%s, RAM %d, table %d: %+v", c.release, c.ram, c.inCore, a)
		}
	}
	if a := ddtsize.ARCFor("2.3.2", 64*gib, 1, true); a.LogMax != 64*gib/100 {
		t.Errorf("log max %d", a.LogMax)
	}
}

// TestARCSmallRAM checks the zfs_arc_max default under and around 1 GiB of
// RAM (arc_os.c: arc_default_max(); 2.2: MAX(allmem / 2, arc_c_min); 2.3:
// MAX(allmem × 5 / 8, allmem − 1 GiB, or arc_c_min under 1 GiB)), and that
// the limit grows with RAM for every release row.
func TestARCSmallRAM(t *testing.T) {
	t.Parallel()
	const mib, gib = 1 << 20, 1 << 30
	for _, c := range []struct {
		release     string
		ram, arcMax uint64
	}{
		{"2.2.7", 256 * mib, 128 * mib},
		{"2.2.7", 512 * mib, 256 * mib},
		{"2.2.7", 900 * mib, 450 * mib},
		{"2.2.7", 1 * gib, 512 * mib},
		{"2.2.7", 2 * gib, 1 * gib},
		{"2.2.7", 64 * gib, 32 * gib},
		{"2.2.7", 48 * mib, 32 * mib}, // arc_c_min
		{"2.3.2", 256 * mib, 160 * mib},
		{"2.3.2", 512 * mib, 320 * mib},
		{"2.3.2", 900 * mib, 900 * mib * 5 / 8},
		{"2.3.2", 1 * gib, 640 * mib},
		{"2.3.2", 2 * gib, 1280 * mib},
		{"2.3.2", 8 * gib / 3, 8 * gib / 3 * 5 / 8},
		{"2.3.2", 4 * gib, 3 * gib},
		{"2.3.2", 64 * gib, 63 * gib},
		{"2.3.0", 48 * mib, 32 * mib}, // arc_c_min, more than 30M
	} {
		a := ddtsize.ARCFor(c.release, c.ram, 1, false)
		if a.ARCMax != c.arcMax || a.Limit != c.arcMax {
			t.Errorf("%s, RAM %d MiB: ARC max %d MiB (%s), limit %d; want %d MiB", c.release, c.ram/mib, a.ARCMax/mib, a.ARCMaxIs, a.Limit, c.arcMax/mib)
		}
	}
	if a := ddtsize.ARCFor("2.3.2", 512*mib, 1, false); !strings.HasPrefix(a.ARCMaxIs, "5/8 × RAM") {
		t.Errorf("512M on 2.3.2: rule %q", a.ARCMaxIs)
	}
	// Monotonic in RAM for every release row: 1 MiB to 1 TiB, finely
	// around 1 GiB.
	var rams []uint64
	for r := uint64(mib); r <= 1<<40; r += r / 16 {
		rams = append(rams, r)
	}
	for r := uint64(gib - 64*mib); r <= gib+64*mib; r += mib / 2 {
		rams = append(rams, r)
	}
	slices.Sort(rams)
	for _, rel := range zio.Releases {
		var prev ddtsize.ARC
		for _, ram := range rams {
			a := ddtsize.ARCFor(rel.Name, ram, 1, false)
			if a.ARCMax < prev.ARCMax || a.Limit < prev.Limit {
				t.Errorf("release %s: RAM %d gives ARC max %d, limit %d; RAM %d gave %d, %d",
					rel.Name, ram, a.ARCMax, a.Limit, prev.RAM, prev.ARCMax, prev.Limit)
				break
			}
			if ram >= 64*mib && a.ARCMax > ram {
				t.Errorf("release %s: ARC max %d above RAM %d", rel.Name, a.ARCMax, ram)
			}
			prev = a
		}
	}
}

// TestWholeLeavesByRelease: the leaves stored whole by the dedup log's
// flush exist on 2.3.0–2.3.3 (flush over 8 sync passes), not from 2.3.4
// (flush in pass 1), and they make the on-disk size, not the in-core one,
// larger.
func TestWholeLeavesByRelease(t *testing.T) {
	t.Parallel()
	pool, err := zio.NewPool([]string{"stripe 1"}, 12)
	if err != nil {
		t.Fatal(err)
	}
	size := func(release string) ddtsize.Result {
		rel, err := zio.LookupRelease(release)
		if err != nil {
			t.Fatal(err)
		}
		return ddtsize.Estimate(3833, 463, ddtsize.Params{Release: rel, Vdev: pool, Copies: 1, DataBytes: 25 << 20,
			Unique: ddtsize.BlockShape{LSize: 8192, PSize: 5990}, Duplicate: ddtsize.BlockShape{LSize: 8192, PSize: 6910}})
	}
	old, late, newer := size("2.3.2"), size("2.3.3"), size("2.4.4")
	// The replay of the 48M pool's real keys gives 7 of 36 leaves; random
	// keys give about as many.
	if old.Basis.WholeLeaves < 4 || old.Basis.WholeLeaves > 10 || late.Basis.WholeLeaves != old.Basis.WholeLeaves {
		t.Errorf("2.3.2/2.3.3: %.1f/%.1f leaves stored whole, want about 7", old.Basis.WholeLeaves, late.Basis.WholeLeaves)
	}
	if newer.Basis.WholeLeaves != 0 {
		t.Errorf("2.4.4: %.1f leaves stored whole, want none", newer.Basis.WholeLeaves)
	}
	if old.InCore != newer.InCore || old.OnDisk <= newer.OnDisk {
		t.Errorf("in core %d vs %d (want equal), on disk %d vs %d (want 2.3.2 larger)", old.InCore, newer.InCore, old.OnDisk, newer.OnDisk)
	}
	t.Logf("on disk: 2.3.2 %d, 2.4.4 %d (%+.1f%%)", old.OnDisk, newer.OnDisk, 100*(float64(old.OnDisk)/float64(newer.OnDisk)-1))
}
