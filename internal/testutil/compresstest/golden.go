package compresstest

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
)

// ---------------------------------------------------------------------------
// Golden harness: per-block PSIZE of real ZFS vs the PSIZE derived from a
// compressor's c.

// GoldenMain is a TestMain for packages that use the golden harness: it runs
// the tests, removes what the golden inputs left behind (golden.Cleanup) and
// exits with the tests' code.
func GoldenMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	os.Exit(code)
}

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

// Rules models zio_write_compress() on a single-disk pool of ashift 12
// (spa_min_alloc = spa_gcd_alloc = 4096) for one OpenZFS release.
type Rules struct {
	V23 bool // 2.3.0+: band P6 (max size threshold); else 2.1.x: band P4
}

const (
	alloc    = 4096 // 2^ashift
	embedMax = 112  // BPE_PAYLOAD_SIZE
)

// RulesFor returns the rules of a golden case's release; it fails the test
// for a case the harness does not model (other than a single-disk ashift-12
// pool without dedup, or another release than 2.3.2 and 2.1.11).
func RulesFor(t testing.TB, c golden.Case) Rules {
	t.Helper()
	if c.Ashift != 12 || c.Vdevs != "stripe 1" || c.Props["dedup"] == "on" {
		t.Fatalf("%s: harness handles single-disk ashift-12 pools without dedup only", c.Name)
	}
	switch c.Release {
	case "2.3.2":
		return Rules{V23: true}
	case "2.1.11":
		return Rules{}
	}
	t.Fatalf("%s: release %s not handled", c.Name, c.Release)
	return Rules{}
}

// Capacity returns D for a block of l bytes (docs/zfs-semantics.md §4.3).
func (r Rules) Capacity(l int) int {
	d := l - l/8
	if r.V23 {
		d -= d % alloc
		if d < alloc {
			d = embedMax
		}
	}
	return d
}

