package lzjb

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
)

// codec is c under test for an input buffer at address base (Compress for
// base 0), checked with decompress and refCompress.
func codec(c *Compressor, base uint) compresstest.Codec {
	compress := c.Compress
	if base != 0 {
		compress = func(dst, src []byte) (int, error) { return c.compress(dst, src, base) }
	}
	return compresstest.Codec{
		Compress:   compress,
		Decompress: decode,
		Reference:  func(src []byte, d int) ([]byte, bool) { return refCompress(src, d, base) },
		NoFit:      ErrNoFit,
	}
}

// newCompress returns the Compress of a new Compressor.
func newCompress() compresstest.CompressFunc {
	var c Compressor
	return c.Compress
}

// appendixA is the LZJB column of docs/zfs-semantics.md Appendix A.
var appendixA = []compresstest.Vector{
	{Name: "TV1", Want: 37},
	{Name: "TV2", Want: 9986},
	{Name: "TV3", Want: 3234},
	{Name: "TV4", Want: 3454},
	{Name: "TV5", Want: -1, Unlimited: 147446},
	{Name: "TV6", Want: -1, Unlimited: -1},
	{Name: "TV7", Want: 75902},
	{Name: "TV8", Want: -1, Unlimited: 5098},
}

func TestAppendixA(t *testing.T) {
	t.Parallel()
	var c Compressor
	codec(&c, 0).CheckAppendixA(t, appendixA)
}

// ---------------------------------------------------------------------------
// Reference: a deliberately literal, slow transcription of §5.2 (one item
// per iteration with the copymask doubling, byte-wise compares, append-based
// output). base is ADDR(0), the address of the input buffer. Used to
// cross-check the optimized implementation.

func refCompress(src []byte, d int, base uint) ([]byte, bool) {
	var table [1024]uint16
	var out []byte
	n := len(src)
	copymask := 128
	copymap := 0
	for ip := 0; ip < n; {
		copymask *= 2
		if copymask == 256 {
			if len(out) >= d-17 {
				return nil, false
			}
			copymask = 1
			copymap = len(out)
			out = append(out, 0)
		}
		if ip > n-66 {
			out = append(out, src[ip])
			ip++
			continue
		}
		hash := int(src[ip])<<16 + int(src[ip+1])<<8 + int(src[ip+2])
		hash += hash >> 9
		hash += hash >> 5
		slot := hash % 1024
		addr := base + uint(ip)
		offset := int((addr - uint(table[slot])) % 1024)
		table[slot] = uint16(addr % 65536)
		cand := ip - offset
		if cand >= 0 && cand != ip && src[cand] == src[ip] &&
			src[cand+1] == src[ip+1] && src[cand+2] == src[ip+2] {
			mlen := 3
			for mlen < 66 && src[ip+mlen] == src[cand+mlen] {
				mlen++
			}
			out[copymap] |= byte(copymask)
			out = append(out, byte((mlen-3)<<2|offset>>8), byte(offset%256))
			ip += mlen
		} else {
			out = append(out, src[ip])
			ip++
		}
	}
	return out, true
}

// ---------------------------------------------------------------------------
// A strict decompressor with the semantics of lzjb_decompress
// (module/zfs/lzjb.c): it decodes exactly size bytes, and additionally
// rejects what lzjb_compress never produces (truncated input, trailing
// bytes, offset 0, matches running past size, stray control bits).
//
// It also returns the position of the last control byte (−1 for empty
// output): lzjb_compress checks op ≥ D − 17 only when it writes a control
// byte, so the smallest capacity that succeeds is lastCtl + 18.

