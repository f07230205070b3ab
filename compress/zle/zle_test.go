package zle

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// ---------------------------------------------------------------------------
// Input generators of docs/zfs-semantics.md Appendix A.

// lcg returns lcg(n): x0 = 1, x_{k+1} = (1103515245·x_k + 12345) mod 2^31,
// byte_k = (x_{k+1} >> 16) mod 256.
func lcg(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for k := range b {
		x = (1103515245*x + 12345) & (1<<31 - 1)
		b[k] = byte(x >> 16)
	}
	return b
}

// fox returns the 45-byte sentence repeated and truncated to n bytes.
func fox(n int) []byte {
	const s = "The quick brown fox jumps over the lazy dog. "
	b := make([]byte, n)
	for i := range b {
		b[i] = s[i%len(s)]
	}
	return b
}

// capacity is D = L − floor(L/8) (§4.3, bands P2–P5; the Appendix A vectors).
func capacity(l int) int { return l - l/8 }

type vector struct {
	name      string
	data      func() []byte
	want      int // c, or -1 for FAIL at capacity D
	unlimited int // c with ample capacity (0: same as want; -1: not given)
}

// appendixA returns the ZLE column of Appendix A.
func appendixA() []vector {
	return []vector{
		{"TV1", func() []byte {
			b := make([]byte, 512)
			copy(b, bytes.Repeat([]byte{'A'}, 100))
			return b
		}, 105, 0},
		{"TV2", func() []byte {
			b := make([]byte, 131072)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}, -1, 133120},
		{"TV3", func() []byte { return fox(65536) }, -1, -1},
		{"TV4", func() []byte {
			b := make([]byte, 4096)
			copy(b, lcg(3000))
			return b
		}, 3053, 0},
		{"TV5", func() []byte { return lcg(131072) }, -1, -1},
		{"TV6", func() []byte {
			b := lcg(131072)
			for i := range b {
				b[i] &= 0x0F
			}
			return b
		}, -1, -1},
		{"TV7", func() []byte {
			b := make([]byte, 131072)
			copy(b, lcg(65536))
			return b
		}, 66902, 0},
		{"TV8", func() []byte {
			b := make([]byte, 5120)
			l := lcg(4500)
			for i := range l {
				b[i] = l[i] & 0x3F
			}
			return b
		}, -1, 4574},
	}
}

func TestAppendixA(t *testing.T) {
	for _, v := range appendixA() {
		t.Run(v.name, func(t *testing.T) {
			src := v.data()
			d := capacity(len(src))
			dst := make([]byte, d)
			got, err := Compress(dst, src)
			if v.want < 0 {
				if !errors.Is(err, ErrNoFit) {
					t.Fatalf("L=%d D=%d: got c=%d err=%v, want ErrNoFit", len(src), d, got, err)
				}
			} else {
				if err != nil || got != v.want {
					t.Fatalf("L=%d D=%d: got c=%d err=%v, want %d", len(src), d, got, err, v.want)
				}
				checkOutput(t, dst[:got], src)
			}
			big := make([]byte, 2*len(src)+64)
			gotU, err := Compress(big, src)
			if err != nil {
				t.Fatalf("unlimited: %v", err)
			}
			switch wantU := v.unlimited; {
			case wantU == 0 && gotU != v.want, wantU > 0 && gotU != wantU:
				t.Fatalf("unlimited: got c=%d, want %d", gotU, max(wantU, v.want))
			}
			checkOutput(t, big[:gotU], src)
			if v.want >= 0 && !bytes.Equal(big[:gotU], dst[:got]) {
				t.Fatalf("output with capacity D differs from unlimited output")
			}
			// The reference implementation agrees too.
			if r, ok := refCompress(src, d); ok != (v.want >= 0) || (ok && len(r) != v.want) {
				t.Fatalf("reference: len=%d ok=%v", len(r), ok)
			}
		})
	}
}

