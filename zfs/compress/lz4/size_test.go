package lz4

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
)

// sizeChecker compares Size with Compress (compresstest.SizeChecker).
type sizeChecker struct {
	c Compressor
	compresstest.SizeChecker
}

// check compares Size with Compress at limit; it returns Compress's result.
func (sc *sizeChecker) check(t testing.TB, what string, src []byte, limit int) (int, bool) {
	t.Helper()
	return sc.Check(t, &sc.c, what, src, limit)
}

// ample is a capacity with which Compress never fails.
func ample(n int) int { return n + n/255 + 16 }

// checkAround compares Size with Compress for src at ZFS's capacities for
// its length, at an ample one, at the 8 capacities either side of the
// output size (2 for inputs over 16 KiB, which cost more) and at extra ones
// (those < 0 are skipped).
func (sc *sizeChecker) checkAround(t testing.TB, what string, src []byte, extra ...int) {
	t.Helper()
	full, ok := sc.check(t, what, src, ample(len(src)))
	if !ok {
		t.Fatalf("%s n=%d: Compress failed with capacity %d", what, len(src), ample(len(src)))
	}
	r := 8
	if len(src) > 16<<10 {
		r = 2
	}
	for d := full - r; d <= full+r; d++ {
		if d >= 0 {
			sc.check(t, what, src, d)
		}
	}
	for _, d := range append(compresstest.ZFSLimits(len(src)), extra...) {
		if d >= 0 {
			sc.check(t, what, src, d)
		}
	}
}

func TestSizeSmallLimits(t *testing.T) {
	t.Parallel()
	var c Compressor
	for _, src := range [][]byte{nil, []byte("hello"), compresstest.Fox(100)} {
		for _, limit := range []int{-1 << 40, -5, -1, 0, 1, 2, 3} {
			if n, ok := c.Size(src, limit); ok || n != 0 {
				t.Errorf("n=%d limit=%d: Size = %d, %v, want 0, false", len(src), limit, n, ok)
			}
		}
	}
	// Empty input: header and one zero token.
	if n, ok := c.Size(nil, 5); !ok || n != 5 {
		t.Errorf("empty, limit 5: Size = %d, %v, want 5, true", n, ok)
	}
}

// TestSizeEqualsCompress checks Size against Compress on the generators'
// inputs, over sizes either side of the 64 KiB variant switch, at tight and
// ZFS capacities.
func TestSizeEqualsCompress(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	var sc sizeChecker
	sizes := append([]int{}, roundTripSizes...)
	for n := 0; n <= 40; n++ {
		sizes = append(sizes, n)
	}
	for _, g := range compresstest.Generators {
		for _, n := range sizes {
			src := g.Gen(r, n)
			if n > 128<<10 && !stress.On() {
				continue // 1 MiB in the stress run (DDTSIM_STRESS=1)
			}
			sc.checkAround(t, g.Name, src, r.IntN(ample(n)+1))
			// The smallest capacity that fits, and below it.
			if n > 0 {
				full, _ := sc.check(t, g.Name, src, ample(n))
				lo := minCapacity(&sc.c, src, full)
				for d := max(lo-3, 0); d <= lo+3; d++ {
					sc.check(t, g.Name, src, d)
				}
			}
		}
	}
}

// TestSizeMaxDistance checks Size against Compress on random data repeating
// with a period around MAX_DISTANCE (65535), where only LZ4_compressCtx's
// distance check tells matches from non-matches.
func TestSizeMaxDistance(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(27, 28))
	var sc sizeChecker
	for _, period := range []int{65534, 65535, 65536} {
		pat := compresstest.Random(r, period)
		src := bytes.Repeat(pat, 3)[:180000]
		sc.checkAround(t, "period", src)
		// In the 64 KiB variant, which has no distance check.
		sc.checkAround(t, "period", src[:limit64k-1])
	}
	// Text repeating with a period of 65535 or 65536, one byte in 40
	// changed in the copies: such matches are tested after matches end
	// (the continuation test) as well as in the search.
	for _, period := range []int{65535, 65536} {
		pat := compresstest.Text(r, period)
		src := bytes.Repeat(pat, 3)
		for i := len(pat); i < len(src); i += 40 {
			src[i] ^= 0x20
		}
		sc.checkAround(t, "text period", src)
	}
}