func decompress(comp []byte, size int) (out []byte, lastCtl int, err error) {
	out = make([]byte, 0, size)
	lastCtl = -1
	i := 0
	var ctl byte
	mask := 128
	for len(out) < size {
		mask *= 2
		if mask == 256 {
			if i >= len(comp) {
				return nil, 0, errors.New("missing control byte")
			}
			ctl = comp[i]
			lastCtl = i
			i++
			mask = 1
		}
		if int(ctl)&mask == 0 {
			if i >= len(comp) {
				return nil, 0, errors.New("missing literal")
			}
			out = append(out, comp[i])
			i++
			continue
		}
		if i+2 > len(comp) {
			return nil, 0, errors.New("truncated match")
		}
		mlen := int(comp[i]>>2) + 3
		offset := int(comp[i]&3)<<8 | int(comp[i+1])
		i += 2
		if offset == 0 || offset > len(out) {
			return nil, 0, fmt.Errorf("bad offset %d at output %d", offset, len(out))
		}
		if mlen > size-len(out) {
			return nil, 0, fmt.Errorf("match of %d bytes past the end at output %d", mlen, len(out))
		}
		p := len(out) - offset
		for k := 0; k < mlen; k++ {
			out = append(out, out[p+k])
		}
	}
	if i != len(comp) {
		return nil, 0, fmt.Errorf("%d trailing bytes", len(comp)-i)
	}
	if lastCtl >= 0 && int(ctl)&^(2*mask-1) != 0 {
		return nil, 0, fmt.Errorf("control byte %#x has bits for absent items", ctl)
	}
	return out, lastCtl, nil
}

// decode is decompress without the position of the last control byte.
func decode(comp []byte, size int) ([]byte, error) {
	out, _, err := decompress(comp, size)
	return out, err
}

// checkOutput verifies that out decodes to src.
func checkOutput(t testing.TB, out, src []byte) {
	t.Helper()
	compresstest.Codec{Decompress: decode}.CheckOutput(t, out, src)
}

// checkMinCapacity verifies the position of the output check: with
// out = Compress(ample, src), capacity lastCtl + 18 succeeds with the same
// output and lastCtl + 17 fails (any capacity succeeds for empty src).
func checkMinCapacity(t testing.TB, c *Compressor, out, src []byte) {
	t.Helper()
	_, lastCtl, err := decompress(out, len(src))
	if err != nil {
		t.Fatal(err)
	}
	minD := 0 // empty output: any capacity
	if lastCtl >= 0 {
		minD = lastCtl + 18
		if len(out) >= minD {
			t.Fatalf("c=%d but smallest capacity %d", len(out), minD)
		}
	}
	if got := codec(c, 0).CheckMinCapacity(t, fmt.Sprintf("last control byte %d", lastCtl), src, minD, len(out)); !bytes.Equal(got, out) {
		t.Fatalf("n=%d D=%d (last control byte %d): output differs", len(src), minD, lastCtl)
	}
}

// ---------------------------------------------------------------------------

