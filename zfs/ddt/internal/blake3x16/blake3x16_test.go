package blake3x16

import (
	"math/rand/v2"
	"testing"

	"lukechampine.com/blake3"
	"lukechampine.com/blake3/guts"
)

func TestSum256(t *testing.T) {
	t.Parallel()
	if !Available() {
		t.Skip("no AVX-512")
	}
	r := rand.NewChaCha8([32]byte{1})
	for n := GroupSize; n <= MaxSize; n *= 2 {
		b := make([]byte, n)
		r.Read(b)
		got, ok := Sum256(b)
		if !ok {
			t.Fatalf("%d bytes: not hashed", n)
		}
		if want := blake3.Sum256(b); got != want {
			t.Errorf("%d bytes: %x, want %x", n, got, want)
		}
	}
}

// TestChunkCounters checks the chunk kernel's 64-bit counters where the
// low word wraps inside a group (inputs of 4 TiB), against guts'
// one-chunk compression, lane by lane.
func TestChunkCounters(t *testing.T) {
	t.Parallel()
	if !Available() {
		t.Skip("no AVX-512")
	}
	var in [GroupSize]byte
	rand.NewChaCha8([32]byte{3}).Read(in[:])
	for _, counter := range []uint64{0, 1<<32 - 5, 1<<32 - 16, 1<<32 - 1, 7<<32 + 1<<32 - 3} {
		var out [8][16]uint32
		compressChunks16(&out, &in, counter)
		for i := 0; i < 16; i++ {
			want := guts.ChainingValue(guts.CompressChunk(in[i<<10:(i+1)<<10], &guts.IV, counter+uint64(i), 0))
			for w := 0; w < 8; w++ {
				if out[w][i] != want[w] {
					t.Fatalf("counter %#x, chunk %d: word %d is %#x, want %#x", counter, i, w, out[w][i], want[w])
				}
			}
		}
	}
}

// TestNotHashed: lengths the kernels do not take are refused.
func TestNotHashed(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1024, 8 << 10, 16<<10 - 1, 16<<10 + 512, 48 << 10, 3 << 20, 2 * MaxSize} {
		if _, ok := Sum256(make([]byte, n)); ok {
			t.Errorf("%d bytes: hashed", n)
		}
	}
}

func BenchmarkSum256(b *testing.B) {
	for _, n := range []int{16 << 10, 128 << 10, 1 << 20} {
		buf := make([]byte, n)
		rand.NewChaCha8([32]byte{2}).Read(buf)
		b.Run(fmtSize(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Sum256(buf)
			}
		})
	}
}

func fmtSize(n int) string {
	if n >= 1<<20 {
		return itoa(n>>20) + "M"
	}
	return itoa(n>>10) + "K"
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
