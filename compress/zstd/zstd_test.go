package zstd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
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

// allLevels are the levels New accepts, in ZFS enum order.
func allLevels() []int {
	var ls []int
	for l := 1; l <= 19; l++ {
		ls = append(ls, l)
	}
	for _, n := range FastLevels {
		ls = append(ls, -n)
	}
	return ls
}

var decoder, _ = kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderMaxMemory(1<<30))

// frameMagic is the zstd magic number ZFS leaves out (ZSTD_f_zstd1_magicless).
var frameMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// checkOutput verifies ZFS's header and that the magicless frame, with the
// magic number put back, decompresses to src.
func checkOutput(t testing.TB, out, src []byte, level int) {
	t.Helper()
	if len(out) < HeaderSize+5 {
		t.Fatalf("output of %d bytes", len(out))
	}
	if n := binary.BigEndian.Uint32(out); int(n) != len(out)-HeaderSize {
		t.Fatalf("header says frame length %d, frame is %d", n, len(out)-HeaderSize)
	}
	enum, _ := levelEnum(level)
	if out[4] != enum || out[5] != 0x00 || out[6] != 0x28 || out[7] != 0xa5 {
		t.Fatalf("level %d: header bytes 4..7 = % x, want %02x 00 28 a5", level, out[4:8], enum)
	}
	// Frame header descriptor: no content size, not single-segment, no
	// checksum, no dictionary ID (contentSizeFlag 0, checksumFlag 0).
	if out[HeaderSize] != 0 {
		t.Fatalf("frame header descriptor %#02x, want 0", out[HeaderSize])
	}
	frame := append(append([]byte(nil), frameMagic...), out[HeaderSize:]...)
	got, err := decoder.DecodeAll(frame, nil)
	if err != nil {
		t.Fatalf("level %d: decompress (n=%d): %v", level, len(src), err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("level %d: round trip mismatch (n=%d, decoded %d bytes)", level, len(src), len(got))
	}
}

// ---------------------------------------------------------------------------

func TestLevels(t *testing.T) {
	accepted := map[int]byte{}
	for _, l := range allLevels() {
		c, err := New(l)
		if err != nil {
			t.Fatalf("New(%d): %v", l, err)
		}
		if c.Level() != l {
			t.Fatalf("New(%d).Level() = %d", l, c.Level())
		}
		accepted[l], _ = levelEnum(l)
	}
	for _, l := range []int{0, 20, 22, 255, -11, -15, -19, -25, -101, -200, -999, -1001, -2000, 101, 103} {
		if _, err := New(l); err == nil {
			t.Errorf("New(%d) accepted", l)
		}
	}
	// enum zio_zstd_levels: 1…19, RESERVE = 101, FAST = 102, FAST_1 = 103 …
	want := map[int]byte{1: 1, 3: 3, 19: 19, -1: 103, -2: 104, -9: 111, -10: 112, -20: 113,
		-30: 114, -50: 116, -90: 120, -100: 121, -500: 122, -1000: 123}
	for l, e := range want {
		if accepted[l] != e {
			t.Errorf("level %d: enum %d, want %d", l, accepted[l], e)
		}
	}
	if len(accepted) != 40 {
		t.Errorf("%d levels accepted, want 40", len(accepted))
	}
}

func TestHeader(t *testing.T) {
	src := bytes.Repeat([]byte("ZFS stores zstd frames behind an 8-byte header. "), 100)
	for _, l := range []int{1, 3, 19, -1, -1000} {
		c, _ := New(l)
		dst := make([]byte, len(src)+64)
		n, err := c.Compress(dst, src)
		if err != nil {
			t.Fatalf("level %d: %v", l, err)
		}
		enum, _ := levelEnum(l)
		want := []byte{0, 0, byte((n - 8) >> 8), byte(n - 8), enum, 0x00, 0x28, 0xa5}
		if !bytes.Equal(dst[:8], want) {
			t.Errorf("level %d: header % x, want % x", l, dst[:8], want)
		}
		checkOutput(t, dst[:n], src, l)
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 100, 512, 4096, 65536, 131072, 1 << 20}
	for _, l := range allLevels() {
		if testing.Short() && l < -10 {
			continue
		}
		c, err := New(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range generators {
			for _, n := range sizes {
				if n > 131072 && (testing.Short() || l != 1 && l != 3 && l != -1) {
					continue
				}
				src := g.gen(r, n)
				dst := make([]byte, n+n/100+64)
				got, err := c.Compress(dst, src)
				if err != nil {
					t.Fatalf("level %d %s n=%d: %v", l, g.name, n, err)
				}
				checkOutput(t, dst[:got], src, l)
				// Capacity c is enough; c − 1 is not.
				if got2, err := c.Compress(make([]byte, got), src); err != nil || got2 != got {
					t.Fatalf("level %d %s n=%d: capacity c=%d gave %d, %v", l, g.name, n, got, got2, err)
				}
				if _, err := c.Compress(make([]byte, got-1), src); !errors.Is(err, ErrNoFit) {
					t.Fatalf("level %d %s n=%d: capacity c−1: %v", l, g.name, n, err)
				}
			}
		}
	}
}

// TestFreshEqualsReused: a reused Compressor gives the same bytes as a new
// one (ZFS compresses every block with a fresh context).
func TestFreshEqualsReused(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, l := range []int{1, 3, 9, 19, -1, -100} {
		reused, _ := New(l)
		for i := 0; i < 10; i++ {
			g := generators[i%len(generators)]
			src := g.gen(r, 1+r.IntN(300000))
			a := make([]byte, len(src)+1000)
			na, err := reused.Compress(a, src)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := New(l)
			b := make([]byte, len(src)+1000)
			nb, err := fresh.Compress(b, src)
			if err != nil || !bytes.Equal(a[:na], b[:nb]) {
				t.Fatalf("level %d %s n=%d: reused and fresh outputs differ (%d, %d, %v)", l, g.name, len(src), na, nb, err)
			}
		}
	}
}

func TestNoFit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c, _ := New(3)
	src := textData(r, 131072)
	for _, d := range []int{0, 1, 7, 8, 9, 12, 112, 1000} {
		if n, err := c.Compress(make([]byte, d), src); !errors.Is(err, ErrNoFit) {
			t.Fatalf("D=%d: got c=%d err=%v, want ErrNoFit", d, n, err)
		}
	}
	// Random data never fits in D = L − L/8.
	rnd := randomData(r, 131072)
	if n, err := c.Compress(make([]byte, capacity(len(rnd))), rnd); !errors.Is(err, ErrNoFit) {
		t.Fatalf("random: got c=%d err=%v, want ErrNoFit", n, err)
	}
	// A failed call leaves the Compressor usable.
	n, err := c.Compress(make([]byte, capacity(len(src))), src)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := New(3)
	if m, _ := fresh.Compress(make([]byte, capacity(len(src))), src); m != n {
		t.Fatalf("after ErrNoFit: c=%d, fresh c=%d", n, m)
	}
}

// TestEmptyAndTiny: the empty input is a 2-byte frame header and an empty
// last raw block (c = 13) in both builds; a one-byte input is a raw block.
func TestEmptyAndTiny(t *testing.T) {
	c, _ := New(3)
	dst := make([]byte, 64)
	n, err := c.Compress(dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 5, 3, 0x00, 0x28, 0xa5, 0x00, 0x00, 0x01, 0x00, 0x00}; !bytes.Equal(dst[:n], want) {
		t.Fatalf("empty: % x, want % x", dst[:n], want)
	}
	checkOutput(t, dst[:n], nil, 3)
	n, err = c.Compress(dst, []byte{'x'})
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, dst[:n], []byte{'x'}, 3)
	if n != 14 {
		t.Fatalf("one byte: c=%d (% x), want 14", n, dst[:n])
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
	for _, l := range []int{1, 3, 19, -1} {
		c, _ := New(l)
		c.Compress(dst, src)
		c.Compress(small, src)
		if a := testing.AllocsPerRun(10, func() {
			if _, err := c.Compress(dst, src); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compress(small, src); !errors.Is(err, ErrNoFit) {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Fatalf("level %d: %.1f allocations per call", l, a)
		}
	}
}

func FuzzCompress(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint16(40), uint8(2))
	f.Add(lcg(3000), uint16(2500), uint8(0))
	f.Add(make([]byte, 4096), uint16(112), uint8(18))
	f.Add(lcg(70000), uint16(65535), uint8(25))
	levels := allLevels()
	cs := make([]*Compressor, len(levels))
	for i, l := range levels {
		cs[i], _ = New(l)
	}
	f.Fuzz(func(t *testing.T, src []byte, d uint16, li uint8) {
		i := int(li) % len(levels)
		big := make([]byte, len(src)+len(src)/100+64)
		full, err := cs[i].Compress(big, src)
		if err != nil {
			t.Fatalf("ample capacity: %v", err)
		}
		checkOutput(t, big[:full], src, levels[i])
		dst := make([]byte, int(d))
		n, err := cs[i].Compress(dst, src)
		if int(d) >= full {
			if err != nil || n != full || !bytes.Equal(dst[:n], big[:full]) {
				t.Fatalf("D=%d ≥ c=%d: got %d, %v", d, full, n, err)
			}
		} else if !errors.Is(err, ErrNoFit) {
			t.Fatalf("D=%d < c=%d: got %d, %v", d, full, n, err)
		}
	})
}

// BenchmarkCompress measures 128 KiB blocks with ZFS's capacity D (no early
// abort).
func BenchmarkCompress(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, l := range []int{1, 3, 19, -1} {
		for _, g := range generators[:3] {
			b.Run(fmt.Sprintf("%s/%s", goldenCompression(l), g.name), func(b *testing.B) {
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