// TestAppendixADerived checks unlimited sizes that Appendix A does not list
// but that follow from §5.3 directly.
func TestAppendixADerived(t *testing.T) {
	// TV3: fox has no zero byte, so 65536 bytes are 1024 literal runs of
	// 64: 1024 · 65 = 66560 bytes.
	big := make([]byte, 1<<17)
	if got, err := Compress(big, fox(65536)); err != nil || got != 66560 {
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

// checkOutput verifies that out decodes to src.
func checkOutput(t testing.TB, out, src []byte) {
	t.Helper()
	got, _, err := decompress(out, len(src))
	if err != nil {
		t.Fatalf("decompress (n=%d): %v", len(src), err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("round trip mismatch (n=%d)", len(src))
	}
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
	dst := make([]byte, minD)
	if got, err := Compress(dst, src); err != nil || !bytes.Equal(dst[:got], out) {
		t.Fatalf("n=%d D=%d: c=%d err=%v, want c=%d", len(src), minD, got, err, len(out))
	}
	if minD == 0 {
		return
	}
	if got, err := Compress(dst[:minD-1], src); !errors.Is(err, ErrNoFit) {
		t.Fatalf("n=%d D=%d: c=%d err=%v, want ErrNoFit", len(src), minD-1, got, err)
	}
}

// ---------------------------------------------------------------------------
// Data generators for round-trip tests and benchmarks.

var words = []string{"the", "of", "and", "to", "in", "a", "is", "that", "for",
	"it", "as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
	"or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
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

func repetitiveData(r *rand.Rand, n int) []byte {
	period := 1 + r.IntN(300)
	pat := randomData(r, period)
	b := make([]byte, n)
	for i := range b {
		b[i] = pat[i%period]
		if r.IntN(1000) == 0 {
			b[i] ^= byte(r.Uint32())
		}
	}
	return b
}

func lowEntropyData(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	mask := byte(1<<(1+r.IntN(4)) - 1)
	for i := range b {
		b[i] = byte(r.Uint32()) & mask
	}
	return b
}

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

func mixedData(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; {
		l := min(n-i, 1+r.IntN(8192))
		switch r.IntN(4) {
		case 0:
			copy(b[i:], randomData(r, l))
		case 1:
			copy(b[i:], textData(r, l))
		case 2:
			// zeros
		case 3:
			if i > 0 { // copy from further back
				src := r.IntN(i)
				for k := 0; k < l; k++ {
					b[i+k] = b[src+k]
				}
			}
		}
		i += l
	}
	return b
}

type generator struct {
	name string
	gen  func(r *rand.Rand, n int) []byte
}

var generators = []generator{
	{"random", randomData},
	{"text", textData},
	{"repetitive", repetitiveData},
	{"zero", func(_ *rand.Rand, n int) []byte { return make([]byte, n) }},
	{"lowentropy", lowEntropyData},
	{"sparse", sparseData},
	{"mixed", mixedData},
}

// ---------------------------------------------------------------------------

func TestTiny(t *testing.T) {
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
		checkOutput(t, dst[:got], src)
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
			checkOutput(t, dst[:got], src)
			checkMinCapacity(t, dst[:got], src)
		}
	}
}

var roundTripSizes = []int{512, 1000, 4096, 5120, 8192, 32768, 65536, 131072,
	262144, 1 << 20}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, g := range generators {
		for _, n := range roundTripSizes {
			if testing.Short() && n > 131072 {
				continue
			}
			src := g.gen(r, n)
			dst := make([]byte, n+n/64+64)
			got, err := Compress(dst, src)
			if err != nil {
				t.Fatalf("%s n=%d: %v", g.name, n, err)
			}
			checkOutput(t, dst[:got], src)
			checkMinCapacity(t, dst[:got], src)

			// Same result as the literal reference transcription.
			ref, ok := refCompress(src, len(dst))
			if !ok || !bytes.Equal(ref, dst[:got]) {
				t.Fatalf("%s n=%d: differs from reference (ok=%v, %d vs %d)", g.name, n, ok, len(ref), got)
			}
			d := capacity(n)
			got2, err2 := Compress(make([]byte, d), src)
			_, ok = refCompress(src, d)
			if (err2 == nil) != ok {
				t.Fatalf("%s n=%d D=%d: err=%v reference ok=%v", g.name, n, d, err2, ok)
			}
			if err2 == nil && got2 != got {
				t.Fatalf("%s n=%d: c=%d with D, %d unlimited", g.name, n, got2, got)
			}
		}
	}
}

// TestRandomizedAgainstReference compares outputs for random inputs and
// capacities, in particular around the smallest one that succeeds.
func TestRandomizedAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	iters := 400
	if testing.Short() {
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
		src := g.gen(r, n)
		big := make([]byte, n+n/64+64)
		full, err := Compress(big, src)
		if err != nil {
			t.Fatal(err)
		}
		checkOutput(t, big[:full], src)
		_, minD, _ := decompress(big[:full], n)
		for _, d := range []int{minD - 2, minD - 1, minD, minD + 1, full, capacity(n), r.IntN(full + 80)} {
			if d < 0 {
				continue
			}
			dst := make([]byte, d)
			got, err := Compress(dst, src)
			ref, ok := refCompress(src, d)
			if (err == nil) != ok {
				t.Fatalf("%s n=%d D=%d (min %d): err=%v reference ok=%v", g.name, n, d, minD, err, ok)
			}
			if err == nil && (got > d || !bytes.Equal(dst[:got], ref) || !bytes.Equal(dst[:got], big[:full])) {
				t.Fatalf("%s n=%d D=%d: output mismatch", g.name, n, d)
			}
		}
	}
}

