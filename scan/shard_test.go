package scan_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/space"
)

// splitSmall makes the sharded scans given it split the files larger than 256 KiB into
// chunks (2 records of 128K, 16 of 16K, 64 of 4K, 1 of 1M), so that the
// golden inputs' larger files (binaries of 3 to 7 MB, the synthetic 1 to
// 16 MiB files, sparse ones included) are shared between shards.
func splitSmall() *source.Faults { return &source.Faults{ShardSplitBytes: 256 << 10} }

// shards is a sharded scan: the merge of its saved shards and what each
// shard did.
type shards struct {
	merged *scan.Result
	files  []string            // the saved shards
	each   []analyzer.Counters // each shard's counters
	// split counts the files whose records more than one shard read.
	split int
}

// runShards scans paths with set as the n shards of one scan (0/n …
// n-1/n), each saved, and merges the saved shards (saved.Merge,
// scan.FromSaved). Each shard's progress must be its share: the files it
// counts and the bytes of its chunks, all done.
func runShards(t *testing.T, set model.Settings, paths []string, n uint32) *shards {
	t.Helper()
	dir := t.TempDir()
	out := &shards{}
	var mu sync.Mutex
	readers := map[string]map[uint32]bool{}
	var files, pending int64
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		prog := &analyzer.Progress{}
		res, err := scan.Run(context.Background(), set, paths, scan.Options{Faults: splitSmall(), Shard: source.Shard{Index: i, Count: n}, Save: f, Progress: prog,
			Done: func(fi analyzer.FileInfo, first, end uint64) {
				mu.Lock()
				defer mu.Unlock()
				if readers[fi.Path] == nil {
					readers[fi.Path] = map[uint32]bool{}
				}
				readers[fi.Path][i] = true
			}})
		if err != nil {
			t.Fatalf("shard %d/%d: %v", i, n, err)
		}
		if len(res.Problems) > 0 {
			t.Errorf("shard %d/%d: problems %+v", i, n, res.Problems)
		}
		c := res.Analysis.Counters
		res.Close()
		if p := prog; p.BytesDone.Load() != p.BytesPending.Load() || uint64(p.Files.Load()) != c.Files {
			t.Errorf("shard %d/%d: progress %d of %d bytes, %d files; counted %d files", i, n, p.BytesDone.Load(), p.BytesPending.Load(), p.Files.Load(), c.Files)
		}
		files += prog.Files.Load()
		pending += prog.BytesPending.Load()
		out.each = append(out.each, c)
		h, err := saved.ReadHeader(f)
		if err != nil {
			t.Fatal(err)
		}
		if want := (source.Shard{Index: i, Count: n}); n > 1 && (h.Shard == nil || *h.Shard != want) || n == 1 && h.Shard != nil {
			t.Errorf("shard %d/%d saved as %+v", i, n, h.Shard)
		}
		out.files = append(out.files, f)
	}
	out.merged = mergeShards(t, out.files)
	// The progress of the shards adds up to the whole's.
	if c := out.merged.Analysis.Counters; uint64(files) != c.Files || uint64(pending) != c.LogicalBytes {
		t.Errorf("%d shards: progress %d files, %d bytes; the merged scan %d files, %d bytes", n, files, pending, c.Files, c.LogicalBytes)
	}
	for _, r := range readers {
		if len(r) > 1 {
			out.split++
		}
	}
	return out
}

// sameCounters compares the counters of the merged shards with those of
// one scan of everything: all of them, but for the compressor runs (each
// shard compresses the first copy of a content it meets: at least as
// many), the tables' memory, and the indirect blocks (a file split
// between shards has those of each piece counted: at least as many, and
// here, where files are split into a few records, more).
func sameCounters(t *testing.T, want, got analyzer.Counters) {
	t.Helper()
	if got.Compressed < want.Compressed {
		t.Errorf("compressor runs: %d in the shards, %d in one scan", got.Compressed, want.Compressed)
	}
	if got.Indirect.Count < want.Indirect.Count {
		t.Errorf("indirect blocks: %d in the shards, %d in one scan", got.Indirect.Count, want.Indirect.Count)
	}
	for _, c := range []*analyzer.Counters{&want, &got} {
		c.Compressed, c.TableBytes, c.SpillRuns, c.PeakRSS = 0, 0, 0, 0
		c.Indirect = space.Blocks{}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("counters differ (-one scan +merged shards):\n%s", d)
	}
}

