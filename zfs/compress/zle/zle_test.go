package zle

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
)

// codec is Compress under test, checked with decompress and refCompress.
var codec = compresstest.Codec{Compress: Compress, Decompress: decode, Reference: refCompress, NoFit: ErrNoFit}

// appendixA is the ZLE column of docs/zfs-semantics.md Appendix A.
var appendixA = []compresstest.Vector{
	{Name: "TV1", Want: 105},
	{Name: "TV2", Want: -1, Unlimited: 133120},
	{Name: "TV3", Want: -1, Unlimited: -1},
	{Name: "TV4", Want: 3053},
	{Name: "TV5", Want: -1, Unlimited: -1},
	{Name: "TV6", Want: -1, Unlimited: -1},
	{Name: "TV7", Want: 66902},
	{Name: "TV8", Want: -1, Unlimited: 4574},
}

func TestAppendixA(t *testing.T) {
	t.Parallel()
	codec.CheckAppendixA(t, appendixA)
}

// TestAppendixADerived checks unlimited sizes that Appendix A does not list
// but that follow from §5.3 directly.
func TestAppendixADerived(t *testing.T) {
	t.Parallel()
	// TV3: fox has no zero byte, so 65536 bytes are 1024 literal runs of
	// 64: 1024 · 65 = 66560 bytes.
	big := make([]byte, 1<<17)
	if got, err := Compress(big, compresstest.Fox(65536)); err != nil || got != 66560 {
		t.Fatalf("TV3 unlimited: c=%d err=%v, want 66560", got, err)
	}
}

// ---------------------------------------------------------------------------
// Reference: a deliberately literal, slow transcription of §5.3 (byte-wise
// loops, append-based output). Used to cross-check the optimized
// implementation.

func refCompress(src []byte, d int) ([]byte, bool) {
	var out []byte
	n := len(src)
	ip := 0
	for ip < n && len(out) < d-1 {
		first := ip
		lenByte := len(out)
		out = append(out, 0)
		if src[ip] == 0 {
			for ip < min(first+192, n) && src[ip] == 0 {
				ip++
			}
			out[lenByte] = byte(ip - first - 1 + 64)
		} else {
			if d-len(out) < 64 {
				break
			}
			for ip < min(first+64, n)-1 && (src[ip] != 0 || src[ip+1] != 0) {
				out = append(out, src[ip])
				ip++
			}
			if src[ip] != 0 {
				out = append(out, src[ip])
				ip++
			}
			out[lenByte] = byte(ip - first - 1)
		}
	}
	if ip != n {
		return nil, false
	}
	return out, true
}

// ---------------------------------------------------------------------------
// A strict decompressor with the semantics of zle_decompress
// (module/zfs/zle.c, n = 64): it decodes exactly size bytes, and additionally
// rejects what zle_compress never produces (truncated input, trailing bytes,
// runs past size).
//
// It also returns the smallest capacity with which zle_compress produces
// comp: a run whose length byte is at op needs op < D − 1, a literal run also
// D − (op + 1) ≥ 64 (0 for empty output).

func decompress(comp []byte, size int) (out []byte, minD int, err error) {
	out = make([]byte, 0, size)
	i := 0
	for len(out) < size {
		if i >= len(comp) {
			return nil, 0, fmt.Errorf("truncated at output %d", len(out))
		}
		op := i
		l := 1 + int(comp[i])
		i++
		if l <= 64 {
			minD = max(minD, op+65)
			if l > len(comp)-i {
				return nil, 0, errors.New("literals past end of input")
			}
			if l > size-len(out) {
				return nil, 0, errors.New("literals past end of output")
			}
			out = append(out, comp[i:i+l]...)
			i += l
		} else {
			minD = max(minD, op+2)
			l -= 64
			if l > size-len(out) {
				return nil, 0, errors.New("zeros past end of output")
			}
			out = append(out, make([]byte, l)...)
		}
	}
	if i != len(comp) {
		return nil, 0, fmt.Errorf("%d trailing bytes", len(comp)-i)
	}
	return out, minD, nil
}

