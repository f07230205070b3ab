package zstd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
	kzstd "github.com/klauspost/compress/zstd"
)

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

// leveled is the zstd levels under test, named by their compression
// property value.
var leveled = compresstest.Leveled{
	New:        func(l int) (compresstest.LevelCompressor, error) { return New(l) },
	Decompress: decompress,
	NoFit:      ErrNoFit,
	Name:       goldenCompression,
}

// decompress verifies ZFS's header for level and decodes the magicless
// frame, with the magic number put back.
func decompress(out []byte, level int) ([]byte, error) {
	if len(out) < HeaderSize+5 {
		return nil, fmt.Errorf("output of %d bytes", len(out))
	}
	if n := binary.BigEndian.Uint32(out); int(n) != len(out)-HeaderSize {
		return nil, fmt.Errorf("header says frame length %d, frame is %d", n, len(out)-HeaderSize)
	}
	enum, _ := levelEnum(level)
	if out[4] != enum || out[5] != 0x00 || out[6] != 0x28 || out[7] != 0xa5 {
		return nil, fmt.Errorf("level %d: header bytes 4..7 = % x, want %02x 00 28 a5", level, out[4:8], enum)
	}
	// Frame header descriptor: no content size, not single-segment, no
	// checksum, no dictionary ID (contentSizeFlag 0, checksumFlag 0).
	if out[HeaderSize] != 0 {
		return nil, fmt.Errorf("frame header descriptor %#02x, want 0", out[HeaderSize])
	}
	frame := append(append([]byte(nil), frameMagic...), out[HeaderSize:]...)
	got, err := decoder.DecodeAll(frame, nil)
	if err != nil {
		return nil, fmt.Errorf("level %d: %v", level, err)
	}
	return got, nil
}

// ---------------------------------------------------------------------------

func TestLevels(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
		leveled.Codec(c).CheckOutput(t, dst[:n], src)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	var levels []int
	// Every level in the stress run (DDTSIM_STRESS=1); by default the
	// levels of both ends and a few between, fast ones too.
	some := []int{1, 2, 3, 5, 9, 15, 19, -1, -5, -10, -1000}
	for _, l := range allLevels() {
		if stress.On() || slices.Contains(some, l) {
			levels = append(levels, l)
		}
	}
	leveled.CheckRoundTrips(t, rand.New(rand.NewPCG(1, 2)), levels,
		[]int{1, 100, 512, 4096, 65536, 131072, 1 << 20},
		func(l int) bool { return l == 1 || l == 3 || l == -1 })
}

// TestFreshEqualsReused: a reused Compressor gives the same bytes as a new
// one (ZFS compresses every block with a fresh context).
func TestFreshEqualsReused(t *testing.T) {
	t.Parallel()
	leveled.CheckFreshEqualsReused(t, rand.New(rand.NewPCG(3, 4)), []int{1, 3, 9, 19, -1, -100}, 10, 300000)
}

func TestNoFit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	c, _ := New(3)
	src := compresstest.ShortText(r, 131072)
	for _, d := range []int{0, 1, 7, 8, 9, 12, 112, 1000} {
		if n, err := c.Compress(make([]byte, d), src); !errors.Is(err, ErrNoFit) {
			t.Fatalf("D=%d: got c=%d err=%v, want ErrNoFit", d, n, err)
		}
	}
	// Random data never fits in D = L − L/8.
	rnd := compresstest.Random(r, 131072)
	if n, err := c.Compress(make([]byte, compresstest.Capacity(len(rnd))), rnd); !errors.Is(err, ErrNoFit) {
		t.Fatalf("random: got c=%d err=%v, want ErrNoFit", n, err)
	}
	// A failed call leaves the Compressor usable.
	n, err := c.Compress(make([]byte, compresstest.Capacity(len(src))), src)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := New(3)
	if m, _ := fresh.Compress(make([]byte, compresstest.Capacity(len(src))), src); m != n {
		t.Fatalf("after ErrNoFit: c=%d, fresh c=%d", n, m)
	}
}

// TestEmptyAndTiny: the empty input is a 2-byte frame header and an empty
// last raw block (c = 13) in both builds; a one-byte input is a raw block.
// The frame header's second byte, the window descriptor, is libzstd 1.4's
// default window (2 MiB: 0x58) in the libzstd build, the smallest (0x00,
// as libzstd 1.5 writes it) in the pure-Go build: ZFS never compresses an
// empty block, and the length is the same.
func TestEmptyAndTiny(t *testing.T) {
	t.Parallel()
	c, _ := New(3)
	dst := make([]byte, 64)
	n, err := c.Compress(dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	window := byte(0x00)
	if LibraryVersion != 0 {
		window = 0x58
	}
	if want := []byte{0, 0, 0, 5, 3, 0x00, 0x28, 0xa5, 0x00, window, 0x01, 0x00, 0x00}; !bytes.Equal(dst[:n], want) {
		t.Fatalf("empty: % x, want % x", dst[:n], want)
	}
	leveled.Codec(c).CheckOutput(t, dst[:n], nil)
	n, err = c.Compress(dst, []byte{'x'})
	if err != nil {
		t.Fatal(err)
	}
	leveled.Codec(c).CheckOutput(t, dst[:n], []byte{'x'})
	if n != 14 {
		t.Fatalf("one byte: c=%d (% x), want 14", n, dst[:n])
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
	f.Add(compresstest.LCG(3000), uint16(2500), uint8(0))
	f.Add(make([]byte, 4096), uint16(112), uint8(18))
	f.Add(compresstest.LCG(70000), uint16(65535), uint8(25))
	levels := allLevels()
	cs := make([]*Compressor, len(levels))
	for i, l := range levels {
		cs[i], _ = New(l)
	}
	f.Fuzz(func(t *testing.T, src []byte, d uint16, li uint8) {
		cc := leveled.Codec(cs[int(li)%len(levels)])
		full := cc.RoundTrip(t, "ample capacity", src, len(src)+len(src)/100+64)
		cc.CheckFit(t, src, full, int(d))
	})
}

// BenchmarkCompress measures 128 KiB blocks with ZFS's capacity D (no early
// abort).
func BenchmarkCompress(b *testing.B) {
	leveled.Bench(b, []int{1, 3, 19, -1})
}