// checkShards checks a sharded scan against one scan of everything and
// the real zdb -S text want: the merged shards' zdb -S text byte for byte,
// their counters, what the walk counts in shard 0 only.
func checkShards(t *testing.T, sh *shards, single *scan.Result, want string) {
	t.Helper()
	rep, err := sh.merged.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Zdb != want {
		t.Errorf("merged shards differ from real zdb -S (-real +merged):\n%s",
			cmp.Diff(strings.Split(want, "\n"), strings.Split(rep.Zdb, "\n")))
	}
	sameCounters(t, single.Analysis.Counters, sh.merged.Analysis.Counters)
	for i, c := range sh.each[1:] {
		if c.Dirs != 0 || c.ImageParts != 0 {
			t.Errorf("shard %d counted %d directories, %d image parts: shard 0's to count", i+1, c.Dirs, c.ImageParts)
		}
	}
	if n := len(sh.each); n > 1 && sh.each[0].Dirs != single.Analysis.Counters.Dirs {
		t.Errorf("shard 0 counted %d directories of %d", sh.each[0].Dirs, single.Analysis.Counters.Dirs)
	}
}

// The golden input set scanned as 1, 3 and 7 shards, with its larger files
// split into chunks, and the shards saved and merged: the zdb -S text real
// OpenZFS printed, byte for byte, and the counters of one scan.
func TestShardsMergedEqualOneScan(t *testing.T) {
	t.Parallel()
	cases, inputs := golden.ForScanTest(t)
	names := map[string]bool{"lz4-128k-a12": true, "off-128k-a12-never": true, "off-128k-a12-auto": true, "off-128k-a12-always": true,
		"lz4-1m-a12": true, "lz4-4k-a12": true, "lz4-128k-a12-dedup": true, "v21-lz4-16k-raidz2x6-a12": true}
	ran := 0
	for _, c := range cases {
		if !names[c.Name] {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			c.SkipWithoutSourceHoles(t)
			set, why := caseSettings(t, c)
			if why != "" {
				t.Fatal(why)
			}
			want, err := c.ZdbS()
			if err != nil {
				t.Fatal(err)
			}
			single, err := scan.Run(context.Background(), set, inputs, scan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer single.Close()
			for _, n := range []uint32{1, 3, 7} {
				t.Run(fmt.Sprint(n), func(t *testing.T) {
					sh := runShards(t, set, inputs, n)
					checkShards(t, sh, single, want)
					if n > 1 && sh.split < 5 {
						t.Errorf("%d files split between shards: the test proves little", sh.split)
					}
				})
			}
		})
	}
	if ran != len(names) {
		t.Errorf("%d of the %d cases ran", ran, len(names))
	}
}

// The golden zvol cases' files as volumes, in 3 shards: the volumes are
// split in chunks of whole volblocks; and the same files as qcow2 and
// VMDK (twoGbMaxExtentSparse: a descriptor and its extent files) images
// read with --guest, whose extents go with their image: real zdb -S.
func TestShardsMergedZvolAndGuest(t *testing.T) {
	t.Parallel()
	cases, inputs := golden.ForZvolTest(t)
	var c golden.Case
	for _, k := range cases {
		if k.Name == "zvol-lz4-16k-a12" {
			c = k
		}
	}
	if c.Name == "" {
		t.Fatal("no case zvol-lz4-16k-a12")
	}
	want, err := c.ZdbS()
	if err != nil {
		t.Fatal(err)
	}
	set, _ := zvolSettings(t, c, false)
	single, err := scan.Run(context.Background(), set, inputs, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	sh := runShards(t, set, inputs, 3)
	checkShards(t, sh, single, want)
	if sh.split == 0 {
		t.Error("no volume split between shards")
	}

	vdisktest.QemuImg(t)
	names, err := os.ReadDir(inputs[0])
	if err != nil {
		t.Fatal(err)
	}
	gset, _ := zvolSettings(t, c, true)
	for format, args := range map[string][]string{
		"qcow2": {"-O", "qcow2"},
		"vmdk":  {"-O", "vmdk", "-o", "subformat=twoGbMaxExtentSparse"},
	} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range names {
				vdisktest.Run(t, append(append([]string{"convert", "-f", "raw"}, args...),
					filepath.Join(inputs[0], n.Name()), filepath.Join(dir, n.Name()+"."+format))...)
			}
			single, err := scan.Run(context.Background(), gset, []string{dir}, scan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer single.Close()
			if format == "vmdk" && single.Analysis.Counters.ImageParts == 0 {
				t.Error("no VMDK extent files: the test proves little")
			}
			sh := runShards(t, gset, []string{dir}, 3)
			checkShards(t, sh, single, want)
			if sh.split == 0 {
				t.Error("no image split between shards")
			}
		})
	}
}

