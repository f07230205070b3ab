package gzip

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/klauspost/compress/zlib"
)

// leveled is the gzip levels under test.
var leveled = compresstest.Leveled{
	New:        func(l int) (compresstest.LevelCompressor, error) { return New(l) },
	Decompress: decompress,
	NoFit:      ErrNoFit,
	Name:       func(l int) string { return fmt.Sprintf("gzip-%d", l) },
}

// decompress verifies that out is a zlib stream with C zlib's header for
// level and decodes it.
func decompress(out []byte, level int) ([]byte, error) {
	if len(out) < headerSize+trailerSize {
		return nil, fmt.Errorf("stream of %d bytes", len(out))
	}
	if h := zlibHeader(level); out[0] != h[0] || out[1] != h[1] {
		return nil, fmt.Errorf("header %x, want %x", out[:2], h)
	}
	zr, err := zlib.NewReader(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("zlib reader: %v", err)
	}
	return io.ReadAll(zr)
}

// ---------------------------------------------------------------------------

func TestLevels(t *testing.T) {
	t.Parallel()
	for l := -2; l <= 12; l++ {
		c, err := New(l)
		if ok := l >= 1 && l <= 9; ok != (err == nil) {
			t.Fatalf("New(%d): err=%v", l, err)
		}
		if err == nil && c.Level() != l {
			t.Fatalf("New(%d).Level() = %d", l, c.Level())
		}
	}
}

func TestZlibHeader(t *testing.T) {
	t.Parallel()
	// The CMF/FLG pairs C zlib writes (windowBits 15, no dictionary).
	want := map[int]string{1: "7801", 2: "785e", 3: "785e", 4: "785e", 5: "785e", 6: "789c", 7: "78da", 8: "78da", 9: "78da"}
	for l := 1; l <= 9; l++ {
		h := zlibHeader(l)
		if got := fmt.Sprintf("%x", h[:]); got != want[l] {
			t.Errorf("level %d: header %s, want %s", l, got, want[l])
		}
		if (uint16(h[0])<<8|uint16(h[1]))%31 != 0 {
			t.Errorf("level %d: FCHECK wrong", l)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	leveled.CheckRoundTrips(t, rand.New(rand.NewPCG(1, 2)), []int{1, 2, 3, 4, 5, 6, 7, 8, 9},
		[]int{0, 1, 100, 512, 4096, 65536, 131072, 1 << 20},
		func(l int) bool { return l == 1 || l == 6 || l == 9 })
}

// TestFreshEqualsReused: a reused Compressor gives the same bytes as a new
// one (ZFS initialises a fresh stream for every block).
func TestFreshEqualsReused(t *testing.T) {
	t.Parallel()
	leveled.CheckFreshEqualsReused(t, rand.New(rand.NewPCG(3, 4)), []int{1, 6, 9}, 12, 200000)
}

func TestNoFit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	c, _ := New(6)
	src := compresstest.ShortText(r, 131072)
	for _, d := range []int{0, 1, 5, 6, 112, 1000} {
		if n, err := c.Compress(make([]byte, d), src); !errors.Is(err, ErrNoFit) {
			t.Fatalf("D=%d: got c=%d err=%v, want ErrNoFit", d, n, err)
		}
	}
	// Random data never fits in D = L − L/8.
	src = compresstest.Random(r, 131072)
	if n, err := c.Compress(make([]byte, compresstest.Capacity(len(src))), src); !errors.Is(err, ErrNoFit) {
		t.Fatalf("random: got c=%d err=%v, want ErrNoFit", n, err)
	}
	// Empty input: header, an empty final block and Adler-32 (8 bytes).
	dst := make([]byte, 64)
	n, err := c.Compress(dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	leveled.Codec(c).CheckOutput(t, dst[:n], nil)
	if _, err := c.Compress(dst[:n-1], nil); !errors.Is(err, ErrNoFit) {
		t.Fatalf("empty input, capacity %d: %v", n-1, err)
	}
	// A failed call leaves the Compressor usable.
	src = compresstest.ShortText(r, 5000)
	n, err = c.Compress(make([]byte, 8000), src)
	if err != nil {
		t.Fatal(err)
	}
	if n2, err := New(6); err == nil {
		if m, _ := n2.Compress(make([]byte, 8000), src); m != n {
			t.Fatalf("after ErrNoFit: c=%d, fresh c=%d", n, m)
		}
	}
}

func TestNoAlloc(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are unreliable under -race")
	}
	r := rand.New(rand.NewPCG(7, 8))
	src := compresstest.ShortText(r, 131072)
	dst := make([]byte, compresstest.Capacity(len(src)))
	small := make([]byte, 100)
	c, _ := New(6)
	c.Compress(dst, src)
	if a := testing.AllocsPerRun(20, func() {
		if _, err := c.Compress(dst, src); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compress(small, src); !errors.Is(err, ErrNoFit) {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("%.1f allocations per call", a)
	}
}

// FuzzCompress: the stream decodes to the input with Go's compress/zlib
// reader (and has the kernel's header for the level); with capacity D it
// is written within D, and Compress fails with ErrNoFit exactly when the
// stream is longer than D (tried at the fuzzer's D and at c−1, c).
func FuzzCompress(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint16(40), uint8(6))
	f.Add(compresstest.LCG(3000), uint16(2500), uint8(1))
	f.Add(make([]byte, 4096), uint16(112), uint8(9))
	f.Add(bytes.Repeat([]byte("abcabd"), 12000), uint16(300), uint8(4))
	cs := make([]*Compressor, 10)
	for l := 1; l <= 9; l++ {
		cs[l], _ = New(l)
	}
	f.Fuzz(func(t *testing.T, src []byte, d uint16, level uint8) {
		l := 1 + int(level)%9
		cc := leveled.Codec(cs[l])
		full := cc.RoundTrip(t, "ample capacity", src, len(src)+len(src)/100+64)
		cc.CheckFit(t, src, full, int(d))
		cc.CheckFit(t, src, full, len(full)-1)
		cc.CheckFit(t, src, full, len(full))
	})
}

// BenchmarkCompress measures 128 KiB blocks with ZFS's capacity D.
func BenchmarkCompress(b *testing.B) {
	leveled.Bench(b, []int{1, 6, 9})
}
