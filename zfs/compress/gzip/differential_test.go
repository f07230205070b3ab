//go:build zlib

package gzip

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/zfs/compress/gzip/internal/czlib"
)

// The differential tests (-tags zlib) compare the port of the kernel's
// deflate with userland C zlib (the system's, 1.2.13 here) called with
// ZFS's parameters. By construction the two agree except for one rule: the
// kernel's zlib_tr_tally() ends a block early at levels 3..9 when its guess
// says so (trees.mustFlush); zlib 1.2.13 has no such rule. So for every
// input and level:
//
//   - the port with that rule dropped (userland) must equal C zlib byte for
//     byte;
//   - the port itself must equal C zlib byte for byte at levels 1 and 2,
//     and may differ at 3..9 only where the rule fired (the test counts
//     those inputs and names the rule).

// diffInput is one input of the differential tests.
type diffInput struct {
	name string
	src  []byte
}

// diffInputs returns varied inputs: every generator of compresstest at
// sizes from 0 to 300,000 bytes (over two window slides), and a few made to
// stress the matcher (long runs, a period just under the window, text
// repeated at a distance of exactly MAX_DIST).
func diffInputs() []diffInput {
	r := rand.New(rand.NewPCG(21, 22))
	var in []diffInput
	gens := append(append([]compresstest.Generator{}, compresstest.LevelGenerators...), compresstest.Generators...)
	for _, g := range gens {
		for _, n := range []int{0, 1, 2, 3, 4, 7, 100, 259, 262, 1000, 4096, 16383, 32768, 65536, 65537, 131072, 300000} {
			in = append(in, diffInput{fmt.Sprintf("%s-%d", g.Name, n), g.Gen(r, n)})
		}
	}
	in = append(in,
		diffInput{"lcg-131072", compresstest.LCG(131072)},
		diffInput{"fox-131072", compresstest.Fox(131072)},
		diffInput{"ab-run", bytes.Repeat([]byte("ab"), 70000)},
		diffInput{"byte-run", bytes.Repeat([]byte{7}, 131072)},
	)
	// A random block repeated with a period just below the window and at
	// MAX_DIST: matches at the edge of what longest_match may reach.
	for _, period := range []int{maxDist - 1, maxDist, maxDist + 1, wSize - 1} {
		blk := compresstest.Random(r, period)
		src := make([]byte, 0, 131072)
		for len(src) < 131072 {
			src = append(src, blk...)
		}
		in = append(in, diffInput{fmt.Sprintf("period-%d", period), src[:131072]})
	}
	// Text and random halves interleaved in 4 KiB runs: blocks that the
	// kernel's truncation rule cuts.
	src := make([]byte, 0, 131072)
	for len(src) < 131072 {
		src = append(src, compresstest.ShortText(r, 4096)...)
		src = append(src, compresstest.Random(r, 4096)...)
	}
	in = append(in, diffInput{"text-random-4k", src})
	return in
}

// allLevels are the ZFS gzip levels.
var allLevels = []int{1, 2, 3, 4, 5, 6, 7, 8, 9}