// PSize derives the block's fate from the compressor's result: c bytes, or
// failed. It returns PSIZE (L when stored uncompressed) or embedded.
func (r Rules) PSize(l, c int, failed bool) (psize int, embedded bool) {
	if failed || c > r.Capacity(l) {
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

// BlockCompressor compresses src with capacity len(dst) the way ZFS would
// for a golden case (including any pre-pass); failed reports ZFS's "store as
// is".
type BlockCompressor func(dst, src []byte) (c int, failed bool)

// StoredBlocks returns the rules of the golden case name and a copy of the
// data of every block that it stores (the listed blocks that are not
// embedded), in a fixed order.
func StoredBlocks(t testing.TB, name string) (Rules, [][]byte) {
	t.Helper()
	files := goldenInputs(t)
	gc, err := golden.FindCase(name)
	if err != nil {
		t.Fatal(err)
	}
	rules := RulesFor(t, gc)
	var srcs [][]byte
	for _, b := range goldenBlocks(t, gc) {
		if !b.embedded {
			srcs = append(srcs, append([]byte(nil), blockData(t, files, b, make([]byte, b.lsize))...))
		}
	}
	return rules, srcs
}

// TotalPSize returns Σ PSIZE over the blocks srcs (embedded ones count 0)
// when comp compresses each with the rules' capacity.
func (r Rules) TotalPSize(srcs [][]byte, comp BlockCompressor) int64 {
	var sum int64
	dst := make([]byte, 1<<20)
	for _, s := range srcs {
		c, failed := comp(dst[:r.Capacity(len(s))], s)
		if p, emb := r.PSize(len(s), c, failed); !emb {
			sum += int64(p)
		}
	}
	return sum
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

// measureGolden runs comp over every listed block of c.
func measureGolden(t testing.TB, c golden.Case, comp BlockCompressor) goldenResult {
	t.Helper()
	files := goldenInputs(t)
	rules := RulesFor(t, c)
	var res goldenResult
	var buf, dst []byte
	for _, b := range goldenBlocks(t, c) {
		if cap(buf) < b.lsize {
			buf = make([]byte, b.lsize)
			dst = make([]byte, b.lsize)
		}
		src := blockData(t, files, b, buf)
		cc, failed := comp(dst[:rules.Capacity(b.lsize)], src)
		ps, emb := rules.PSize(b.lsize, cc, failed)
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

// GoldenLimit is the largest total PSIZE error (percent) and number of
// differing blocks accepted for a golden case, in the pure-Go build and the
// build that calls the C library: the measured figures rounded up a little.
type GoldenLimit struct {
	Level    int     // the compressor's level
	Pure, C  float64 // max total PSIZE error, %
	PureDiff int     // max blocks differing, pure-Go build
	CDiff    int     // max blocks differing, C library build
}

// Golden is the golden test of one compressor.
type Golden struct {
	// Limits holds the cases to measure, by golden case name.
	Limits map[string]GoldenLimit
	// Compression returns the compression property value of a level; the
	// case must have been written with it.
	Compression func(level int) string
	// New returns the compressor of a level, doing what ZFS does under the
	// case's rules.
	New func(t testing.TB, level int, rules Rules) BlockCompressor
	// C is set in the build that calls the C library: the C limits apply.
	C bool
	// Label names the compressor and build in the log and in errors.
	Label func(level int) string
	// IgnoresRules is set when New's compressor does not depend on the
	// Rules (gzip: no early abort): the cases of one level, whatever
	// their release, then share the results of the blocks they have in
	// common (memoize).
	IgnoresRules bool
}

// memoKey names one compression of the golden harness: the compressor
// (its label, and the rules unless they do not matter), the capacity and
// the block's content.
type memoKey struct {
	label    string
	rules    Rules
	capacity int
	sum      [sha256.Size]byte
}

// memoVal is the result of a memoKey's compression, made once.
type memoVal struct {
	once   sync.Once
	c      int
	failed bool
}

// memoize returns comp with its results kept in m by memoKey: a block
// that the case has twice, or another case of the same compressor has
// too (two releases' cases, copies in the input tree), is compressed
// once. The compressors are deterministic, and start every block from a
// fresh state as ZFS does (each package's TestFreshEqualsReused, TestReuse):
// the same block and capacity give the same c.
func memoize(m *sync.Map, label string, rules Rules, comp BlockCompressor) BlockCompressor {
	return func(dst, src []byte) (int, bool) {
		k := memoKey{label: label, rules: rules, capacity: len(dst), sum: sha256.Sum256(src)}
		v, _ := m.LoadOrStore(k, &memoVal{})
		e := v.(*memoVal)
		e.once.Do(func() { e.c, e.failed = comp(dst, src) })
		return e.c, e.failed
	}
}

// Run compresses every listed block of each case of g.Limits (a parallel
// subtest per case, by name) and compares the PSIZE that ZFS derives from c
// with what real ZFS wrote: the total PSIZE error and the number of
// differing blocks must be within the limits of the build. It logs the
// figures; with -short it skips (each case compresses 55 MB).
func (g Golden) Run(t *testing.T) {
	if testing.Short() {
		t.Skip("golden cases compress 55 MB each")
	}
	names := make([]string, 0, len(g.Limits))
	for n := range g.Limits {
		names = append(names, n)
	}
	sort.Strings(names)
	var memo sync.Map
	for _, name := range names {
		lim := g.Limits[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := golden.FindCase(name)
			if err != nil {
				t.Fatal(err)
			}
			if want := g.Compression(lim.Level); c.Props["compression"] != want {
				t.Fatalf("compression=%s, want %s", c.Props["compression"], want)
			}
			rules := RulesFor(t, c)
			key := rules
			if g.IgnoresRules {
				key = Rules{}
			}
			res := measureGolden(t, c, memoize(&memo, g.Label(lim.Level), key, g.New(t, lim.Level, rules)))
			maxErr, maxDiff := lim.Pure, lim.PureDiff
			if g.C {
				maxErr, maxDiff = lim.C, lim.CDiff
			}
			label := g.Label(lim.Level)
			t.Logf("%s: %s", label, res)
			if res.errPct() > maxErr || res.differ > maxDiff {
				t.Errorf("%s: total PSIZE error %.4f%% (limit %.2f%%), %d blocks differ (limit %d)",
					label, res.errPct(), maxErr, res.differ, maxDiff)
			}
		})
	}
}
