package breakdown

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// breakdownTree writes files whose blocks are shared within and across
// directories, extensions and size classes: copies, partial copies at
// record boundaries, a content in three groups, zeros, holes of a sparse
// file, embedded tiny files, empty files.
func breakdownTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	shared := testkit.Rand(1, 512<<10) // 4 records
	text := bytes.Repeat([]byte("all work and no play makes jack a dull boy\n"), 900)
	three := testkit.Rand(7, 128<<10)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	testkit.Write(t, filepath.Join(root, "a", "img.RAW"), cat(shared, testkit.Rand(2, 200<<10)))
	testkit.Write(t, filepath.Join(root, "a", "y.txt"), text)
	testkit.Write(t, filepath.Join(root, "a", "tiny2"), []byte("hello"))
	testkit.Write(t, filepath.Join(root, "a", "three.bin"), three)
	testkit.Write(t, filepath.Join(root, "b", "copy.raw"), shared)
	testkit.Write(t, filepath.Join(root, "b", "copy2.raw"), cat(shared[:256<<10], make([]byte, 256<<10), three))
	testkit.Write(t, filepath.Join(root, "b", "zeros.bin"), make([]byte, 1<<20))
	// Zeros to a file's end within a record: a hole of fewer file bytes
	// than its LSIZE.
	testkit.Write(t, filepath.Join(root, "b", "tail0.bin"), cat(testkit.Rand(8, 128<<10), make([]byte, 200000)))
	testkit.Write(t, filepath.Join(root, "b", "three"), three)
	testkit.Write(t, filepath.Join(root, "c", "x.txt"), text)
	testkit.Write(t, filepath.Join(root, "c", "y.TXT"), text)
	testkit.Write(t, filepath.Join(root, "c", "tiny"), []byte("hello"))
	testkit.Write(t, filepath.Join(root, "c", "empty"), nil)
	testkit.Write(t, filepath.Join(root, "c", "three.bin"), three)
	testkit.Write(t, filepath.Join(root, "c", "deep", "d", "e.dat"), shared[128<<10:384<<10])
	testkit.Write(t, filepath.Join(root, "top.bin"), cat(testkit.Rand(3, 5000), text[:3000]))
	testkit.Write(t, filepath.Join(root, ".hidden"), text[:100])
	testkit.Write(t, filepath.Join(root, "big", "large.img"), cat(testkit.Rand(4, 2<<20), shared))
	// A sparse file: one record of data, then 64 MiB of hole.
	f, err := os.Create(filepath.Join(root, "c", "sparse.img"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(shared[:128<<10]); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return root
}

func scanBreakdown(t *testing.T, p *zio.Policy, sparse model.Sparse, by string, paths ...string) (*analyzer.Analysis, *Result) {
	t.Helper()
	acc, err := NewAccumulator(by, paths)
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyzer.Run(context.Background(), paths, analyzer.Options{Policy: p, Sparse: sparse, Jobs: 4,
		OnFile: acc.File, OnBlock: acc.Block, BlockRuns: true,
		Warn: func(path string, err error) { t.Errorf("%s: %v", path, err) }})
	if err != nil {
		t.Fatal(err)
	}
	return res, acc.Result(res.Table)
}

func statLE(a, b ddt.Stat) bool {
	return a.Blocks <= b.Blocks && a.LSize <= b.LSize && a.PSize <= b.PSize && a.DSize <= b.DSize
}

// checkBreakdown requires every column of the groups to add up to the
// scan's totals.
func checkBreakdown(t *testing.T, res *analyzer.Analysis, b *Result) {
	t.Helper()
	sum := SumGroups(b.Groups)
	if sum != b.Sum {
		t.Errorf("breakdown_total %+v, the groups add up to %+v", b.Sum, sum)
	}
	c := res.Counters
	total := res.Histogram.Total()
	for _, x := range []struct {
		what      string
		got, want uint64
	}{
		{"files", sum.Files, c.Files},
		{"logical bytes", sum.LogicalBytes, c.LogicalBytes},
		{"records", sum.Records, c.Records},
		{"holes", sum.Holes, c.Holes},
		{"zero blocks", sum.ZeroBlocks, c.ZeroBlocks},
		{"embedded", sum.Embedded, c.Embedded},
		{"zeros.holes", b.Zeros.Holes, c.Holes},
		{"zeros.hole_lsize", b.Zeros.HoleLSize, sum.HoleLSize},
		// The file bytes in holes, as the summary credits them (found by
		// a new user: the zeros line said 256K where the summary 195K).
		{"zeros.hole_bytes", b.Zeros.HoleBytes, c.HoleBytes},
		{"zeros.referenced", b.Zeros.Referenced.Blocks, c.ZeroBlocks},
	} {
		if x.got != x.want {
			t.Errorf("%s: groups add up to %d, the scan has %d", x.what, x.got, x.want)
		}
	}
	if sum.Referenced != total.Referenced {
		t.Errorf("referenced: groups add up to %+v, the table has %+v", sum.Referenced, total.Referenced)
	}
	if sum.Allocated != total.Allocated {
		t.Errorf("allocated: groups add up to %+v, the table has %+v", sum.Allocated, total.Allocated)
	}
	names := map[string]bool{}
	for _, g := range b.Groups {
		if names[g.Name] {
			t.Errorf("group %q twice", g.Name)
		}
		names[g.Name] = true
		if !statLE(g.Unique, g.Allocated) || !statLE(g.Allocated, g.Referenced) || !statLE(g.Shared, g.Referenced) {
			t.Errorf("group %q: want unique ≤ allocated ≤ referenced and shared ≤ referenced: %+v", g.Name, g)
		}
		if g.Holes+g.Embedded+g.Referenced.Blocks != g.Records || g.ZeroBlocks > g.Referenced.Blocks {
			t.Errorf("group %q: records %d ≠ holes %d + stored %d + embedded %d", g.Name, g.Records, g.Holes, g.Referenced.Blocks, g.Embedded)
		}
	}
}

func TestBreakdownPartsAddUpToTotals(t *testing.T) {
	t.Parallel()
	root := breakdownTree(t)
	multi := []string{filepath.Join(root, "a"), filepath.Join(root, "b") + "/", filepath.Join(root, "c"),
		filepath.Join(root, "top.bin"), filepath.Join(root, "big")}
	for _, pol := range []struct {
		name   string
		comp   zio.Compression
		sparse model.Sparse
	}{{"lz4", zio.LZ4, model.SparseAuto}, {"off-never", zio.Off, model.SparseNever}} {
		for _, by := range Kinds {
			for _, paths := range [][]string{{root}, multi} {
				res, b := scanBreakdown(t, testkit.Policy(t, pol.comp), pol.sparse, by, paths...)
				t.Run(pol.name+"/"+by+"/"+string(rune('0'+len(paths))), func(t *testing.T) {
					checkBreakdown(t, res, b)
					var shared uint64
					for _, g := range b.Groups {
						shared += g.Shared.Blocks
					}
					if shared == 0 {
						t.Errorf("no block shared across groups: the test data should have some")
					}
					if pol.comp == zio.Off && b.Zeros.Referenced.Blocks == 0 {
						t.Errorf("compression=off, sparse=never: no all-zero blocks stored")
					}
					if pol.comp == zio.LZ4 && (b.Zeros.Holes == 0 || res.Counters.Embedded == 0) {
						t.Errorf("lz4: want holes and embedded blocks, got %d and %d", b.Zeros.Holes, res.Counters.Embedded)
					}
				})
			}
		}
	}
}

func TestBreakdownGroups(t *testing.T) {
	t.Parallel()
	root := breakdownTree(t)
	names := func(b *Result) []string {
		var n []string
		for _, g := range b.Groups {
			n = append(n, g.Name)
		}
		return n
	}
	eq := func(t *testing.T, got, want []string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("groups %q, want %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("groups %q, want %q", got, want)
			}
		}
	}
	p := testkit.Policy(t, zio.LZ4)
	_, b := scanBreakdown(t, p, model.SparseAuto, ByDir, root+"/")
	j := func(s string) string { return filepath.Join(root, s) }
	eq(t, names(b), []string{DirectFilesName(root), j("a"), j("b"), j("big"), j("c")})
	if b.Groups[0].Files != 2 {
		t.Errorf("files directly in the directory: %d, want 2 (top.bin, .hidden)", b.Groups[0].Files)
	}
	// Several paths: one row each, in the order named, even when empty.
	empty := t.TempDir()
	_, b = scanBreakdown(t, p, model.SparseAuto, ByDir, j("c"), j("a"), empty, j("top.bin"))
	eq(t, names(b), []string{j("c"), j("a"), empty, j("top.bin")})
	_, b = scanBreakdown(t, p, model.SparseAuto, ByExt, root)
	want := map[string]bool{".raw": true, ".txt": true, "(none)": true, ".bin": true, ".img": true, ".dat": true}
	for _, n := range names(b) {
		if !want[n] {
			t.Errorf("unexpected extension group %q", n)
		}
		delete(want, n)
	}
	if len(want) > 0 {
		t.Errorf("missing extension groups %v", want)
	}
	_, b = scanBreakdown(t, p, model.SparseAuto, BySize, root)
	eq(t, names(b), []string{"empty", "<=4K", "<=128K", "<=1M", "<=16M", "<=1G"})
}

