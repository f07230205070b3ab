package gzip

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zlib"
)

// ---------------------------------------------------------------------------
// Input generators (as in compress/lz4's tests).

// lcg returns docs/zfs-semantics.md Appendix A's lcg(n).
func lcg(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for k := range b {
		x = (1103515245*x + 12345) & (1<<31 - 1)
		b[k] = byte(x >> 16)
	}
	return b
}

var words = []string{"the", "of", "and", "to", "in", "a", "is", "that", "for",
	"it", "as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
	"pool", "dataset", "snapshot", "compression", "dedup", "block", "record",
	"checksum", "vdev", "allocation", "\n", "ZFS", "2024-01-15", "error:",
	"{\"id\":", "}", "function", "return", "0x7f3a", "/usr/lib/x86_64"}

func textData(r *rand.Rand, n int) []byte {
	b := make([]byte, 0, n+32)
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		if r.IntN(9) == 0 {
			b = append(b, ',')
		}
		b = append(b, ' ')
	}
	return b[:n]
}

func randomData(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// binaryData imitates program code: small integers, opcodes and repeats.
func binaryData(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; {
		switch r.IntN(4) {
		case 0: // little-endian small integers
			for k := 0; k < 16 && i < n; k++ {
				b[i] = byte(r.IntN(64))
				i++
			}
		case 1: // repeat of earlier bytes
			if i > 64 {
				src := i - 1 - r.IntN(min(i-1, 4096))
				for k := 0; k < 4+r.IntN(28) && i < n; k++ {
					b[i] = b[src+k]
					i++
				}
			}
		case 2: // zero padding
			i += min(n-i, r.IntN(12))
		default: // random bytes
			for k := 0; k < 1+r.IntN(8) && i < n; k++ {
				b[i] = byte(r.Uint32())
				i++
			}
		}
	}
	return b
}

type generator struct {
	name string
	gen  func(r *rand.Rand, n int) []byte
}

var generators = []generator{
	{"text", textData},
	{"binary", binaryData},
	{"random", randomData},
	{"zero", func(_ *rand.Rand, n int) []byte { return make([]byte, n) }},
}

// capacity is D = L − floor(L/8) (§4.3, bands P2–P5).
func capacity(l int) int { return l - l/8 }

// checkStream verifies that out is a zlib stream with C zlib's header for
// level that decompresses to src.
func checkStream(t testing.TB, out, src []byte, level int) {
	t.Helper()
	if len(out) < headerSize+trailerSize {
		t.Fatalf("stream of %d bytes", len(out))
	}
	if h := zlibHeader(level); out[0] != h[0] || out[1] != h[1] {
		t.Fatalf("header %x, want %x", out[:2], h)
	}
	zr, err := zlib.NewReader(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("zlib reader: %v", err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("decompress (n=%d): %v", len(src), err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("round trip mismatch (n=%d, decoded %d bytes)", len(src), len(got))
	}
}

// ---------------------------------------------------------------------------

func TestLevels(t *testing.T) {
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
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 100, 512, 4096, 65536, 131072, 1 << 20}
	for l := 1; l <= 9; l++ {
		c, err := New(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range generators {
			for _, n := range sizes {
				if n > 131072 && (testing.Short() || l != 1 && l != 6 && l != 9) {
					continue
				}
				src := g.gen(r, n)
				dst := make([]byte, n+n/100+64)
				got, err := c.Compress(dst, src)
				if err != nil {
					t.Fatalf("gzip-%d %s n=%d: %v", l, g.name, n, err)
				}
				checkStream(t, dst[:got], src, l)
				// The smallest capacity that works is c itself.
				if got2, err := c.Compress(make([]byte, got), src); err != nil || got2 != got {
					t.Fatalf("gzip-%d %s n=%d: capacity c=%d gave %d, %v", l, g.name, n, got, got2, err)
				}
				if _, err := c.Compress(make([]byte, got-1), src); !errors.Is(err, ErrNoFit) {
					t.Fatalf("gzip-%d %s n=%d: capacity c−1: %v", l, g.name, n, err)
				}
			}
		}
	}
}

// TestFreshEqualsReused: a reused Compressor gives the same bytes as a new
// one (ZFS initialises a fresh stream for every block).
func TestFreshEqualsReused(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, l := range []int{1, 6, 9} {
		reused, _ := New(l)
		for i := 0; i < 12; i++ {
			g := generators[i%len(generators)]
			src := g.gen(r, 1+r.IntN(200000))
			a := make([]byte, len(src)+1000)
			na, err := reused.Compress(a, src)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := New(l)
			b := make([]byte, len(src)+1000)
			nb, err := fresh.Compress(b, src)
			if err != nil || !bytes.Equal(a[:na], b[:nb]) {
				t.Fatalf("gzip-%d %s n=%d: reused and fresh outputs differ (%d, %d, %v)", l, g.name, len(src), na, nb, err)
			}
		}
	}
}

func TestNoFit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c, _ := New(6)
	src := textData(r, 131072)
	for _, d := range []int{0, 1, 5, 6, 112, 1000} {
		if n, err := c.Compress(make([]byte, d), src); !errors.Is(err, ErrNoFit) {
			t.Fatalf("D=%d: got c=%d err=%v, want ErrNoFit", d, n, err)
		}
	}
	// Random data never fits in D = L − L/8.
	src = randomData(r, 131072)
	if n, err := c.Compress(make([]byte, capacity(len(src))), src); !errors.Is(err, ErrNoFit) {
		t.Fatalf("random: got c=%d err=%v, want ErrNoFit", n, err)
	}
	// Empty input: header, an empty final block and Adler-32 (8 bytes).
	dst := make([]byte, 64)
	n, err := c.Compress(dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkStream(t, dst[:n], nil, 6)
	if _, err := c.Compress(dst[:n-1], nil); !errors.Is(err, ErrNoFit) {
		t.Fatalf("empty input, capacity %d: %v", n-1, err)
	}
	// A failed call leaves the Compressor usable.
	src = textData(r, 5000)
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
	src := textData(r, 131072)
	dst := make([]byte, capacity(len(src)))
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

func FuzzCompress(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint16(40), uint8(6))
	f.Add(lcg(3000), uint16(2500), uint8(1))
	f.Add(make([]byte, 4096), uint16(112), uint8(9))
	cs := make([]*Compressor, 10)
	for l := 1; l <= 9; l++ {
		cs[l], _ = New(l)
	}
	f.Fuzz(func(t *testing.T, src []byte, d uint16, level uint8) {
		l := 1 + int(level)%9
		big := make([]byte, len(src)+len(src)/100+64)
		full, err := cs[l].Compress(big, src)
		if err != nil {
			t.Fatalf("ample capacity: %v", err)
		}
		checkStream(t, big[:full], src, l)
		dst := make([]byte, int(d))
		n, err := cs[l].Compress(dst, src)
		if int(d) >= full {
			if err != nil || n != full || !bytes.Equal(dst[:n], big[:full]) {
				t.Fatalf("D=%d ≥ c=%d: got %d, %v", d, full, n, err)
			}
		} else if !errors.Is(err, ErrNoFit) {
			t.Fatalf("D=%d < c=%d: got %d, %v", d, full, n, err)
		}
	})
}

// BenchmarkCompress measures 128 KiB blocks with ZFS's capacity D.
func BenchmarkCompress(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, l := range []int{1, 6, 9} {
		for _, g := range generators[:3] {
			b.Run(fmt.Sprintf("gzip-%d/%s", l, g.name), func(b *testing.B) {
				src := g.gen(r, 131072)
				dst := make([]byte, capacity(len(src)))
				c, _ := New(l)
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