// A generated tree with hard links, a repeated path, a sparse file, empty
// files and symlinks, in 1 to 5 shards: merged, the scan of everything.
func TestShardsMergedGeneratedTree(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("windows: the tree needs symbolic links, which need a privilege there, and Wine 8's cannot be followed")
	}
	dir := t.TempDir()
	var prev string
	for i := range 40 {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%5), fmt.Sprintf("f%02d", i))
		switch {
		case i%9 == 4:
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Link(prev, p); err != nil {
				t.Fatal(err)
			}
		case i%11 == 5:
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(prev, p); err != nil {
				t.Fatal(err)
			}
		default:
			// Sizes from empty to 1.5 MiB; every third file repeats an
			// earlier one's content (dedup across shards).
			n := (i * 37 % 13) * 128 << 10
			testkit.Write(t, p, testkit.Rand(int64(i%3), n+i))
			prev = p
		}
	}
	sparse := filepath.Join(dir, "sparse")
	h, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt(testkit.Rand(9, 300<<10), 1<<20)
	h.Truncate(8 << 20)
	h.Close()
	paths := []string{dir, filepath.Join(dir, "d1"), sparse}
	for _, links := range []bool{false, true} {
		set := model.Settings{Release: "2.3.2", Compression: "lz4"}
		opts := scan.Options{CountLinks: links}
		single, err := scan.Run(context.Background(), set, paths, opts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := single.Report(0)
		if err != nil {
			t.Fatal(err)
		}
		if c := single.Analysis.Counters; !links && c.HardLinks == 0 || c.RepeatedDirs == 0 || c.RepeatedFiles == 0 || c.Symlinks == 0 {
			t.Fatalf("the tree lacks hard links, repeats or symlinks: %+v", c)
		}
		for n := uint32(1); n <= 5; n++ {
			sh := runShardsOpts(t, set, paths, n, opts)
			checkShards(t, sh, single, want.Zdb)
		}
		single.Close()
	}
}

// runShardsOpts is runShards with CountLinks.
func runShardsOpts(t *testing.T, set model.Settings, paths []string, n uint32, opts scan.Options) *shards {
	t.Helper()
	if !opts.CountLinks {
		return runShards(t, set, paths, n)
	}
	// The shards of a scan with --count-links, merged.
	dir := t.TempDir()
	out := &shards{}
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("s%d", i))
		res, err := scan.Run(context.Background(), set, paths, scan.Options{Faults: splitSmall(), CountLinks: true, Shard: source.Shard{Index: i, Count: n}, Save: f})
		if err != nil {
			t.Fatal(err)
		}
		out.each = append(out.each, res.Analysis.Counters)
		res.Close()
		out.files = append(out.files, f)
	}
	out.merged = mergeShards(t, out.files)
	return out
}