// decode is decompress without the smallest capacity.
func decode(comp []byte, size int) ([]byte, error) {
	out, _, err := decompress(comp, size)
	return out, err
}

// checkMinCapacity verifies the positions of the output checks: with
// out = Compress(ample, src), the smallest capacity derived from the runs of
// out succeeds with the same output, and one byte less fails.
func checkMinCapacity(t testing.TB, out, src []byte) {
	t.Helper()
	_, minD, err := decompress(out, len(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > minD {
		t.Fatalf("c=%d but smallest capacity %d", len(out), minD)
	}
	if got := codec.CheckMinCapacity(t, "", src, minD, len(out)); !bytes.Equal(got, out) {
		t.Fatalf("n=%d D=%d: output differs", len(src), minD)
	}
}

// ---------------------------------------------------------------------------
// Data generators for round-trip tests and benchmarks.

// sparseData has runs of zeros of random lengths (single zeros, pairs,
// runs longer than 192) between runs of random bytes that may contain zeros.
func sparseData(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; {
		l := min(n-i, []int{1, 2, 3, 63, 64, 65, 191, 192, 193, 400}[r.IntN(10)])
		if r.IntN(2) == 0 {
			for k := i; k < i+l; k++ {
				b[k] = byte(r.IntN(4) * r.IntN(256)) // zero with probability > 1/4
			}
		}
		i += l
	}
	return b
}

// generators are compresstest.Generators with sparse before mixed.
var generators = slices.Insert(slices.Clone(compresstest.Generators), len(compresstest.Generators)-1,
	compresstest.Generator{Name: "sparse", Gen: sparseData})

// ---------------------------------------------------------------------------

func TestTiny(t *testing.T) {
	t.Parallel()
	x := func(n int) string { return string(bytes.Repeat([]byte{'x'}, n)) }
	zeros := func(n int) string { return string(make([]byte, n)) }
	for _, tc := range []struct {
		src, want string
		minD      int // smallest capacity that succeeds
	}{
		{"", "", 0},
		{"A", "\x00A", 65},
		{zeros(1), "\x40", 2},
		{zeros(192), "\xff", 2},
		{zeros(193), "\xff\x40", 3},
		{zeros(384), "\xff\xff", 3},
		{"A\x00B", "\x02A\x00B", 65},
		{"A\x00", "\x00A\x40", 65},
		{"A\x00\x00B", "\x00A\x41\x00B", 68},
		{"\x00A", "\x40\x00A", 66},
		// A single zero at the 64-byte limit is not copied.
		{x(63) + "\x00y", "\x3e" + x(63) + "\x40\x00y", 130},
		{x(63) + "\x00", "\x3e" + x(63) + "\x40", 66},
		{x(64), "\x3f" + x(64), 65},
		{x(65), "\x3f" + x(64) + "\x00x", 65 + 65},
		{"\x00x\x00" + x(62) + zeros(200), "\x40\x3f" + "x\x00" + x(62) + "\xff\x47", 69},
	} {
		src := []byte(tc.src)
		dst := make([]byte, 300)
		got, err := Compress(dst, src)
		if err != nil || string(dst[:got]) != tc.want {
			t.Fatalf("%q: got %q err=%v, want %q", src, dst[:got], err, tc.want)
		}
		codec.CheckOutput(t, dst[:got], src)
		checkMinCapacity(t, dst[:got], src)
		if _, minD, _ := decompress(dst[:got], len(src)); minD != tc.minD {
			t.Fatalf("%q: smallest capacity %d, want %d", src, minD, tc.minD)
		}
	}
	// Empty input: no output, for any capacity.
	for d := 0; d < 4; d++ {
		if got, err := Compress(make([]byte, d), nil); err != nil || got != 0 {
			t.Fatalf("empty, D=%d: c=%d err=%v", d, got, err)
		}
	}
	// Short inputs of every byte pattern over {0, 1}.
	for n := 1; n <= 12; n++ {
		for bitsv := 0; bitsv < 1<<n; bitsv++ {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(bitsv >> i & 1)
			}
			dst := make([]byte, 100)
			got, err := Compress(dst, src)
			ref, _ := refCompress(src, len(dst))
			if err != nil || !bytes.Equal(dst[:got], ref) {
				t.Fatalf("%x: got %x err=%v, reference %x", src, dst[:got], err, ref)
			}
			codec.CheckOutput(t, dst[:got], src)
			checkMinCapacity(t, dst[:got], src)
		}
	}
}

var roundTripSizes = []int{512, 1000, 4096, 5120, 8192, 32768, 65536, 131072,
	262144, 1 << 20}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	codec.CheckRoundTrips(t, rand.New(rand.NewPCG(1, 2)), generators, roundTripSizes,
		func(n int) int { return n + n/64 + 64 }, checkMinCapacity)
}