// differ compares the port with C zlib on src at levels; it returns, per
// level, whether the port's output differed from C zlib's (which it must
// then owe to the truncation rule).
func differ(t testing.TB, what string, src []byte, levels []int, ports, userland [MaxLevel + 1]*Compressor, cs [MaxLevel + 1]*czlib.Compressor, out *[3][]byte) (diff [MaxLevel + 1]bool) {
	t.Helper()
	d := len(src) + len(src)/100 + 64
	for i := range out {
		if cap(out[i]) < d {
			out[i] = make([]byte, d)
		}
	}
	for _, l := range levels {
		nc, err := cs[l].Compress(out[0][:d], src)
		if err != nil {
			t.Fatalf("%s gzip-%d: C zlib: %v", what, l, err)
		}
		nk, err := ports[l].Compress(out[1][:d], src)
		if err != nil {
			t.Fatalf("%s gzip-%d: port: %v", what, l, err)
		}
		nu, err := userland[l].Compress(out[2][:d], src)
		if err != nil {
			t.Fatalf("%s gzip-%d: port without the truncation rule: %v", what, l, err)
		}
		c, k, u := out[0][:nc], out[1][:nk], out[2][:nu]
		if !bytes.Equal(u, c) {
			t.Errorf("%s gzip-%d: the port without the kernel's truncation rule differs from C zlib %s (%d bytes, C %d; first difference at byte %d)",
				what, l, czlib.Version(), nu, nc, firstDiff(u, c))
		}
		if !bytes.Equal(k, c) {
			diff[l] = true
			if l <= 2 {
				t.Errorf("%s gzip-%d: the port differs from C zlib (%d bytes, C %d) at a level where the kernel's rules are zlib 1.2.13's", what, l, nk, nc)
			}
		}
	}
	return diff
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// compressors returns the port, the port without the kernel's truncation
// rule, and C zlib, at every level.
func compressors(t testing.TB) (ports, userland [MaxLevel + 1]*Compressor, cs [MaxLevel + 1]*czlib.Compressor) {
	t.Helper()
	var err error
	for l := MinLevel; l <= MaxLevel; l++ {
		ports[l], _ = New(l)
		userland[l], _ = New(l)
		userland[l].d.userland = true
		if cs[l], err = czlib.New(l); err != nil {
			t.Fatal(err)
		}
	}
	return
}

// TestDifferential compares the port with C zlib on diffInputs at levels
// 1..9 (see the rules above) and logs, per level, on how many inputs the
// kernel's truncation rule made its stream differ from zlib 1.2.13's.
func TestDifferential(t *testing.T) {
	t.Parallel()
	ports, userland, cs := compressors(t)
	var out [3][]byte
	var count [MaxLevel + 1]int
	in := diffInputs()
	for _, x := range in {
		for l, d := range differ(t, x.name, x.src, allLevels, ports, userland, cs, &out) {
			if d {
				count[l]++
			}
		}
	}
	t.Logf("C zlib %s; %d inputs; differing from it by the kernel's block-truncation rule (zlib_tr_tally), per level 1..9: %v",
		czlib.Version(), len(in), count[1:])
	if count[6] == 0 || count[9] == 0 {
		t.Errorf("the truncation rule never fired at gzip-6 or gzip-9: the inputs no longer exercise it")
	}
}

// TestDifferentialGolden compares the port with C zlib on every stored
// block of the golden input tree (the 755 blocks of gzip-128k-a12) at levels
// 1, 6 and 9, and every 7th block at the other levels (all blocks at every
// level take over a minute on a busy machine).
func TestDifferentialGolden(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("compresses the golden tree 9 times over, twice")
	}
	_, srcs := compresstest.StoredBlocks(t, "gzip-128k-a12")
	ports, userland, cs := compressors(t)
	var out [3][]byte
	var count, tried [MaxLevel + 1]int
	for i, src := range srcs {
		levels := []int{1, 6, 9}
		if i%7 == 0 {
			levels = allLevels
		}
		diff := differ(t, fmt.Sprintf("golden block %d", i), src, levels, ports, userland, cs, &out)
		for _, l := range levels {
			tried[l]++
			if diff[l] {
				count[l]++
			}
		}
	}
	for l := MinLevel; l <= MaxLevel; l++ {
		t.Logf("C zlib %s, gzip-%d: %d of %d golden blocks differ from it by the kernel's block-truncation rule (zlib_tr_tally)",
			czlib.Version(), l, count[l], tried[l])
	}
}