// A shard interrupted with Save keeps its shard in the saved scan; resumed
// with it (Resumable, Resume), it completes its share, still saved as that
// shard, and the shards merged are the scan of everything. Resuming with
// another shard, or none, is refused.
func TestShardResumeKeepsShard(t *testing.T) {
	t.Parallel()
	_, inputs := golden.ForScanTest(t)
	c, err := golden.FindCase("lz4-128k-a12")
	if err != nil {
		t.Fatal(err)
	}
	set, _ := caseSettings(t, c)
	want, err := c.ZdbS()
	if err != nil {
		t.Fatal(err)
	}
	single, err := scan.Run(context.Background(), set, inputs, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	dir := t.TempDir()
	var files []string
	for i := range uint32(3) {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		files = append(files, f)
		sh := source.Shard{Index: i, Count: 3}
		if i != 1 {
			res, err := scan.Run(context.Background(), set, inputs, scan.Options{Faults: splitSmall(), Shard: sh, Save: f})
			if err != nil {
				t.Fatal(err)
			}
			res.Close()
			continue
		}
		// Interrupted after 30 runs of records.
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		runs := 0
		res, err := scan.Run(ctx, set, inputs, scan.Options{Faults: splitSmall(), Shard: sh, Save: f, Jobs: 2, Done: func(analyzer.FileInfo, uint64, uint64) {
			mu.Lock()
			defer mu.Unlock()
			if runs++; runs == 30 {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) || !res.Partial {
			t.Fatalf("not interrupted: %v", err)
		}
		res.Close()
		prev, err := saved.Read(f, saved.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if prev.Complete || prev.Shard == nil || *prev.Shard != sh {
			t.Fatalf("interrupted shard saved: complete %v, shard %+v", prev.Complete, prev.Shard)
		}
		rset, err := scan.Resumable(prev, f)
		if err != nil {
			t.Fatal(err)
		}
		paths := saved.Strings(prev.Paths)
		var ue *scan.UsageError
		for _, other := range []source.Shard{{}, {Index: 2, Count: 3}, {Index: 1, Count: 4}} {
			if _, err := scan.Run(context.Background(), rset, paths, scan.Options{Faults: splitSmall(), Save: f, Resume: prev, Shard: other}); !errors.As(err, &ue) ||
				!strings.Contains(err.Error(), "the saved scan is shard 1/3") {
				t.Errorf("resumed as %+v: %v", other, err)
			}
		}
		res, err = scan.Run(context.Background(), rset, paths, scan.Options{Faults: splitSmall(), Save: f, Resume: prev, Shard: *prev.Shard})
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		h, err := saved.ReadHeader(f)
		if err != nil || !h.Complete || h.Shard == nil || *h.Shard != sh {
			t.Fatalf("resumed shard saved: %v, complete %v, shard %+v", err, h != nil && h.Complete, h.Shard)
		}
	}
	merged := mergeShards(t, files)
	checkShards(t, &shards{merged: merged, each: []analyzer.Counters{{Dirs: single.Analysis.Counters.Dirs}}}, single, want)
}

// Options that cannot go with a shard are refused before scanning.
func TestShardUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "f"), []byte("x"))
	var ue *scan.UsageError
	for _, o := range []scan.Options{
		{Shard: source.Shard{Index: 4, Count: 4}},
		{Shard: source.Shard{Index: 0, Count: source.MaxShards + 1}},
		{Shard: source.Shard{Index: 1, Count: 0}},
		{Shard: source.Shard{Index: 1, Count: 2}, By: "dir"},
	} {
		if _, err := scan.Run(context.Background(), model.Settings{}, []string{dir}, o); !errors.As(err, &ue) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// A shard interrupted once its share of a split file is done, resumed
// after the file changed: the file is skipped whatever happened to it, as
// a file done completely is, without an error; its records done stay.
func TestShardResumeSkipsItsDoneShareOfAChangedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "a-big")
	testkit.Write(t, big, testkit.Rand(1, 4<<20)) // 32 records, 16 chunks of 2
	for i := range 40 {
		testkit.Write(t, filepath.Join(dir, fmt.Sprintf("b%02d", i)), testkit.Rand(int64(i+2), 200<<10))
	}
	st := testkit.Stat(t, big, false)
	set := model.Settings{Release: "2.3.2", Compression: "lz4"}
	for i := range uint32(3) {
		sh := source.Shard{Index: i, Count: 3}
		var share uint64 // records of a-big this shard takes
		for c := range uint64(16) {
			if sh.Owns("0:.", st.Ino, c) {
				share += 2
			}
		}
		if share == 0 || share == 32 {
			continue
		}
		save := filepath.Join(t.TempDir(), "s")
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var got uint64
		res, err := scan.Run(ctx, set, []string{dir}, scan.Options{Faults: splitSmall(), Shard: sh, Save: save, Jobs: 1, Done: func(f analyzer.FileInfo, first, end uint64) {
			mu.Lock()
			defer mu.Unlock()
			if f.Path == big {
				if got += end - first; got == share {
					cancel()
				}
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("shard %s: not interrupted: %v", sh, err)
		}
		res.Close()
		prev, err := saved.Read(save, saved.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if prev.Complete {
			t.Fatalf("shard %s: complete before the small files", sh)
		}
		os.WriteFile(big, testkit.Rand(99, 4<<20+1), 0o644) // changed
		res, err = scan.Run(context.Background(), set, []string{dir}, scan.Options{Faults: splitSmall(), Shard: sh, Save: save, Resume: prev})
		if err != nil {
			t.Fatal(err)
		}
		small := uint64(0) // records of the small files this shard takes
		for j := range 40 {
			fst := testkit.Stat(t, filepath.Join(dir, fmt.Sprintf("b%02d", j)), false)
			if sh.Owns("0:.", fst.Ino, 0) {
				small += 2
			}
		}
		if c := res.Analysis.Counters; len(res.Problems) != 0 || c.Errors != 0 || c.Records != small+share {
			t.Errorf("shard %s resumed: problems %+v, %d errors, %d records (want the %d of a-big done before and %d of small files)", sh, res.Problems, c.Errors, c.Records, share, small)
		}
		res.Close()
		testkit.Write(t, big, testkit.Rand(1, 4<<20))
		st = testkit.Stat(t, big, false)
	}
}

// mergeShards merges the saved shard scans as ddtsim merge does.
func mergeShards(t *testing.T, files []string) *scan.Result {
	t.Helper()
	m, err := saved.Merge(files, saved.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	merged, err := scan.FromMerged(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(merged.Close)
	return merged
}