// TestSizeZFSBlocks checks Size against Compress on blocks of every ZFS
// block size, 512 bytes to 16 MiB, at ZFS's capacities.
func TestSizeZFSBlocks(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 24))
	var sc sizeChecker
	maxSize := 16 << 20
	if !stress.On() { // 2 MiB to 16 MiB in the stress run (DDTSIM_STRESS=1)
		maxSize = 1 << 20
	}
	for n := 512; n <= maxSize; n *= 2 {
		for _, g := range compresstest.Generators {
			if n > 1<<20 && g.Name != "random" && g.Name != "mixed" {
				continue
			}
			src := g.Gen(r, n)
			for _, d := range compresstest.ZFSLimits(n) {
				sc.check(t, g.Name, src, d)
			}
		}
	}
}

// TestSizeLongRuns sweeps capacities on inputs with a very long literal run
// or a very long match, where the extra guards of emitLiterals,
// emitMatchLen and before a continuation token decide (see TestLongRuns).
func TestSizeLongRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	var sc sizeChecker
	for _, tc := range longRuns() {
		src := tc.data
		full, _ := sc.check(t, tc.name, src, ample(len(src)))
		lo := minCapacity(&sc.c, src, full)
		for d := lo - 80; d <= lo+1; d++ {
			sc.check(t, tc.name, src, d)
		}
	}
}

func TestSizeAllocs(t *testing.T) {
	src := compresstest.Text(rand.New(rand.NewPCG(9, 9)), 131072)
	var c Compressor
	allocs := testing.AllocsPerRun(20, func() {
		c.Size(src, compresstest.Capacity(len(src)))
		c.Size(src[:60000], 100)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
}

// grown returns src tiled to 65536 + grow bytes (both LZ4 variants lie in
// that range), the first half XORed with pseudo-random bytes when grow is
// odd; src itself when grow is 0.
func grown(src []byte, grow uint16) []byte {
	if grow == 0 {
		return src
	}
	n := 1<<16 + int(grow)
	b := make([]byte, n)
	if len(src) > 0 {
		for i := range b {
			b[i] = src[i%len(src)]
		}
	}
	if grow&1 == 1 {
		x := uint64(grow)
		for i := range n / 2 {
			x = x*6364136223846793005 + 1442695040888963407
			b[i] ^= byte(x >> 56)
		}
	}
	return b
}

// FuzzSize checks Size against Compress for arbitrary input and capacities:
// sel picks one capacity (below len(src) + 64), grow tiles the input past
// 64 KiB (grown), and every run also checks ZFS's capacities for the input's
// length and the 8 capacities either side of the output size.
func FuzzSize(f *testing.F) {
	r := rand.New(rand.NewPCG(25, 26))
	f.Add([]byte("The quick brown fox jumps over the lazy dog. The quick brown fox"), uint32(0), uint16(0))
	f.Add([]byte{}, uint32(3), uint16(0))
	f.Add([]byte("a"), uint32(5), uint16(0))
	f.Add(compresstest.Fox(12), uint32(17), uint16(0))
	f.Add(compresstest.Fox(13), uint32(17), uint16(0))
	f.Add(make([]byte, 100), uint32(20), uint16(0))
	f.Add(make([]byte, 4096), uint32(0), uint16(0))
	f.Add(compresstest.LCG(1000), uint32(900), uint16(0))
	f.Add(compresstest.Random(r, 4096), uint32(3584), uint16(0))
	f.Add(compresstest.Text(r, 4096), uint32(112), uint16(0))
	f.Add(compresstest.Mixed(r, 8192), uint32(7168), uint16(0))
	f.Add(compresstest.Repetitive(r, 2000), uint32(1), uint16(0))
	f.Add(compresstest.Fox(70000), uint32(1000), uint16(0))
	f.Add(compresstest.Text(r, 300), uint32(0), uint16(65535))
	f.Add(compresstest.Random(r, 64), uint32(0), uint16(11)) // 65547 bytes, half random
	f.Add(compresstest.Random(r, 999), uint32(0), uint16(10))
	f.Add([]byte{0}, uint32(0), uint16(1<<16-1))
	// Blocks of ZFS sizes at their capacities.
	for _, n := range []int{512, 1024, 4096, 16384} {
		for _, g := range compresstest.Generators {
			for _, d := range compresstest.ZFSLimits(n)[:1] {
				f.Add(g.Gen(r, n), uint32(d), uint16(0))
			}
		}
	}
	var sc sizeChecker
	f.Fuzz(func(t *testing.T, src []byte, sel uint32, grow uint16) {
		src = grown(src, grow)
		sc.checkAround(t, "fuzz", src, int(sel%uint32(len(src)+64)))
	})
}