func TestTiny(t *testing.T) {
	t.Parallel()
	var c Compressor
	for n := 0; n <= 140; n++ {
		src := compresstest.Fox(n)
		dst := make([]byte, 2*n+32)
		got, err := c.Compress(dst, src)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		checkOutput(t, dst[:got], src)
		checkMinCapacity(t, &c, dst[:got], src)
		if n <= 66 {
			// Only literals (ip > n − 66 from the start): a zero
			// control byte before every 8 bytes.
			var want []byte
			for i := 0; i < n; i += 8 {
				want = append(want, 0)
				want = append(want, src[i:min(i+8, n)]...)
			}
			if !bytes.Equal(dst[:got], want) {
				t.Fatalf("n=%d: got %x want %x", n, dst[:got], want)
			}
		}
	}
	// Empty input: no output, for any capacity.
	for d := 0; d < 20; d++ {
		if got, err := c.Compress(make([]byte, d), nil); err != nil || got != 0 {
			t.Fatalf("empty, D=%d: c=%d err=%v", d, got, err)
		}
	}
	// One byte needs D ≥ 18 although c = 2.
	for d := 0; d < 20; d++ {
		got, err := c.Compress(make([]byte, d), []byte{'x'})
		if (err == nil) != (d >= 18) || (err == nil && got != 2) {
			t.Fatalf("1 byte, D=%d: c=%d err=%v", d, got, err)
		}
	}
	// 66 zero bytes: ip = 0 = n − 66 is probed, but its slot is unset, so
	// the candidate is ADDR(0) − 0 = ip itself: literal; every later byte
	// is beyond n − 66: 66 literals in 9 groups.
	dst := make([]byte, 200)
	if got, _ := c.Compress(dst, make([]byte, 66)); got != 66+9 {
		t.Fatalf("66 zeros: c=%d", got)
	}
	// 67 zero bytes: literal at ip = 0 (the slot now holds ADDR(0) = 0),
	// then ip = 1 = n − 66 matches at offset 1 with the maximum length 66.
	got, _ := c.Compress(dst, make([]byte, 67))
	if want := []byte{0x02, 0, 63 << 2, 1}; !bytes.Equal(dst[:got], want) {
		t.Fatalf("67 zeros: got %x want %x", dst[:got], want)
	}
	// 200 zero bytes: literal at 0; match at 1 (offset 1, slot := 1);
	// match at 67 (offset 67 − 1 = 66, slot := 67); match at 133 (offset
	// 66); ip = 199 > 134: literal.
	got, _ = c.Compress(dst, make([]byte, 200))
	if want := []byte{0x0e, 0, 63 << 2, 1, 63 << 2, 66, 63 << 2, 66, 0}; !bytes.Equal(dst[:got], want) {
		t.Fatalf("200 zeros: got %x want %x", dst[:got], want)
	}
}

// TestAddressDependence shows the effect of the input buffer address
// (§5.2, §10 item 3), using the unexported compress with a buffer at 512 mod
// 1024. An unset table slot proposes the candidate at the preceding address
// that is a multiple of 1024: position 512 for ip in [512, 1536) when
// ADDR(0) ≡ 512, position 0 when ADDR(0) ≡ 0. Here position 512 lies inside
// a match (so it is never hashed) that ends 2 bytes later, making the 3-byte
// string at 512 new; the same string planted at 700 then matches only in the
// 512-aligned buffer.
func TestAddressDependence(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(12, 13))
	src := compresstest.Random(r, 1000)
	copy(src[500:514], src[400:414]) // match 500…513 (covers 512, 513)
	copy(src[700:703], src[512:515])
	var c Compressor
	results := make([][]byte, 2)
	for i, base := range []uint{0, 1024*77 + 512} {
		dst := make([]byte, 2000)
		got, err := c.compress(dst, src, base)
		if err != nil {
			t.Fatal(err)
		}
		checkOutput(t, dst[:got], src)
		if ref, _ := refCompress(src, len(dst), base); !bytes.Equal(ref, dst[:got]) {
			t.Fatalf("base %d: differs from reference", base)
		}
		results[i] = dst[:got]
	}
	if len(results[1]) >= len(results[0]) {
		t.Fatalf("512-aligned: c=%d, aligned: c=%d; want the 512-aligned output shorter", len(results[1]), len(results[0]))
	}

	// Random inputs: the address rarely matters (§5.2: 5 of 120 cases).
	differ := 0
	for it := 0; it < 120; it++ {
		g := compresstest.Generators[it%len(compresstest.Generators)]
		src := g.Gen(r, 512*(1+r.IntN(64)))
		a := make([]byte, 2*len(src)+32)
		b := make([]byte, 2*len(src)+32)
		ca, _ := c.compress(a, src, 0)
		cb, _ := c.compress(b, src, 512)
		checkOutput(t, b[:cb], src)
		if ref, _ := refCompress(src, len(b), 512); !bytes.Equal(ref, b[:cb]) {
			t.Fatalf("%s n=%d base 512: differs from reference", g.Name, len(src))
		}
		if !bytes.Equal(a[:ca], b[:cb]) {
			differ++
		}
	}
	t.Logf("%d of 120 random inputs compress differently at 512 mod 1024", differ)
}

