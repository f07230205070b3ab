package source

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/zeebo/blake3"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]Shard{
		"0/4":         {0, 4},
		"3/4":         {3, 4},
		"0/1":         {0, 1},
		"65535/65536": {65535, 65536},
		"007/010":     {7, 10},
	} {
		got, err := ParseShard(v)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", v, got, err, want)
		}
	}
	if s, _ := ParseShard("0/1"); s.Sharded() || !s.CountsWalk() {
		t.Errorf("0/1 is no sharding: %+v", s)
	}
	for v, msg := range map[string]string{
		"7/4":          "7/4: index must be below the count",
		"4/4":          "4/4: index must be below the count",
		"1/1":          "1/1: index must be below the count",
		"1/0":          "1/0: the count must be at least 1",
		"0/0":          "0/0: the count must be at least 1",
		"0/65537":      "0/65537: the count must be at most 65536",
		"3":            "3: not i/N",
		"":             ": not i/N",
		"a/4":          `a/4: the index "a" is not a whole number`,
		"-1/4":         `-1/4: the index "-1" is not a whole number`,
		"1/+4":         `1/+4: the count "+4" is not a whole number`,
		"1/2/3":        `1/2/3: the count "2/3" is not a whole number`,
		" 1/4":         `the index " 1" is not a whole number`,
		"1/4 ":         `the count "4 " is not a whole number`,
		"1/9999999999": `the count "9999999999" is not a whole number`,
	} {
		_, err := ParseShard(v)
		if err == nil || !strings.HasPrefix(err.Error(), msg) && !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v; want %q", v, err, msg)
		}
	}
	for _, s := range []Shard{{}, {0, 1}, {2, 3}} {
		if err := s.Check(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, s := range []Shard{{1, 0}, {3, 3}, {0, MaxShards + 1}} {
		if err := s.Check(); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}

// ShardHash is the documented encoding's BLAKE3, and spreads inodes
// evenly, numbered in sequence as file systems number them, also over a
// power-of-two count of shards.
func TestShardHash(t *testing.T) {
	t.Parallel()
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, 1234567)
	binary.BigEndian.PutUint64(b[8:], 89)
	sum := blake3.Sum256(append(b, "0:mnt/b"...))
	if got, want := ShardHash("0:mnt/b", 1234567, 89), binary.BigEndian.Uint64(sum[:8]); got != want {
		t.Errorf("ShardHash %x, want %x", got, want)
	}
	for _, n := range []uint32{7, 32} {
		counts := make([]int, n)
		const files = 32000
		for ino := uint64(1000); ino < 1000+files; ino++ {
			for i := range n {
				if (Shard{i, n}).Owns("0:.", ino, 0) {
					counts[i]++
				}
			}
		}
		sum, mean := 0, files/int(n)
		for i, c := range counts {
			sum += c
			// Binomial: sd about sqrt(mean), 6 sd either side.
			if d := c - mean; d*d > 36*mean {
				t.Errorf("%d shards: shard %d has %d files, expected about %d", n, i, c, mean)
			}
		}
		if sum != files {
			t.Errorf("%d shards: %d files owned in all, want %d (each exactly once)", n, sum, files)
		}
	}
}

// The name of a file system does not depend on its st_dev, which
// differs between machines mounting the same tree (or the same export),
// nor on where the tree is mounted: two machines meeting their devices in
// the same walk order name them alike, and so put every file in the same
// shard.
func TestFileSystemNameIndependentOfDevice(t *testing.T) {
	t.Parallel()
	type meet struct {
		dev  uint64
		path string // below the path named
	}
	// Machine A: the tree at /mnt/tree (dev 10), another file system
	// mounted at d/nfs2 (dev 20), met again at f/bind (a bind mount).
	walkA := []meet{{10, "."}, {10, "d"}, {20, "d/nfs2"}, {20, "d/nfs2/x"}, {10, "e"}, {20, "f/bind"}, {30, "g/file-on-its-own-fs"}}
	// Machine B: the same tree at /data (dev 77), the same walk, other
	// device numbers, one of them A's number of another file system.
	devB := map[uint64]uint64{10: 77, 20: 10, 30: 5}
	a, b := fsIDs{}, fsIDs{}
	want := []string{"0:.", "0:.", "0:d/nfs2", "0:d/nfs2", "0:.", "0:d/nfs2", "0:g/file-on-its-own-fs"}
	for i, m := range walkA {
		na := a.of(m.dev, 0, "/mnt/tree", filepath.Join("/mnt/tree", m.path))
		nb := b.of(devB[m.dev], 0, "/data/", filepath.Join("/data", m.path))
		if na != want[i] || nb != want[i] {
			t.Errorf("%+v: named %q on A, %q on B; want %q", m, na, nb, want[i])
		}
		for ino := uint64(1); ino < 100; ino++ {
			if (Shard{0, 5}).Owns(na, ino, 0) != (Shard{0, 5}).Owns(nb, ino, 0) {
				t.Fatalf("inode %d of %s: in shard 0 of 5 on one machine only", ino, na)
			}
		}
	}
	// Under the second path named, relative to it.
	if n := a.of(40, 1, "other/", "other/sub"); n != "1:sub" {
		t.Errorf("second path named: %q", n)
	}
}

// shardWalk is one shard's walk: what it yielded (closed) and opened.
type shardWalk struct {
	walked
	opened []string
}

// walkShards walks paths once per shard of n (0/n … n-1/n) with chunk
// size cb, recording what each opened.
func walkShards(t *testing.T, w Walker, n uint32, cb uint64, paths ...string) []shardWalk {
	t.Helper()
	out := make([]shardWalk, n)
	for i := range n {
		w := w
		w.Shard, w.ChunkBytes = Shard{i, n}, cb
		sw := &out[i]
		w.Faults = &Faults{BeforeOpen: func(p string) { sw.opened = append(sw.opened, p) }}
		sw.walked = walkT(t, &w, paths...)
	}
	return out
}

// identity of a file yielded.
type ident struct{ dev, ino uint64 }

func identOf(t *testing.T, path string) ident {
	t.Helper()
	st := testkit.Stat(t, path, true)
	return ident{st.Dev, st.Ino}
}

// Every name of a hard-linked file is in the shard of its inode, which
// skips the extra names as a walk of everything does; with CountLinks it
// yields them all.
func TestShardKeepsHardLinksTogether(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "a", "f")
	writeFile(t, f, randBytes(1, 5000))
	for _, name := range []string{"b/g", "c/h", "a/i"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.Link(f, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("d%d", i%4), fmt.Sprintf("x%02d", i)), randBytes(int64(i+10), 100*i))
	}
	id := identOf(t, f)
	for _, countLinks := range []bool{false, true} {
		whole := walkT(t, &Walker{CountLinks: countLinks}, dir)
		for _, n := range []uint32{3, 7} {
			shards := walkShards(t, Walker{CountLinks: countLinks}, n, 0, dir)
			var files, links uint64
			holders := 0
			for i, s := range shards {
				files += s.c.Files
				links += s.c.HardLinks
				names := 0
				for _, y := range s.files {
					if (ident{y.Dev, y.Ino}) == id {
						names++
					}
				}
				if names > 0 {
					holders++
					want := 1
					if countLinks {
						want = 4
					}
					if names != want || !countLinks && s.c.HardLinks != 3 {
						t.Errorf("links %v, shard %d/%d: %d names yielded, %d hard links skipped", countLinks, i, n, names, s.c.HardLinks)
					}
				} else if s.c.HardLinks != 0 {
					t.Errorf("links %v, shard %d/%d: %d hard links skipped, without the file", countLinks, i, n, s.c.HardLinks)
				}
			}
			if holders != 1 || files != whole.c.Files || links != whole.c.HardLinks {
				t.Errorf("links %v, %d shards: the inode in %d shards; %d files, %d links; the whole walk %d, %d",
					countLinks, n, holders, files, links, whole.c.Files, whole.c.HardLinks)
			}
		}
	}
}

