package lzjb

import (
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

// ample is a capacity with which Compress never fails: a control byte per 8
// literals and the 17 bytes the check reserves.
func ample(n int) int { return n + n/8 + 32 }

// checkAround compares Size with Compress for src at ZFS's capacities for
// its length, at an ample one, at the 8 capacities either side of the
// output size and of the smallest capacity that fits, and at extra ones
// (those < 0 are skipped).
func (sc *sizeChecker) checkAround(t testing.TB, what string, src []byte, extra ...int) {
	t.Helper()
	full, ok := sc.check(t, what, src, ample(len(src)))
	if !ok {
		t.Fatalf("%s n=%d: Compress failed with capacity %d", what, len(src), ample(len(src)))
	}
	ds := append(compresstest.ZFSLimits(len(src)), extra...)
	for k := -8; k <= 8; k++ {
		// The check fails when a group would start at op ≥ D − 17, so
		// the smallest capacity that fits is at most c + 17.
		ds = append(ds, full+k, full+groupMax+k)
	}
	for _, d := range ds {
		if d >= 0 {
			sc.check(t, what, src, d)
		}
	}
}

func TestSizeSmallLimits(t *testing.T) {
	t.Parallel()
	var c Compressor
	for _, limit := range []int{-1 << 40, -1, 0, 1, 16, 17} {
		if n, ok := c.Size(nil, limit); !ok || n != 0 {
			t.Errorf("empty, limit %d: Size = %d, %v, want 0, true", limit, n, ok)
		}
		if n, ok := c.Size([]byte("hello"), limit); ok || n != 0 {
			t.Errorf("n=5 limit %d: Size = %d, %v, want 0, false", limit, n, ok)
		}
	}
	// A group may start while op < D − 17.
	if n, ok := c.Size([]byte("hello"), 18); !ok || n != 6 {
		t.Errorf("n=5 limit 18: Size = %d, %v, want 6, true", n, ok)
	}
}

// TestSizeEqualsCompress checks Size against Compress on the generators'
// inputs at tight and ZFS capacities.
func TestSizeEqualsCompress(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	var sc sizeChecker
	sizes := []int{512, 1000, 1023, 1024, 1025, 4096, 8192, 65536, 131072, 1 << 20}
	for n := 0; n <= 80; n++ {
		sizes = append(sizes, n)
	}
	for _, g := range compresstest.Generators {
		for _, n := range sizes {
			src := g.Gen(r, n)
			if n > 128<<10 && !stress.On() {
				continue // 1 MiB in the stress run (DDTSIM_STRESS=1)
			}
			sc.checkAround(t, g.Name, src, r.IntN(ample(n)+1))
		}
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

func TestSizeAllocs(t *testing.T) {
	src := compresstest.Text(rand.New(rand.NewPCG(9, 9)), 131072)
	var c Compressor
	allocs := testing.AllocsPerRun(20, func() {
		c.Size(src, len(src)-len(src)/8)
		c.Size(src, 100)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
}

// FuzzSize checks Size against Compress for arbitrary input and capacities:
// sel picks one capacity (below len(src) + 64), and every run also checks
// ZFS's capacities for the input's length and the capacities either side of
// the output size and of the smallest capacity that fits.
func FuzzSize(f *testing.F) {
	r := rand.New(rand.NewPCG(25, 26))
	f.Add([]byte("The quick brown fox jumps over the lazy dog. The quick brown fox"), uint32(0))
	f.Add([]byte{}, uint32(3))
	f.Add([]byte("a"), uint32(18))
	f.Add(make([]byte, 100), uint32(20))
	f.Add(make([]byte, 4096), uint32(0))
	f.Add(compresstest.LCG(1000), uint32(900))
	f.Add(compresstest.Fox(5000), uint32(1000))
	f.Add(compresstest.Random(r, 4096), uint32(3584))
	f.Add(compresstest.Text(r, 4096), uint32(112))
	f.Add(compresstest.Mixed(r, 8192), uint32(7168))
	f.Add(compresstest.Repetitive(r, 2000), uint32(1))
	for _, n := range []int{512, 1024, 4096, 16384} {
		for _, g := range compresstest.Generators {
			f.Add(g.Gen(r, n), uint32(compresstest.ZFSLimits(n)[0]))
		}
	}
	var sc sizeChecker
	f.Fuzz(func(t *testing.T, src []byte, sel uint32) {
		sc.checkAround(t, "fuzz", src, int(sel%uint32(len(src)+64)))
	})
}