// TestRandomizedAgainstReference compares outputs for random inputs and
// capacities, in particular around the smallest one that succeeds.
func TestRandomizedAgainstReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	iters := 400
	if !stress.On() { // the stress run (DDTSIM_STRESS=1) tries them all
		iters = 80
	}
	for it := 0; it < iters; it++ {
		g := generators[r.IntN(len(generators))]
		var n int
		switch r.IntN(3) {
		case 0:
			n = r.IntN(300)
		default:
			n = 512 * (1 + r.IntN(256))
		}
		src := g.Gen(r, n)
		big := make([]byte, n+n/64+64)
		full, err := Compress(big, src)
		if err != nil {
			t.Fatal(err)
		}
		codec.CheckOutput(t, big[:full], src)
		_, minD, _ := decompress(big[:full], n)
		what := fmt.Sprintf("%s (min %d)", g.Name, minD)
		for _, d := range []int{minD - 2, minD - 1, minD, minD + 1, full, compresstest.Capacity(n), r.IntN(full + 80)} {
			if d < 0 {
				continue
			}
			if out, err := codec.CheckAgainstReference(t, what, src, d); err == nil && !bytes.Equal(out, big[:full]) {
				t.Fatalf("%s n=%d D=%d: output mismatch", g.Name, n, d)
			}
		}
	}
}

func TestAllocs(t *testing.T) {
	src := sparseData(rand.New(rand.NewPCG(9, 9)), 131072)
	dst := make([]byte, compresstest.Capacity(len(src)))
	allocs := testing.AllocsPerRun(20, func() {
		Compress(dst, src)
		Compress(dst[:100], src)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
}

func FuzzCompress(f *testing.F) {
	f.Add([]byte("The quick brown fox jumps over the lazy dog. The quick brown fox"), uint32(0))
	f.Add(make([]byte, 500), uint32(3))
	f.Add([]byte("a\x00b\x00\x00c\x00\x00\x00d"), uint32(0))
	f.Add(compresstest.LCG(1000), uint32(900))
	f.Add(append(bytes.Repeat([]byte{'x'}, 63), 0, 'y'), uint32(66))
	f.Add([]byte{}, uint32(3))
	f.Fuzz(func(t *testing.T, src []byte, capSel uint32) {
		// capSel 0 → ample capacity; otherwise a capacity up to a bit
		// more than the input size (exercises tight limits).
		d := len(src) + len(src)/64 + 64
		if capSel != 0 {
			d = int(capSel % uint32(len(src)+96))
		}
		if out, ok := codec.FuzzAgainstReference(t, src, d); ok {
			checkMinCapacity(t, out, src)
		}
	})
}

// ---------------------------------------------------------------------------

// BenchmarkCompress compresses with ZFS's capacity: text and random (no zero
// pairs) fail after about 7/8 of the input.
func BenchmarkCompress(b *testing.B) {
	inputs := compresstest.BenchInputs(func(r *rand.Rand) []compresstest.BenchInput {
		return []compresstest.BenchInput{{Name: "sparse", Data: sparseData(r, compresstest.RecordSize)}}
	})
	compresstest.BenchCompress(b, inputs, func() compresstest.CompressFunc { return Compress })
}
