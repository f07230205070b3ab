package compresstest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/stress"
)

// LevelCompressor is a compressor with levels.
type LevelCompressor interface {
	Compress(dst, src []byte) (int, error)
	Level() int
}

// Leveled is a compressor with levels (gzip, zstd) under test, with the
// checks and the benchmark that the tests of such compressors share. They
// draw their inputs from LevelGenerators.
type Leveled struct {
	// New returns a new compressor of level.
	New func(level int) (LevelCompressor, error)
	// Decompress decodes out, the output at level, rejecting what the
	// compressor never produces (see DecompressFunc).
	Decompress func(out []byte, level int) ([]byte, error)
	// NoFit is the compressor's ErrNoFit.
	NoFit error
	// Name names a level in messages and benchmark names, such as "gzip-6".
	Name func(level int) string
}

// Codec returns c under test, checked with Decompress at its level.
func (lv Leveled) Codec(c LevelCompressor) Codec {
	l := c.Level()
	return Codec{
		Compress:   c.Compress,
		Decompress: func(out []byte, n int) ([]byte, error) { return lv.Decompress(out, l) },
		NoFit:      lv.NoFit,
	}
}

// newCodec is New's compressor of level under test.
func (lv Leveled) newCodec(level int) (Codec, error) {
	c, err := lv.New(level)
	if err != nil {
		return Codec{}, err
	}
	return lv.Codec(c), nil
}

// CheckRoundTrips compresses, for every level, generator and size, an input
// drawn from r with ample capacity (n + n/100 + 64); the output must decode
// to the input, and c must be the smallest capacity that fits. Sizes above
// 128 KiB run only in the stress run (DDTSIM_STRESS=1), and for the
// levels for which big is true.
func (lv Leveled) CheckRoundTrips(t *testing.T, r *rand.Rand, levels, sizes []int, big func(level int) bool) {
	t.Helper()
	for _, l := range levels {
		c, err := lv.newCodec(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range LevelGenerators {
			for _, n := range sizes {
				if n > 131072 && (!stress.On() || !big(l)) {
					continue
				}
				src := g.Gen(r, n)
				what := fmt.Sprintf("%s %s", lv.Name(l), g.Name)
				out := c.RoundTrip(t, what, src, n+n/100+64)
				// Capacity c is enough; c − 1 is not.
				c.CheckMinCapacity(t, what, src, len(out), len(out))
			}
		}
	}
}

// CheckFreshEqualsReused compresses, for every level, iters inputs of 1 to
// maxN bytes drawn from r (cycling through LevelGenerators) with one reused
// compressor and with a new one each: the outputs must be the same (ZFS
// compresses every block from a fresh state).
func (lv Leveled) CheckFreshEqualsReused(t *testing.T, r *rand.Rand, levels []int, iters, maxN int) {
	t.Helper()
	for _, l := range levels {
		reused, _ := lv.newCodec(l)
		for i := 0; i < iters; i++ {
			g := LevelGenerators[i%len(LevelGenerators)]
			src := g.Gen(r, 1+r.IntN(maxN))
			a := make([]byte, len(src)+1000)
			na, err := reused.Compress(a, src)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := lv.newCodec(l)
			b := make([]byte, len(src)+1000)
			nb, err := fresh.Compress(b, src)
			if err != nil || !bytes.Equal(a[:na], b[:nb]) {
				t.Fatalf("%s %s n=%d: reused and fresh outputs differ (%d, %d, %v)", lv.Name(l), g.Name, len(src), na, nb, err)
			}
		}
	}
}

// Bench runs a sub-benchmark "<Name(level)>/<generator>" per level and each
// of the first three LevelGenerators (text, binary, random): it compresses
// a record drawn from rand.NewPCG(9, 10) when the sub-benchmark starts with
// ZFS's capacity D = Capacity(L), after one warm-up call (state allocated
// lazily).
func (lv Leveled) Bench(b *testing.B, levels []int) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, l := range levels {
		for _, g := range LevelGenerators[:3] {
			b.Run(fmt.Sprintf("%s/%s", lv.Name(l), g.Name), func(b *testing.B) {
				src := g.Gen(r, RecordSize)
				dst := make([]byte, Capacity(len(src)))
				c, _ := lv.newCodec(l)
				c.Compress(dst, src) // warm-up: lazily allocated state
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				for b.Loop() {
					c.Compress(dst, src)
				}
			})
		}
	}
}