var roundTripSizes = []int{512, 1000, 1024, 1536, 4096, 5120, 8192, 32768,
	65536, 131072, 262144, 1 << 20}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	var c Compressor
	codec(&c, 0).CheckRoundTrips(t, rand.New(rand.NewPCG(1, 2)), compresstest.Generators, roundTripSizes,
		func(n int) int { return n + n/8 + 32 },
		func(t testing.TB, out, src []byte) { checkMinCapacity(t, &c, out, src) })
}

// TestRandomizedAgainstReference compares outputs for random inputs,
// capacities (in particular around the smallest one that succeeds) and buffer
// addresses with the reference.
func TestRandomizedAgainstReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var c Compressor
	iters := 300
	if !stress.On() { // the stress run (DDTSIM_STRESS=1) tries them all
		iters = 60
	}
	for it := 0; it < iters; it++ {
		g := compresstest.Generators[r.IntN(len(compresstest.Generators))]
		var n int
		switch r.IntN(3) {
		case 0:
			n = r.IntN(300)
		default:
			n = 512 * (1 + r.IntN(256))
		}
		src := g.Gen(r, n)
		base := uint(0)
		if it%3 == 1 {
			base = uint(r.IntN(1 << 20))
		}
		cc := codec(&c, base)
		big := make([]byte, n+n/8+32)
		full, err := cc.Compress(big, src)
		if err != nil {
			t.Fatal(err)
		}
		cc.CheckOutput(t, big[:full], src)
		_, lastCtl, _ := decompress(big[:full], n)
		minD := lastCtl + 18
		what := fmt.Sprintf("%s base=%d (min %d)", g.Name, base, minD)
		for _, d := range []int{minD - 2, minD - 1, minD, minD + 1, full, compresstest.Capacity(n), r.IntN(full + 24)} {
			if d < 0 {
				continue
			}
			if out, err := cc.CheckAgainstReference(t, what, src, d); err == nil && !bytes.Equal(out, big[:full]) {
				t.Fatalf("%s n=%d D=%d base=%d: output mismatch", g.Name, n, d, base)
			}
		}
	}
}

// TestReuse checks that a reused Compressor gives the same result as a fresh
// one (the table is reset per call).
func TestReuse(t *testing.T) {
	t.Parallel()
	compresstest.CheckReuse(t, rand.New(rand.NewPCG(7, 8)), compresstest.Generators, newCompress)
}

func TestAllocs(t *testing.T) {
	src := compresstest.Text(rand.New(rand.NewPCG(9, 9)), 131072)
	dst := make([]byte, compresstest.Capacity(len(src)))
	var c Compressor
	allocs := testing.AllocsPerRun(20, func() {
		c.Compress(dst, src)
		c.Compress(dst[:100], src)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
}

func FuzzCompress(f *testing.F) {
	f.Add([]byte("The quick brown fox jumps over the lazy dog. The quick brown fox"), uint32(0))
	f.Add(make([]byte, 100), uint32(20))
	f.Add(make([]byte, 300), uint32(0))
	f.Add(compresstest.LCG(1000), uint32(900))
	f.Add(compresstest.Fox(5000), uint32(1000))
	f.Add([]byte{}, uint32(3))
	var c Compressor
	cc := codec(&c, 0)
	f.Fuzz(func(t *testing.T, src []byte, capSel uint32) {
		// capSel 0 → ample capacity; otherwise a capacity up to a bit
		// more than the input size (exercises tight limits).
		d := len(src) + len(src)/8 + 32
		if capSel != 0 {
			d = int(capSel % uint32(len(src)+48))
		}
		out, ok := cc.FuzzAgainstReference(t, src, d)
		if !ok {
			return
		}
		if len(src) > 0 && len(out) >= d {
			t.Fatalf("c=%d for capacity %d", len(out), d)
		}
		checkMinCapacity(t, &c, out, src)
	})
}

// ---------------------------------------------------------------------------

// BenchmarkCompress compresses with ZFS's capacity; random data fails near
// its end.
func BenchmarkCompress(b *testing.B) {
	compresstest.BenchCompress(b, compresstest.BenchInputs(nil), newCompress)
}
