package zstd

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/compress/lz4"
	"github.com/ddtsim/ddtsim/internal/golden"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	os.Exit(code)
}

// ---------------------------------------------------------------------------
// Golden harness: per-block PSIZE of real ZFS vs the PSIZE derived from this
// package's c. (The same harness lives in compress/gzip/golden_test.go.)

// goldenBlock is one level-0 block that zdb -ddddd lists for a golden case
// (holes are not listed).
type goldenBlock struct {
	path     string // pool-relative path, as zdb prints it
	off      int64  // logical offset in the file, bytes
	lsize    int    // LSIZE, bytes
	psize    int    // PSIZE, bytes (an embedded block: the payload length c)
	embedded bool
}

var inputFiles struct {
	once  sync.Once
	files map[string][]byte // pool-relative path → content
	err   error
}

// goldenInputs reads every regular file of the golden input tree once per
// test process (about 55 MB).
func goldenInputs(t testing.TB) map[string][]byte {
	t.Helper()
	inputFiles.once.Do(func() {
		roots, err := golden.Inputs()
		if err != nil {
			inputFiles.err = err
			return
		}
		files := map[string][]byte{}
		for _, root := range roots {
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				rel, ok := golden.RelPath(p)
				if !ok {
					return fmt.Errorf("no golden path for %s", p)
				}
				b, err := os.ReadFile(p)
				files[rel] = b
				return err
			})
			if err != nil {
				inputFiles.err = err
				return
			}
		}
		inputFiles.files = files
	})
	if inputFiles.err != nil {
		t.Fatal(inputFiles.err)
	}
	return inputFiles.files
}

// goldenBlocks returns a case's listed blocks in a fixed order.
func goldenBlocks(t testing.TB, c golden.Case) []goldenBlock {
	t.Helper()
	objs, err := c.Objects()
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 0, len(objs))
	for p := range objs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []goldenBlock
	for _, p := range paths {
		for _, b := range objs[p] {
			out = append(out, goldenBlock{path: p, off: int64(b.Offset), lsize: int(b.LSize), psize: int(b.PSize), embedded: b.Embedded})
		}
	}
	return out
}

// blockData returns the block's LSIZE bytes of the file (zero-padded past
// EOF) in buf.
func blockData(t testing.TB, files map[string][]byte, b goldenBlock, buf []byte) []byte {
	t.Helper()
	f, ok := files[b.path]
	if !ok {
		t.Fatalf("%s: not in the golden inputs", b.path)
	}
	buf = buf[:b.lsize]
	clear(buf)
	if b.off < int64(len(f)) {
		copy(buf, f[b.off:])
	}
	return buf
}

// zfsRules models zio_write_compress() on a single-disk pool of ashift 12
// (spa_min_alloc = spa_gcd_alloc = 4096) for one OpenZFS release.
type zfsRules struct {
	v23 bool // 2.3.0+: band P6 (max size threshold); else 2.1.x: band P4
}

const (
	alloc       = 4096 // 2^ashift
	embedMax    = 112  // BPE_PAYLOAD_SIZE
	zstdAbortSz = 131072
)

func rulesFor(t testing.TB, c golden.Case) zfsRules {
	t.Helper()
	if c.Ashift != 12 || c.Vdevs != "stripe 1" || c.Props["dedup"] == "on" {
		t.Fatalf("%s: harness handles single-disk ashift-12 pools without dedup only", c.Name)
	}
	switch c.Release {
	case "2.3.2":
		return zfsRules{v23: true}
	case "2.1.11":
		return zfsRules{}
	}
	t.Fatalf("%s: release %s not handled", c.Name, c.Release)
	return zfsRules{}
}

// capacity returns D for a block of l bytes (docs/zfs-semantics.md §4.3).
func (r zfsRules) capacity(l int) int {
	d := l - l/8
	if r.v23 {
		d -= d % alloc
		if d < alloc {
			d = embedMax
		}
	}
	return d
}