// FuzzDifferential (-tags zlib): on any input and level, the port without
// the kernel's truncation rule equals C zlib byte for byte, and the port
// differs from C zlib only at levels 3..9.
func FuzzDifferential(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint8(6))
	f.Add(compresstest.LCG(3000), uint8(1))
	f.Add(bytes.Repeat([]byte("abcabd"), 12000), uint8(9))
	ports, userland, cs := compressors(f)
	var out [3][]byte
	f.Fuzz(func(t *testing.T, src []byte, level uint8) {
		l := 1 + int(level)%9
		differ(t, "fuzz input", src, []int{l}, ports, userland, cs, &out)
	})
}

// TestGoldenUserlandZlib measures C zlib (the system's) on the gzip golden
// cases: where the kernel's block-truncation rule changes a block's size
// enough to move its PSIZE, userland zlib gets it wrong (3 blocks at
// gzip-6, 5 at gzip-9 with 1.2.13; the limits are those figures).
func TestGoldenUserlandZlib(t *testing.T) {
	t.Parallel()
	compresstest.Golden{
		Limits: map[string]compresstest.GoldenLimit{
			"gzip1-128k-a12":    {Level: 1, C: 0, CDiff: 0},
			"gzip-128k-a12":     {Level: 6, C: 0.04, CDiff: 3},
			"gzip9-128k-a12":    {Level: 9, C: 0.02, CDiff: 5},
			"v21-gzip-128k-a12": {Level: 6, C: 0.04, CDiff: 3},
		},
		Compression: func(level int) string { return map[int]string{1: "gzip-1", 6: "gzip", 9: "gzip-9"}[level] },
		New: func(t testing.TB, level int, _ compresstest.Rules) compresstest.BlockCompressor {
			z, err := czlib.New(level)
			if err != nil {
				t.Fatal(err)
			}
			return func(dst, src []byte) (int, bool) {
				n, err := z.Compress(dst, src)
				return n, err != nil
			}
		},
		C:     true,
		Label: func(level int) string { return fmt.Sprintf("C zlib %s gzip-%d", czlib.Version(), level) },
	}.Run(t)
}

// BenchmarkCompressC (-tags zlib) is BenchmarkCompress with C zlib, for
// comparison.
func BenchmarkCompressC(b *testing.B) {
	compresstest.Leveled{
		New:  func(l int) (compresstest.LevelCompressor, error) { return newCLevel(l) },
		Name: func(l int) string { return fmt.Sprintf("gzip-%d", l) },
	}.Bench(b, []int{1, 6, 9})
}

// cLevel is C zlib as a compresstest.LevelCompressor.
type cLevel struct {
	*czlib.Compressor
	level int
}

func newCLevel(l int) (cLevel, error) {
	c, err := czlib.New(l)
	return cLevel{c, l}, err
}

func (c cLevel) Level() int { return c.level }

// BenchmarkBlocks (-tags zlib) compresses the 128 KiB blocks of the
// benchmark data set (compresstest.BenchBlocks; scripts/bench-gzip-zstd.sh
// passes its files) at gzip-1, 6 and 9 with capacity D = L − L/8: the port
// ("gzip-N") and C zlib ("czlib-gzip-N"), one fresh state per input.
func BenchmarkBlocks(b *testing.B) {
	compresstest.BenchBlocks(b, func() []compresstest.BlockCase {
		var cases []compresstest.BlockCase
		dst := make([]byte, compresstest.BlockSize)
		for _, l := range []int{1, 6, 9} {
			p, _ := New(l)
			c, err := czlib.New(l)
			if err != nil {
				b.Fatal(err)
			}
			size := func(compress func(dst, src []byte) (int, error)) func(blk []byte) int {
				return func(blk []byte) int {
					n, err := compress(dst[:compresstest.Capacity(len(blk))], blk)
					if err != nil {
						return len(blk)
					}
					return n
				}
			}
			cases = append(cases,
				compresstest.BlockCase{Name: fmt.Sprintf("gzip-%d", l), Size: size(p.Compress)},
				compresstest.BlockCase{Name: fmt.Sprintf("czlib-gzip-%d", l), Size: size(c.Compress)})
		}
		return cases
	})
}