// genTree writes a random tree: directories up to 3 deep, files of 0 to
// 300 KiB (some sparse), hard links, symlinks, a FIFO, empty directories.
// It returns the paths of the regular files (every name).
func genTree(t *testing.T, dir string, rng *rand.Rand) []string {
	t.Helper()
	var files, dirs []string
	dirs = append(dirs, dir)
	for i := range 12 {
		parent := dirs[rng.Intn(len(dirs))]
		if strings.Count(parent[len(dir):], "/") >= 3 {
			parent = dir
		}
		d := filepath.Join(parent, fmt.Sprintf("d%02d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for i := range 60 {
		p := filepath.Join(dirs[rng.Intn(len(dirs))], fmt.Sprintf("f%02d", i))
		switch k := rng.Intn(10); {
		case k == 0 && len(files) > 0: // a hard link
			if err := os.Link(files[rng.Intn(len(files))], p); err != nil {
				t.Fatal(err)
			}
		case k == 1 && len(files) > 0: // a symlink
			if err := os.Symlink(files[rng.Intn(len(files))], p); err != nil {
				t.Fatal(err)
			}
			continue
		case k == 2: // sparse
			h, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			h.WriteAt(randBytes(int64(i), 4096), int64(rng.Intn(200<<10)))
			h.Truncate(int64(rng.Intn(300<<10) + 210<<10))
			h.Close()
		default:
			sizes := []int{0, 1, 4096, 64 << 10, 64<<10 + 1, 300 << 10}
			n := sizes[rng.Intn(len(sizes))]
			if rng.Intn(2) == 0 {
				n = rng.Intn(300 << 10)
			}
			writeFile(t, p, randBytes(int64(i), n))
		}
		files = append(files, p)
	}
	if err := testkit.Mkfifo(t, filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return files
}

// On generated trees, for several counts of shards, the shards' chunks are
// disjoint and together every chunk of every file; each file is counted
// by one shard; a shard opens only files it takes a chunk of; the shards'
// counters add up to those of the walk of everything.
func TestShardsPartitionTheFiles(t *testing.T) {
	t.Parallel()
	const cb = 64 << 10 // chunk size: the files above it are split
	for seed := int64(1); seed <= 4; seed++ {
		dir := t.TempDir()
		rng := rand.New(rand.NewSource(seed))
		names := genTree(t, dir, rng)
		// Every chunk of every file, as the rule has it: ceil(size /
		// cb) chunks for a file larger than cb, else one.
		all := map[ident]uint64{}
		idOf := map[string]ident{}
		for _, p := range names {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			n := uint64(1)
			if s := uint64(fi.Size()); s > cb {
				n = (s + cb - 1) / cb
			}
			id := identOf(t, p)
			all[id], idOf[p] = n, id
		}
		var total uint64
		for _, n := range all {
			total += n
		}
		whole := walkT(t, &Walker{}, dir)
		split := 0
		for _, n := range []uint32{1, 2, 3, 5, 7, 16} {
			shards := walkShards(t, Walker{}, n, cb, dir)
			owner := map[ident]map[uint64]int{} // chunk → shard
			counted := map[ident]int{}
			var sum Counters
			for i, s := range shards {
				addCounters(&sum, &s.c)
				if len(s.warns) != 0 {
					t.Errorf("seed %d, shard %d/%d: warnings %q", seed, i, n, s.warns)
				}
				taken := map[ident]bool{}
				for _, f := range s.files {
					id := ident{f.Dev, f.Ino}
					if _, ok := all[id]; !ok {
						t.Fatalf("%s yielded, not a file of the tree", f.Path)
					}
					if !f.Uncounted {
						counted[id]++
					}
					if owner[id] == nil {
						owner[id] = map[uint64]int{}
					}
					took := 0
					for c := range all[id] {
						if f.Takes(c) {
							took++
							if o, dup := owner[id][c]; dup {
								t.Errorf("seed %d, %d shards: chunk %d of %s in shards %d and %d", seed, n, c, f.Path, o, i)
							}
							owner[id][c] = i
						}
					}
					if took == 0 {
						t.Errorf("seed %d, shard %d/%d: %s yielded, none of its chunks taken", seed, i, n, f.Path)
					}
					if n > 1 && took > 0 && took < int(all[id]) {
						split++
					}
					if (f.Chunk != 0) != (n > 1 && all[id] > 1) || f.Chunk != 0 && f.Chunk != cb {
						t.Errorf("seed %d, shard %d/%d: %s of %d chunks: Chunk %d", seed, i, n, f.Path, all[id], f.Chunk)
					}
					taken[id] = true
				}
				for _, p := range s.opened {
					if !taken[idOf[p]] {
						t.Errorf("seed %d, shard %d/%d opened %s, of which it takes nothing", seed, i, n, p)
					}
				}
			}
			got := uint64(0)
			for id := range all {
				got += uint64(len(owner[id]))
				if counted[id] != 1 {
					t.Errorf("seed %d, %d shards: a file counted by %d shards", seed, n, counted[id])
				}
			}
			if got != total {
				t.Errorf("seed %d, %d shards: %d chunks taken, the files have %d", seed, n, got, total)
			}
			if sum != whole.c {
				t.Errorf("seed %d, %d shards: counters add up to\n%+v, the whole walk's are\n%+v", seed, n, sum, whole.c)
			}
		}
		if split == 0 {
			t.Errorf("seed %d: no file split between shards: the test proves little", seed)
		}
	}
}

func addCounters(dst, src *Counters) {
	dst.Files += src.Files
	dst.Dirs += src.Dirs
	dst.Symlinks += src.Symlinks
	dst.Special += src.Special
	dst.HardLinks += src.HardLinks
	dst.Devices += src.Devices
	dst.OtherFS += src.OtherFS
	dst.RepeatedDirs += src.RepeatedDirs
	dst.RepeatedFiles += src.RepeatedFiles
	dst.ImageParts += src.ImageParts
	dst.LogicalBytes += src.LogicalBytes
}

// The walk's problems are every shard's: shard 0 counts them, the others
// pass them on as a *CountedElsewhereError naming shard 0. An unreadable
// file's, the shard counting the file.
func TestShardWalkProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), randBytes(1, 1000))
	fifo := filepath.Join(dir, "fifo")
	if err := testkit.Mkfifo(t, fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for i := range uint32(3) {
		var errs []error
		var mu sync.Mutex
		w := &Walker{Paths: []string{dir, missing, fifo}, Shard: Shard{i, 3}}
		c := w.Walk(context.Background(), func(f *File) { f.Close() }, func(p string, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
		if len(errs) != 2 {
			t.Fatalf("shard %d: warnings %q", i, errs)
		}
		for _, err := range errs {
			var ce *CountedElsewhereError
			if elsewhere := errors.As(err, &ce); elsewhere != (i != 0) || elsewhere && (ce.By != Shard{0, 3} || !strings.HasSuffix(err.Error(), "(shard 0/3 counts it)")) {
				t.Errorf("shard %d: %v", i, err)
			}
		}
		var se *SkippedError
		if !errors.As(errs[1], &se) || !errors.Is(errs[0], os.ErrNotExist) {
			t.Errorf("shard %d: %q", i, errs)
		}
		if walkCounted := c.Dirs == 1 && c.Special == 2; walkCounted != (i == 0) || i != 0 && (c.Dirs != 0 || c.Special != 0) {
			t.Errorf("shard %d: counters %+v", i, c)
		}
	}
}

// Faults.ShardChunkBytes: ShardChunkBytes without faults or a split size,
// else whole records within the test's split size (at least one).
func TestFaultsShardChunkBytes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    *Faults
		rs   uint32
		want uint64
	}{
		{nil, 128 << 10, ShardSplitBytes},
		{&Faults{}, 1 << 20, ShardSplitBytes},
		{nil, 3 << 20, ShardChunkBytes(3 << 20)},
		{&Faults{ShardSplitBytes: 256 << 10}, 128 << 10, 256 << 10},
		{&Faults{ShardSplitBytes: 300 << 10}, 128 << 10, 256 << 10},
		{&Faults{ShardSplitBytes: 256 << 10}, 1 << 20, 1 << 20},
	} {
		if got := c.f.ShardChunkBytes(c.rs); got != c.want {
			t.Errorf("%+v: recordsize %d: %d, want %d", c.f, c.rs, got, c.want)
		}
	}
}
