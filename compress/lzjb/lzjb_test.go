package lzjb

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

// appendixA returns the LZJB column of Appendix A.
func appendixA() []vector {
	return []vector{
		{"TV1", func() []byte {
			b := make([]byte, 512)
			copy(b, bytes.Repeat([]byte{'A'}, 100))
			return b
		}, 37, 0},
		{"TV2", func() []byte {
			b := make([]byte, 131072)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}, 9986, 0},
		{"TV3", func() []byte { return fox(65536) }, 3234, 0},
		{"TV4", func() []byte {
			b := make([]byte, 4096)
			copy(b, lcg(3000))
			return b
		}, 3454, 0},
		{"TV5", func() []byte { return lcg(131072) }, -1, 147446},
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
		}, 75902, 0},
		{"TV8", func() []byte {
			b := make([]byte, 5120)
			l := lcg(4500)
			for i := range l {
				b[i] = l[i] & 0x3F
			}
			return b
		}, -1, 5098},
	}
}

func TestAppendixA(t *testing.T) {
	var c Compressor
	for _, v := range appendixA() {
		t.Run(v.name, func(t *testing.T) {
			src := v.data()
			d := capacity(len(src))
			dst := make([]byte, d)
			got, err := c.Compress(dst, src)
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
			gotU, err := c.Compress(big, src)
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
			if r, ok := refCompress(src, d, 0); ok != (v.want >= 0) || (ok && len(r) != v.want) {
				t.Fatalf("reference: len=%d ok=%v", len(r), ok)
			}
		})
	}
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

// checkMinCapacity verifies the position of the output check: with
// out = Compress(ample, src), capacity lastCtl + 18 succeeds with the same
// output and lastCtl + 17 fails (any capacity succeeds for empty src).
func checkMinCapacity(t testing.TB, c *Compressor, out, src []byte) {
	t.Helper()
	_, lastCtl, err := decompress(out, len(src))
	if err != nil {
		t.Fatal(err)
	}
	if lastCtl < 0 {
		if got, err := c.Compress(nil, src); err != nil || got != 0 {
			t.Fatalf("empty input with D=0: c=%d err=%v", got, err)
		}
		return
	}
	minD := lastCtl + 18
	if len(out) >= minD {
		t.Fatalf("c=%d but smallest capacity %d", len(out), minD)
	}
	dst := make([]byte, minD)
	if got, err := c.Compress(dst, src); err != nil || !bytes.Equal(dst[:got], out) {
		t.Fatalf("n=%d D=%d (last control byte %d): c=%d err=%v, want c=%d", len(src), minD, lastCtl, got, err, len(out))
	}
	if got, err := c.Compress(dst[:minD-1], src); !errors.Is(err, ErrNoFit) {
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
	{"mixed", mixedData},
}

// ---------------------------------------------------------------------------

func TestTiny(t *testing.T) {
	var c Compressor
	for n := 0; n <= 140; n++ {
		src := fox(n)
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
	r := rand.New(rand.NewPCG(12, 13))
	src := randomData(r, 1000)
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
		g := generators[it%len(generators)]
		src := g.gen(r, 512*(1+r.IntN(64)))
		a := make([]byte, 2*len(src)+32)
		b := make([]byte, 2*len(src)+32)
		ca, _ := c.compress(a, src, 0)
		cb, _ := c.compress(b, src, 512)
		checkOutput(t, b[:cb], src)
		if ref, _ := refCompress(src, len(b), 512); !bytes.Equal(ref, b[:cb]) {
			t.Fatalf("%s n=%d base 512: differs from reference", g.name, len(src))
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
	r := rand.New(rand.NewPCG(1, 2))
	var c Compressor
	for _, g := range generators {
		for _, n := range roundTripSizes {
			if testing.Short() && n > 131072 {
				continue
			}
			src := g.gen(r, n)
			dst := make([]byte, n+n/8+32)
			got, err := c.Compress(dst, src)
			if err != nil {
				t.Fatalf("%s n=%d: %v", g.name, n, err)
			}
			checkOutput(t, dst[:got], src)
			checkMinCapacity(t, &c, dst[:got], src)

			// Same result as the literal reference transcription.
			ref, ok := refCompress(src, len(dst), 0)
			if !ok || !bytes.Equal(ref, dst[:got]) {
				t.Fatalf("%s n=%d: differs from reference (ok=%v, %d vs %d)", g.name, n, ok, len(ref), got)
			}
			d := capacity(n)
			got2, err2 := c.Compress(make([]byte, d), src)
			_, ok = refCompress(src, d, 0)
			if (err2 == nil) != ok {
				t.Fatalf("%s n=%d D=%d: err=%v reference ok=%v", g.name, n, d, err2, ok)
			}
			if err2 == nil && got2 != got {
				t.Fatalf("%s n=%d: c=%d with D, %d unlimited", g.name, n, got2, got)
			}
		}
	}
}

// TestRandomizedAgainstReference compares outputs for random inputs,
// capacities (in particular around the smallest one that succeeds) and buffer
// addresses with the reference.
func TestRandomizedAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var c Compressor
	iters := 300
	if testing.Short() {
		iters = 60
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
		base := uint(0)
		if it%3 == 1 {
			base = uint(r.IntN(1 << 20))
		}
		big := make([]byte, n+n/8+32)
		full, err := c.compress(big, src, base)
		if err != nil {
			t.Fatal(err)
		}
		checkOutput(t, big[:full], src)
		_, lastCtl, _ := decompress(big[:full], n)
		minD := lastCtl + 18
		for _, d := range []int{minD - 2, minD - 1, minD, minD + 1, full, capacity(n), r.IntN(full + 24)} {
			if d < 0 {
				continue
			}
			dst := make([]byte, d)
			got, err := c.compress(dst, src, base)
			ref, ok := refCompress(src, d, base)
			if (err == nil) != ok {
				t.Fatalf("%s n=%d D=%d base=%d (min %d): err=%v reference ok=%v", g.name, n, d, base, minD, err, ok)
			}
			if err == nil && (got > d || !bytes.Equal(dst[:got], ref) || !bytes.Equal(dst[:got], big[:full])) {
				t.Fatalf("%s n=%d D=%d base=%d: output mismatch", g.name, n, d, base)
			}
		}
	}
}

// TestReuse checks that a reused Compressor gives the same result as a fresh
// one (the table is reset per call).
func TestReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var reused Compressor
	for i := 0; i < 40; i++ {
		n := []int{4096, 65536, 131072}[i%3]
		src := generators[r.IntN(len(generators))].gen(r, n)
		a := make([]byte, 2*n)
		b := make([]byte, 2*n)
		ca, _ := reused.Compress(a, src)
		var fresh Compressor
		cb, _ := fresh.Compress(b, src)
		if ca != cb || !bytes.Equal(a[:ca], b[:cb]) {
			t.Fatalf("iteration %d: reused compressor differs", i)
		}
	}
}

func TestAllocs(t *testing.T) {
	src := textData(rand.New(rand.NewPCG(9, 9)), 131072)
	dst := make([]byte, capacity(len(src)))
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
	f.Add(lcg(1000), uint32(900))
	f.Add(fox(5000), uint32(1000))
	f.Add([]byte{}, uint32(3))
	var c Compressor
	f.Fuzz(func(t *testing.T, src []byte, capSel uint32) {
		// capSel 0 → ample capacity; otherwise a capacity up to a bit
		// more than the input size (exercises tight limits).
		d := len(src) + len(src)/8 + 32
		if capSel != 0 {
			d = int(capSel % uint32(len(src)+48))
		}
		dst := make([]byte, d)
		got, err := c.Compress(dst, src)
		ref, ok := refCompress(src, d, 0)
		if (err == nil) != ok {
			t.Fatalf("n=%d D=%d: err=%v, reference ok=%v", len(src), d, err, ok)
		}
		if err != nil {
			if !errors.Is(err, ErrNoFit) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if got > len(dst) || (len(src) > 0 && got >= len(dst)) {
			t.Fatalf("c=%d for capacity %d", got, len(dst))
		}
		if !bytes.Equal(dst[:got], ref) {
			t.Fatalf("differs from reference")
		}
		checkOutput(t, dst[:got], src)
		checkMinCapacity(t, &c, dst[:got], src)
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
			var c Compressor
			// ZFS's capacity; random data fails near its end.
			dst := make([]byte, capacity(len(in.data)))
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			res := 0
			for b.Loop() {
				n, _ := c.Compress(dst, in.data)
				res = n
			}
			b.ReportMetric(float64(res), "c")
		})
	}
}