func TestAllocs(t *testing.T) {
	src := sparseData(rand.New(rand.NewPCG(9, 9)), 131072)
	dst := make([]byte, capacity(len(src)))
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
	f.Add(lcg(1000), uint32(900))
	f.Add(append(bytes.Repeat([]byte{'x'}, 63), 0, 'y'), uint32(66))
	f.Add([]byte{}, uint32(3))
	f.Fuzz(func(t *testing.T, src []byte, capSel uint32) {
		// capSel 0 → ample capacity; otherwise a capacity up to a bit
		// more than the input size (exercises tight limits).
		d := len(src) + len(src)/64 + 64
		if capSel != 0 {
			d = int(capSel % uint32(len(src)+96))
		}
		dst := make([]byte, d)
		got, err := Compress(dst, src)
		ref, ok := refCompress(src, d)
		if (err == nil) != ok {
			t.Fatalf("n=%d D=%d: err=%v, reference ok=%v", len(src), d, err, ok)
		}
		if err != nil {
			if !errors.Is(err, ErrNoFit) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if got > len(dst) {
			t.Fatalf("c=%d for capacity %d", got, len(dst))
		}
		if !bytes.Equal(dst[:got], ref) {
			t.Fatalf("differs from reference")
		}
		checkOutput(t, dst[:got], src)
		checkMinCapacity(t, dst[:got], src)
	})
}

// ---------------------------------------------------------------------------

func BenchmarkCompress(b *testing.B) {
	const record = 128 << 10
	r := rand.New(rand.NewPCG(10, 11))
	inputs := []struct {
		name string
		data []byte
	}{
		{"text", textData(r, record)},
		{"random", randomData(r, record)},
		{"zero", make([]byte, record)},
		{"sparse", sparseData(r, record)},
	}
	// A 128 KiB record from the middle of an executable (nil → skipped).
	var bin []byte
	for _, p := range []string{runtime.GOROOT() + "/bin/gofmt", "/usr/local/go/bin/gofmt"} {
		if d, err := os.ReadFile(p); err == nil && len(d) >= 4*record {
			bin = d[len(d)/2 : len(d)/2+record]
			break
		}
	}
	inputs = append(inputs, struct {
		name string
		data []byte
	}{"binary", bin})
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			if in.data == nil {
				b.Skip("gofmt binary not found")
			}
			// ZFS's capacity: text and random (no zero pairs) fail
			// after about 7/8 of the input.
			dst := make([]byte, capacity(len(in.data)))
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			res := 0
			for b.Loop() {
				n, _ := Compress(dst, in.data)
				res = n
			}
			b.ReportMetric(float64(res), "c")
		})
	}
}
