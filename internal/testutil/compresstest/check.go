package compresstest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/stress"
)

// CompressFunc compresses src into dst, whose length is the capacity D, and
// returns c, the number of bytes written, or an error (one that is the
// compressor's ErrNoFit when the output does not fit).
type CompressFunc func(dst, src []byte) (int, error)

// DecompressFunc decodes out, a compressor's output, into n bytes. It
// rejects what the compressor never produces, not only what cannot be
// decoded.
type DecompressFunc func(out []byte, n int) ([]byte, error)

// ReferenceFunc is a slow, literal transcription of a compressor: its whole
// output with capacity d, or false when the output does not fit.
type ReferenceFunc func(src []byte, d int) ([]byte, bool)

// Codec is a compressor under test and what checks it.
type Codec struct {
	Compress   CompressFunc
	Decompress DecompressFunc
	Reference  ReferenceFunc // nil when there is none
	NoFit      error         // the compressor's ErrNoFit
}

// named prefixes "n=<len(src)>" with what, the name of an input, if any.
func named(what string, src []byte) string {
	if what == "" {
		return fmt.Sprintf("n=%d", len(src))
	}
	return fmt.Sprintf("%s n=%d", what, len(src))
}

// CheckOutput checks that out decodes to src.
func (c Codec) CheckOutput(t testing.TB, out, src []byte) {
	t.Helper()
	got, err := c.Decompress(out, len(src))
	if err != nil {
		t.Fatalf("decompress (n=%d): %v", len(src), err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("round trip mismatch (n=%d, decoded %d bytes)", len(src), len(got))
	}
}

// RoundTrip compresses src with capacity d, which must be enough, checks
// that the output decodes to src and returns it. what names the input in
// messages (if not "").
func (c Codec) RoundTrip(t testing.TB, what string, src []byte, d int) []byte {
	t.Helper()
	dst := make([]byte, d)
	got, err := c.Compress(dst, src)
	if err != nil {
		t.Fatalf("%s: %v", named(what, src), err)
	}
	c.CheckOutput(t, dst[:got], src)
	return dst[:got]
}

// CheckMinCapacity checks that d is the smallest capacity that fits src:
// with capacity d Compress succeeds with c = want, with d − 1 it fails with
// NoFit (not tried when d is 0). It returns the output with capacity d.
// what names the input in messages (if not "").
func (c Codec) CheckMinCapacity(t testing.TB, what string, src []byte, d, want int) []byte {
	t.Helper()
	dst := make([]byte, d)
	if got, err := c.Compress(dst, src); err != nil || got != want {
		t.Fatalf("%s: capacity %d gave c=%d, %v; want c=%d", named(what, src), d, got, err, want)
	}
	if d == 0 {
		return dst[:want]
	}
	if got, err := c.Compress(make([]byte, d-1), src); !errors.Is(err, c.NoFit) {
		t.Fatalf("%s: capacity %d gave c=%d, %v; want %v", named(what, src), d-1, got, err, c.NoFit)
	}
	return dst[:want]
}

// CheckFit checks the capacity bound against full, the output with ample
// capacity: with capacity d ≥ len(full) Compress gives full again, with a
// smaller one it fails with NoFit.
func (c Codec) CheckFit(t testing.TB, src, full []byte, d int) {
	t.Helper()
	dst := make([]byte, d)
	n, err := c.Compress(dst, src)
	if d >= len(full) {
		if err != nil || n != len(full) || !bytes.Equal(dst[:n], full) {
			t.Fatalf("D=%d ≥ c=%d: got %d, %v", d, len(full), n, err)
		}
	} else if !errors.Is(err, c.NoFit) {
		t.Fatalf("D=%d < c=%d: got %d, %v", d, len(full), n, err)
	}
}

// CheckAgainstReference compresses src with capacity d and checks that it
// fits exactly when the Reference's output does, and then that it is within
// d and equal to the Reference's (which must be set). It returns the output
// (nil if it did not fit) and Compress's error. what names the input in messages (if not "").
func (c Codec) CheckAgainstReference(t testing.TB, what string, src []byte, d int) ([]byte, error) {
	t.Helper()
	dst := make([]byte, d)
	got, err := c.Compress(dst, src)
	ref, ok := c.Reference(src, d)
	if (err == nil) != ok {
		t.Fatalf("%s D=%d: err=%v, reference ok=%v", named(what, src), d, err, ok)
	}
	if err != nil {
		return nil, err
	}
	if got > d || !bytes.Equal(dst[:got], ref) {
		t.Fatalf("%s D=%d: c=%d differs from the reference (%d bytes)", named(what, src), d, got, len(ref))
	}
	return dst[:got], nil
}

// FuzzAgainstReference is the body of a fuzz test against the Reference:
// CheckAgainstReference, then a failure must be NoFit and an output must
// decode to src. It returns the output, or false if it did not fit.
func (c Codec) FuzzAgainstReference(t testing.TB, src []byte, d int) ([]byte, bool) {
	t.Helper()
	out, err := c.CheckAgainstReference(t, "", src, d)
	if err != nil {
		if !errors.Is(err, c.NoFit) {
			t.Fatalf("unexpected error %v", err)
		}
		return nil, false
	}
	c.CheckOutput(t, out, src)
	return out, true
}

// CheckAppendixA runs a subtest per vector: Compress with capacity D =
// Capacity(L) gives Want (or fails with NoFit for -1), Compress with ample
// capacity gives Unlimited (Want for 0, any c for -1), both outputs decode
// to the input and agree when both fit, and the Reference gives the same
// verdict and c with capacity D (Reference must be set).
func (c Codec) CheckAppendixA(t *testing.T, vectors []Vector) {
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			src := AppendixAInput(v.Name)
			if src == nil {
				t.Fatalf("no Appendix A vector %q", v.Name)
			}
			d := Capacity(len(src))
			dst := make([]byte, d)
			got, err := c.Compress(dst, src)
			if v.Want < 0 {
				if !errors.Is(err, c.NoFit) {
					t.Fatalf("L=%d D=%d: got c=%d err=%v, want ErrNoFit", len(src), d, got, err)
				}
			} else {
				if err != nil || got != v.Want {
					t.Fatalf("L=%d D=%d: got c=%d err=%v, want %d", len(src), d, got, err, v.Want)
				}
				c.CheckOutput(t, dst[:got], src)
			}
			big := make([]byte, 2*len(src)+64)
			gotU, err := c.Compress(big, src)
			if err != nil {
				t.Fatalf("unlimited: %v", err)
			}
			switch wantU := v.Unlimited; {
			case wantU == 0 && gotU != v.Want, wantU > 0 && gotU != wantU:
				t.Fatalf("unlimited: got c=%d, want %d", gotU, max(wantU, v.Want))
			}
			c.CheckOutput(t, big[:gotU], src)
			if v.Want >= 0 && !bytes.Equal(big[:gotU], dst[:got]) {
				t.Fatalf("output with capacity D differs from unlimited output")
			}
			// The reference implementation agrees too.
			if r, ok := c.Reference(src, d); ok != (v.Want >= 0) || (ok && len(r) != v.Want) {
				t.Fatalf("reference: len=%d ok=%v", len(r), ok)
			}
		})
	}
}

