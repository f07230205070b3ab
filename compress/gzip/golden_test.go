package gzip

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

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
// package's c. (The same harness lives in compress/zstd/golden_test.go.)

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

// goldenLimit is the largest total PSIZE error (percent) accepted for a case,
// in the pure-Go build (Exact false) and the zlib build (Exact true): the
// measured figure rounded up a little (see TestGolden's log).
type goldenLimit struct {
	level    int
	pure, c  float64 // max total PSIZE error, %
	pureDiff int     // max blocks differing, pure-Go build
	cDiff    int     // max blocks differing, zlib build
}

// Measured (760 listed blocks per case, of which 5 embedded):
//
//	case               pure Go: differ  error     zlib 1.2.13: differ  error
//	gzip1-128k-a12             80/760   +0.170%                 0/760  0 (exact)
//	gzip-128k-a12 (6)          57/760   +0.055%                 3/760  +0.033%
//	gzip9-128k-a12             59/760   +0.142%                 5/760  −0.011%
//	v21-gzip-128k-a12 (6)      57/760   +0.055%                 3/760  +0.033%
//
// The zlib build's differences are the Linux kernel's deflate
// (lib/zlib_deflate) disagreeing with userland zlib on a few blocks.
var goldenLimits = map[string]goldenLimit{
	"gzip1-128k-a12":    {level: 1, pure: 0.20, c: 0.001, pureDiff: 85, cDiff: 0},
	"gzip-128k-a12":     {level: 6, pure: 0.08, c: 0.04, pureDiff: 62, cDiff: 3},
	"gzip9-128k-a12":    {level: 9, pure: 0.17, c: 0.02, pureDiff: 64, cDiff: 5},
	"v21-gzip-128k-a12": {level: 6, pure: 0.08, c: 0.04, pureDiff: 62, cDiff: 3},
}

// TestGolden compresses every stored block of the gzip golden cases and
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
			if want := map[int]string{1: "gzip-1", 6: "gzip", 9: "gzip-9"}[lim.level]; c.Props["compression"] != want {
				t.Fatalf("compression=%s, want %s", c.Props["compression"], want)
			}
			z, err := New(lim.level)
			if err != nil {
				t.Fatal(err)
			}
			res := measureGolden(t, c, func(dst, src []byte) (int, bool) {
				n, err := z.Compress(dst, src)
				return n, err != nil
			})
			maxErr, maxDiff := lim.pure, lim.pureDiff
			if Exact {
				maxErr, maxDiff = lim.c, lim.cDiff
			}
			t.Logf("Exact=%v gzip-%d: %s", Exact, lim.level, res)
			if res.errPct() > maxErr || res.differ > maxDiff {
				t.Errorf("gzip-%d: total PSIZE error %.4f%% (limit %.2f%%), %d blocks differ (limit %d)",
					lim.level, res.errPct(), maxErr, res.differ, maxDiff)
			}
		})
	}
}