// psize derives the block's fate from the compressor's result: c bytes, or
// failed. It returns PSIZE (L when stored uncompressed) or embedded.
func (r zfsRules) psize(l, c int, failed bool) (psize int, embedded bool) {
	if failed || c > r.capacity(l) {
		return l, false
	}
	if c <= embedMax {
		return c, true
	}
	rounded := (c + alloc - 1) / alloc * alloc
	if rounded >= l {
		return l, false
	}
	return rounded, false
}

// goldenResult compares predicted with real PSIZEs over a case's blocks.
type goldenResult struct {
	blocks   int   // blocks listed (stored and embedded)
	differ   int   // blocks whose PSIZE or embedded state differs
	embExact int   // embedded blocks whose c equals zdb's payload length
	embedded int   // embedded blocks in the listing
	real     int64 // Σ real PSIZE of stored blocks, bytes
	pred     int64 // Σ predicted PSIZE of the same blocks (0 if predicted embedded), bytes
	absDiff  int64 // Σ |predicted − real| per block, bytes
}

// errPct is the total PSIZE error in percent of the real total.
func (g goldenResult) errPct() float64 {
	return 100 * math.Abs(float64(g.pred-g.real)) / float64(g.real)
}

func (g goldenResult) String() string {
	return fmt.Sprintf("%d/%d blocks differ, total PSIZE real %d predicted %d (%+d bytes, %.4f%%), Σ|per-block diff| %d, embedded c exact %d/%d",
		g.differ, g.blocks, g.real, g.pred, g.pred-g.real, g.errPct(), g.absDiff, g.embExact, g.embedded)
}

// compressFunc compresses src with capacity len(dst) the way ZFS would for
// the case (including any pre-pass); failed reports ZFS's "store as is".
type compressFunc func(dst, src []byte) (c int, failed bool)

// measureGolden runs comp over every listed block of c.
func measureGolden(t testing.TB, c golden.Case, comp compressFunc) goldenResult {
	t.Helper()
	files := goldenInputs(t)
	rules := rulesFor(t, c)
	var res goldenResult
	var buf, dst []byte
	for _, b := range goldenBlocks(t, c) {
		if cap(buf) < b.lsize {
			buf = make([]byte, b.lsize)
			dst = make([]byte, b.lsize)
		}
		src := blockData(t, files, b, buf)
		cc, failed := comp(dst[:rules.capacity(b.lsize)], src)
		ps, emb := rules.psize(b.lsize, cc, failed)
		res.blocks++
		if b.embedded {
			res.embedded++
			if emb && cc == b.psize {
				res.embExact++
			}
			if !emb {
				res.differ++
				res.pred += int64(ps)
				res.absDiff += int64(ps)
			}
			continue
		}
		res.real += int64(b.psize)
		if emb {
			ps = 0
		}
		res.pred += int64(ps)
		if emb || ps != b.psize {
			res.differ++
			res.absDiff += int64(max(ps-b.psize, b.psize-ps))
		}
	}
	return res
}

// goldenLimit is the largest total PSIZE error (percent) and number of
// differing blocks accepted for a case, in the pure-Go build and the
// libzstd build: the measured figures rounded up a little (see TestGolden's
// log and the table above goldenLimits).
type goldenLimit struct {
	level    int     // 1..19, or −N for zstd-fast-N
	pure, c  float64 // max total PSIZE error, %
	pureDiff int     // max blocks differing, pure-Go build
	cDiff    int     // max blocks differing, libzstd build
}