// CheckRoundTrips compresses, for every generator and size (sizes above
// 128 KiB only in the stress run, DDTSIM_STRESS=1), an input drawn from r with capacity
// ample(n): the output must decode to the input, pass check (if not nil) and
// equal the Reference's with that capacity. With capacity D = Capacity(n),
// Compress must fit exactly when the Reference does, with the same c.
// Reference must be set.
func (c Codec) CheckRoundTrips(t *testing.T, r *rand.Rand, gens []Generator, sizes []int, ample func(n int) int, check func(t testing.TB, out, src []byte)) {
	t.Helper()
	for _, g := range gens {
		for _, n := range sizes {
			if n > 131072 && !stress.On() {
				continue
			}
			src := g.Gen(r, n)
			d := ample(n)
			out := c.RoundTrip(t, g.Name, src, d)
			if check != nil {
				check(t, out, src)
			}

			// Same result as the literal reference transcription.
			ref, ok := c.Reference(src, d)
			if !ok || !bytes.Equal(ref, out) {
				t.Fatalf("%s n=%d: differs from reference (ok=%v, %d vs %d)", g.Name, n, ok, len(ref), len(out))
			}
			d = Capacity(n)
			got2, err2 := c.Compress(make([]byte, d), src)
			_, ok = c.Reference(src, d)
			if (err2 == nil) != ok {
				t.Fatalf("%s n=%d D=%d: err=%v reference ok=%v", g.Name, n, d, err2, ok)
			}
			if err2 == nil && got2 != len(out) {
				t.Fatalf("%s n=%d: c=%d with D, %d unlimited", g.Name, n, got2, len(out))
			}
		}
	}
}

// CheckReuse compresses 40 inputs of 4 KiB, 64 KiB and 128 KiB from gens
// (picked by r) with one reused compressor from newCompress and with a new
// one each; the outputs must be the same (ZFS compresses every block from a
// fresh state).
func CheckReuse(t *testing.T, r *rand.Rand, gens []Generator, newCompress func() CompressFunc) {
	t.Helper()
	reused := newCompress()
	for i := 0; i < 40; i++ {
		n := []int{4096, 65536, 131072}[i%3]
		src := gens[r.IntN(len(gens))].Gen(r, n)
		a := make([]byte, 2*n)
		b := make([]byte, 2*n)
		ca, _ := reused(a, src)
		cb, _ := newCompress()(b, src)
		if ca != cb || !bytes.Equal(a[:ca], b[:cb]) {
			t.Fatalf("iteration %d: reused compressor differs", i)
		}
	}
}

// Sizer is a block compressor with a size-only path (zio.Sizer): Size
// returns the length Compress would return for a dst of limit bytes, or
// false where Compress fails.
type Sizer interface {
	Compress(dst, src []byte) (int, error)
	Size(src []byte, limit int) (int, bool)
}

// SizeChecker compares a Sizer's Size with its Compress, reusing one output
// buffer.
type SizeChecker struct {
	dst []byte
}

// Check fails the test unless s.Size(src, limit) returns what s.Compress
// returns for a dst of limit bytes (limit ≥ 0): the same length, or failure
// for both. It returns Compress's result.
func (sc *SizeChecker) Check(t testing.TB, s Sizer, what string, src []byte, limit int) (int, bool) {
	t.Helper()
	if len(sc.dst) < limit {
		sc.dst = make([]byte, limit)
	}
	want, err := s.Compress(sc.dst[:limit], src)
	got, ok := s.Size(src, limit)
	if ok != (err == nil) || got != want {
		t.Fatalf("%s n=%d limit=%d: Size = %d, %v; Compress = %d, %v", what, len(src), limit, got, ok, want, err)
	}
	return want, ok
}

// ZFSLimits returns the capacities ZFS gives a block of l bytes under the
// release bands (zio.Policy.MaxCompressedSize): l − l/8; that rounded down
// to 512 (P1); rounded down to 512 or 4096, or 112 when below (P6, ashift 9
// or 12; zle keeps l − l/8, which the list holds too).
func ZFSLimits(l int) []int {
	d := l - l/8
	p6 := func(a int) int {
		if r := d - d%a; r >= a {
			return r
		}
		return 112
	}
	return []int{d, d &^ 511, p6(512), p6(4096)}
}
