package zle

import (
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
)

// sizeChecker compares Size with Compress (compresstest.SizeChecker).
type sizeChecker struct {
	compresstest.SizeChecker
}

// sizer is the package's functions as a compresstest.Sizer.
type sizer struct{}

func (sizer) Compress(dst, src []byte) (int, error)  { return Compress(dst, src) }
func (sizer) Size(src []byte, limit int) (int, bool) { return Size(src, limit) }

// check compares Size with Compress at limit; it returns Compress's result.
func (sc *sizeChecker) check(t testing.TB, what string, src []byte, limit int) (int, bool) {
	t.Helper()
	return sc.Check(t, sizer{}, what, src, limit)
}

// ample is a capacity with which Compress never fails: a length byte per 64
// literals and the room a literal run must find.
func ample(n int) int { return n + n/64 + 2*zleN }

// checkAround compares Size with Compress for src at ZFS's capacities for
// its length, at an ample one, at the capacities either side of the output
// size and of where the room check of a literal run decides (c + 64), and
// at extra ones (those < 0 are skipped).
func (sc *sizeChecker) checkAround(t testing.TB, what string, src []byte, extra ...int) {
	t.Helper()
	full, ok := sc.check(t, what, src, ample(len(src)))
	if !ok {
		t.Fatalf("%s n=%d: Compress failed with capacity %d", what, len(src), ample(len(src)))
	}
	ds := append(compresstest.ZFSLimits(len(src)), extra...)
	for k := -8; k <= 8; k++ {
		ds = append(ds, full+k, full+zleN+k)
	}
	for _, d := range ds {
		if d >= 0 {
			sc.check(t, what, src, d)
		}
	}
}

func TestSizeSmallLimits(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{-1 << 40, -1, 0, 1, 2} {
		if n, ok := Size(nil, limit); !ok || n != 0 {
			t.Errorf("empty, limit %d: Size = %d, %v, want 0, true", limit, n, ok)
		}
		if n, ok := Size([]byte("hello"), limit); ok || n != 0 {
			t.Errorf("n=5 limit %d: Size = %d, %v, want 0, false", limit, n, ok)
		}
	}
	// A literal run needs 64 bytes of room after its length byte; a zero
	// run needs only op < D − 1.
	if n, ok := Size([]byte("hello"), 64); ok || n != 0 {
		t.Errorf("n=5 limit 64: Size = %d, %v, want 0, false", n, ok)
	}
	if n, ok := Size([]byte("hello"), 65); !ok || n != 6 {
		t.Errorf("n=5 limit 65: Size = %d, %v, want 6, true", n, ok)
	}
	if n, ok := Size(make([]byte, 500), 4); !ok || n != 3 {
		t.Errorf("500 zeros, limit 4: Size = %d, %v, want 3, true", n, ok)
	}
}

// TestSizeEqualsCompress checks Size against Compress on the generators'
// inputs (and sparse data) at tight and ZFS capacities.
func TestSizeEqualsCompress(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	sizes := []int{191, 192, 193, 512, 1000, 4096, 8192, 65536, 131072, 1 << 20}
	for n := 0; n <= 80; n++ {
		sizes = append(sizes, n)
	}
	var sc sizeChecker
	for _, g := range generators {
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
		for _, g := range generators {
			if n > 1<<20 && g.Name != "sparse" && g.Name != "mixed" {
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
	src := sparseData(rand.New(rand.NewPCG(9, 9)), 131072)
	allocs := testing.AllocsPerRun(20, func() {
		Size(src, len(src)-len(src)/8)
		Size(src, 100)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
}

// FuzzSize checks Size against Compress for arbitrary input and capacities:
// sel picks one capacity (below len(src) + 96), and every run also checks
// ZFS's capacities for the input's length and the capacities either side of
// the output size and of where a literal run's room check decides.
func FuzzSize(f *testing.F) {
	r := rand.New(rand.NewPCG(25, 26))
	f.Add([]byte("The quick brown fox jumps over the lazy dog. The quick brown fox"), uint32(0))
	f.Add([]byte{}, uint32(3))
	f.Add([]byte("a"), uint32(66))
	f.Add([]byte("a\x00b\x00\x00c\x00\x00\x00d"), uint32(0))
	f.Add(make([]byte, 500), uint32(3))
	f.Add(make([]byte, 4096), uint32(0))
	f.Add(compresstest.LCG(1000), uint32(900))
	f.Add(sparseData(r, 4096), uint32(3584))
	f.Add(sparseData(r, 1000), uint32(112))
	f.Add(compresstest.Mixed(r, 8192), uint32(7168))
	for _, n := range []int{512, 1024, 4096, 16384} {
		for _, g := range generators {
			f.Add(g.Gen(r, n), uint32(compresstest.ZFSLimits(n)[0]))
		}
	}
	var sc sizeChecker
	f.Fuzz(func(t *testing.T, src []byte, sel uint32) {
		sc.checkAround(t, "fuzz", src, int(sel%uint32(len(src)+96)))
	})
}