func TestSizeClassAndExt(t *testing.T) {
	t.Parallel()
	for size, want := range map[uint64]string{0: "empty", 1: "<=4K", 4096: "<=4K", 4097: "<=128K", 128 << 10: "<=128K",
		1 << 20: "<=1M", 1<<20 + 1: "<=16M", 16 << 20: "<=16M", 1 << 30: "<=1G", 1<<30 + 1: ">1G", 1 << 50: ">1G"} {
		if got := SizeClass(size); got != want {
			t.Errorf("SizeClass(%d) = %q, want %q", size, got, want)
		}
	}
	for path, want := range map[string]string{"a/b.TXT": ".txt", "x.tar.GZ": ".gz", "noext": "(none)", ".bashrc": "(none)",
		"d.d/file": "(none)", "trailing.": "(none)", "a/.x.Conf": ".conf", "bad.\xffZ": `.\xffz`} {
		if got := Ext(path); got != want {
			t.Errorf("Ext(%q) = %q, want %q", path, got, want)
		}
	}
}

// A content referenced once from each of three groups: its DSIZE is split
// in thirds, rounded so that the parts add up.
func TestBreakdownSplitsSharedBlock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data := testkit.Rand(9, 128<<10)
	for _, d := range []string{"p", "q", "r"} {
		testkit.Write(t, filepath.Join(root, d, "f"), data)
	}
	testkit.Write(t, filepath.Join(root, "q", "g"), data) // q holds 2 of 4 references
	res, b := scanBreakdown(t, testkit.Policy(t, zio.LZ4), model.SparseAuto, ByDir, root)
	checkBreakdown(t, res, b)
	d := res.Histogram.Total().Allocated.DSize
	want := map[string]float64{"p": 0.25, "q": 0.5, "r": 0.25}
	for _, g := range b.Groups {
		share := want[filepath.Base(g.Name)] * float64(d)
		if got := float64(g.Allocated.DSize); got < share-1 || got > share+1 {
			t.Errorf("%s: allocated DSIZE %v, want %v ± 1", g.Name, got, share)
		}
		if g.Unique.Blocks != 0 || g.Shared.Blocks == 0 {
			t.Errorf("%s: unique %+v, shared %+v", g.Name, g.Unique, g.Shared)
		}
	}
	if b.Groups[1].Allocated.Blocks != 1 { // q has the largest share of the one block
		t.Errorf("the block went to %+v", b.Groups)
	}
}