// Measured (stored + embedded blocks listed; the pre-pass of §4.5 applied on
// 2.3.2 for zstd-3 and zstd-19):
//
//	case                    pure Go: differ  error     libzstd 1.5.4: differ  error
//	zstd-128k-a12 (zstd-3)         25/760   −0.119%                    3/760  −0.033%
//	zstd19-128k-a12               143/760   +1.862%                   26/760  −0.292%
//	zstdfast1-128k-a12            104/760   +0.400%                    6/760  −0.061%
//	zstd1-1m-a12                   37/426   −0.135%                   11/426  −0.051%
//	v21-zstd-128k-a12 (zstd-3)     25/760   −0.119%                    3/760  −0.033%
//
// The pure-Go build is off by more than 0.5% at zstd-19: klauspost/compress
// has no counterpart of libzstd's optimal parser (btultra2); see settingFor,
// also for how zstd-fast-1 is fitted. The libzstd build's
// differences come from 1.5.4 not being the 1.4.5 that ZFS bundles; the
// limits below are for 1.5.4 (another version may need re-measuring).
var goldenLimits = map[string]goldenLimit{
	"zstd-128k-a12":      {level: 3, pure: 0.15, c: 0.04, pureDiff: 30, cDiff: 3},
	"zstd19-128k-a12":    {level: 19, pure: 1.95, c: 0.32, pureDiff: 150, cDiff: 28},
	"zstdfast1-128k-a12": {level: -1, pure: 0.45, c: 0.07, pureDiff: 110, cDiff: 6},
	"zstd1-1m-a12":       {level: 1, pure: 0.16, c: 0.06, pureDiff: 41, cDiff: 11},
	"v21-zstd-128k-a12":  {level: 3, pure: 0.15, c: 0.04, pureDiff: 30, cDiff: 3},
}

// goldenCompression is the compression property value of a level.
func goldenCompression(level int) string {
	switch {
	case level == 3:
		return "zstd"
	case level == -1:
		return "zstd-fast-1"
	case level < 0:
		return fmt.Sprintf("zstd-fast-%d", -level)
	}
	return fmt.Sprintf("zstd-%d", level)
}

// zfsZstd is zfs_zstd_compress_buf() (module/zstd/zfs_zstd.c, 2.3.x) for a
// level: on 2.2.0+ (early abort) with a zstd level ≥ 3 and a block of at
// least 128 KiB, ZFS-LZ4 runs first with capacity D; if its c is not below
// D, zstd-1 runs with capacity D and the block is stored uncompressed unless
// it fits. Then the requested level runs (docs/zfs-semantics.md §4.5).
type zfsZstd struct {
	earlyAbort bool
	z, z1      *Compressor
	l4         lz4.Compressor
}

func newZfsZstd(t testing.TB, level int, earlyAbort bool) *zfsZstd {
	t.Helper()
	z, err := New(level)
	if err != nil {
		t.Fatal(err)
	}
	z1, err := New(1)
	if err != nil {
		t.Fatal(err)
	}
	return &zfsZstd{earlyAbort: earlyAbort && level >= 3, z: z, z1: z1}
}

func (s *zfsZstd) compress(dst, src []byte) (int, bool) {
	if s.earlyAbort && len(src) >= zstdAbortSz {
		if n, err := s.l4.Compress(dst, src); err != nil || n >= len(dst) {
			if n, err := s.z1.Compress(dst, src); err != nil || n > len(dst) {
				return 0, true
			}
		}
	}
	n, err := s.z.Compress(dst, src)
	return n, err != nil
}

// TestGolden compresses every stored block of the zstd golden cases and
// compares the PSIZE that ZFS derives from c with what real ZFS wrote.
func TestGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("golden cases compress 55 MB each")
	}
	names := make([]string, 0, len(goldenLimits))
	for n := range goldenLimits {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		lim := goldenLimits[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := golden.FindCase(name)
			if err != nil {
				t.Fatal(err)
			}
			if want := goldenCompression(lim.level); c.Props["compression"] != want {
				t.Fatalf("compression=%s, want %s", c.Props["compression"], want)
			}
			zz := newZfsZstd(t, lim.level, rulesFor(t, c).v23)
			res := measureGolden(t, c, zz.compress)
			maxErr, maxDiff := lim.pure, lim.pureDiff
			if LibraryVersion != 0 {
				maxErr, maxDiff = lim.c, lim.cDiff
			}
			t.Logf("%s, libzstd %d: %s", goldenCompression(lim.level), LibraryVersion, res)
			if res.errPct() > maxErr || res.differ > maxDiff {
				t.Errorf("%s: total PSIZE error %.4f%% (limit %.2f%%), %d blocks differ (limit %d)",
					name, res.errPct(), maxErr, res.differ, maxDiff)
			}
		})
	}
}