func TestApportion(t *testing.T) {
	t.Parallel()
	// Three groups with a third each of 3 units and of 100 units.
	groups := []Group{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	third := 1.0 / 3
	for _, c := range []struct {
		total uint64
		sp    []split
	}{
		{1, []split{{frac: [4]float64{third}}, {frac: [4]float64{third}}, {frac: [4]float64{third}}}},
		{100, []split{{whole: [4]uint64{33}, frac: [4]float64{third}}, {whole: [4]uint64{33}, frac: [4]float64{third}}, {whole: [4]uint64{33}, frac: [4]float64{third}}}},
		{7, []split{{whole: [4]uint64{3}, frac: [4]float64{0.5}}, {whole: [4]uint64{3}, frac: [4]float64{0.5 + 1e-13}}, {}}},
		{2, []split{{frac: [4]float64{0.9999999999999}}, {frac: [4]float64{1.0000000000001}}, {}}},
	} {
		parts := apportion(c.total, c.sp, 0, groups)
		var sum uint64
		for i, p := range parts {
			sum += p
			exact := float64(c.sp[i].whole[0]) + c.sp[i].frac[0]
			if float64(p) < exact-1 || float64(p) > exact+1 {
				t.Errorf("total %d: part %d = %d, share %v", c.total, i, p, exact)
			}
		}
		if sum != c.total {
			t.Errorf("total %d: parts %v add up to %d", c.total, parts, sum)
		}
	}
}

// Two directories whose names print alike but for the escaping, d\xff1
// (a backslash, x, f, f) and d<0xff>1 (the byte 0xff), are two rows, each
// with its own file, shown apart; and so are the extensions .\xff and
// .<0xff>, and .\XFF (lower-cased to .\xff, not to the byte).
func TestBreakdownGroupsByRawName(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip(`windows: names are Unicode there (no byte 0xff), and \ separates`)
	}
	root := t.TempDir()
	lit, raw := filepath.Join(root, `d\xff1`), filepath.Join(root, "d\xff1")
	testkit.Write(t, filepath.Join(lit, "f"), testkit.Rand(10, 5000))
	testkit.Write(t, filepath.Join(raw, "f"), testkit.Rand(11, 7000))
	testkit.Write(t, filepath.Join(raw, "g"), testkit.Rand(12, 9000))
	res, b := scanBreakdown(t, testkit.Policy(t, zio.LZ4), model.SparseAuto, ByDir, root)
	checkBreakdown(t, res, b)
	type row struct {
		name         string
		files, bytes uint64
	}
	var got []row
	for _, g := range b.Groups {
		got = append(got, row{g.Name, g.Files, g.LogicalBytes})
	}
	want := []row{{root + `/d\\xff1`, 1, 5000}, {root + `/d\xff1`, 2, 16000}} // sorted by name
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("groups %+v, want %+v", got, want)
	}

	_, b = scanBreakdown(t, testkit.Policy(t, zio.LZ4), model.SparseAuto, ByDir, lit, raw)
	if len(b.Groups) != 2 || b.Groups[0].Name != root+`/d\\xff1` || b.Groups[0].Files != 1 || b.Groups[1].Name != root+`/d\xff1` || b.Groups[1].Files != 2 {
		t.Errorf("two paths named: %+v", b.Groups)
	}

	for path, want := range map[string]string{`a.\xff`: `.\\xff`, "a.\xff": `.\xff`, `a.\XFF`: `.\\xff`, "a.\xffZ": `.\xffz`} {
		if got := Ext(path); got != want {
			t.Errorf("Ext(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestBreakdownManyGroupsPerShard fills one shard's arena of further
// groups past several chunks (every key in shard 0, each in 10 groups)
// and checks every group's references and allocated share.
func TestBreakdownManyGroupsPerShard(t *testing.T) {
	t.Parallel()
	const keys, groups = 500, 10 // 4,500 further-group nodes in shard 0
	a, err := NewAccumulator(ByExt, nil)
	if err != nil {
		t.Fatal(err)
	}
	tags := make([]int, groups)
	for g := range tags {
		tags[g] = a.File(analyzer.FileEvent{Path: "f." + string(rune('a'+g)), Size: 4096})
	}
	tab := ddt.NewTable(nil)
	for i := 0; i < keys; i++ {
		var k ddt.Key
		k[1], k[2] = byte(i>>8), byte(i) // k[0] = 0: all in one shard
		tab.RefN(k, 4096, uint64(groups*(groups+1)/2))
		tab.Set(k, 4096)
		for g := range groups {
			// Group g holds g+1 references, given one at a time in turns,
			// so that every node is looked up again.
			for r := 0; r <= g; r++ {
				a.Block(analyzer.BlockEvent{Key: k, LSize: 4096, Tag: tags[g], BlkID: uint64(r)})
			}
		}
	}
	if n := a.shards[0].more.n; n != keys*(groups-1) || len(a.shards[0].more.chunks) < 4 {
		t.Fatalf("shard 0 holds %d nodes in %d chunks, want %d in at least 4", n, len(a.shards[0].more.chunks), keys*(groups-1))
	}
	res := a.Result(tab)
	var alloc uint64
	for g, gr := range res.Groups {
		if want := uint64(keys * (g + 1)); gr.Referenced.Blocks != want || gr.Records != want {
			t.Errorf("%s: referenced %d blocks, %d records, want %d", gr.Name, gr.Referenced.Blocks, gr.Records, want)
		}
		if gr.Unique.Blocks != 0 || gr.Shared.Blocks != uint64(keys*(g+1)) {
			t.Errorf("%s: unique %+v, shared %+v", gr.Name, gr.Unique, gr.Shared)
		}
		// 500 blocks split by g+1 parts in 55: largest remainder within 1.
		share := float64(keys*(g+1)) / 55
		if got := float64(gr.Allocated.Blocks); got < share-1 || got > share+1 {
			t.Errorf("%s: allocated %v blocks, want %.1f ± 1", gr.Name, got, share)
		}
		alloc += gr.Allocated.Blocks
	}
	if alloc != keys || res.Sum.Allocated.Blocks != keys {
		t.Errorf("allocated blocks add up to %d (sum row %d), want %d", alloc, res.Sum.Allocated.Blocks, keys)
	}
}
