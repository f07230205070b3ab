package ddt

import (
	"fmt"
	"math/rand/v2"
	"testing"

	zblake3 "github.com/zeebo/blake3"
	lblake3 "lukechampine.com/blake3"
)

// BenchmarkBLAKE3 hashes one block of random bytes again and again (hot in
// cache, as a worker hashes the record it has just read) with KeyOf and
// with each BLAKE3 library, called once per block (Sum256) or through a
// Hasher reused with Reset, at 4K, 8K, 128K (the default recordsize) and 1M.
// Besides ns/op (wall time) it reports cpu-ns/B: the process's CPU time per
// byte, which counts the goroutines a library may start to hash one input
// (lukechampine.com/blake3 does). scripts/bench-hash.sh tabulates it.
func BenchmarkBLAKE3(b *testing.B) {
	sum := func(f func([]byte) [32]byte) func() func([]byte) [32]byte {
		return func() func([]byte) [32]byte { return f }
	}
	impls := []struct {
		name string
		mk   func() func([]byte) [32]byte // a hash function, one per sub-benchmark
	}{
		{"KeyOf", sum(func(p []byte) [32]byte { return KeyOf(p) })},
		{"zeebo-Sum256", sum(zblake3.Sum256)},
		{"zeebo-Reset", func() func([]byte) [32]byte {
			h := zblake3.New()
			return func(p []byte) (k [32]byte) {
				h.Reset()
				h.Write(p)
				h.Sum(k[:0])
				return k
			}
		}},
		{"luke-Sum256", sum(lblake3.Sum256)},
		{"luke-Reset", func() func([]byte) [32]byte {
			h := lblake3.New(32, nil)
			return func(p []byte) (k [32]byte) {
				h.Reset()
				h.Write(p)
				h.Sum(k[:0])
				return k
			}
		}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{512, 1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 128 << 10, 1 << 20} {
		block := make([]byte, size)
		for i := range block {
			block[i] = byte(r.Uint32())
		}
		for _, im := range impls {
			b.Run(fmt.Sprintf("%s/%dB", im.name, size), func(b *testing.B) {
				f := im.mk()
				b.SetBytes(int64(size))
				b.ReportAllocs()
				c0 := cpuNanos(b)
				for b.Loop() {
					f(block)
				}
				b.ReportMetric(float64(cpuNanos(b)-c0)/float64(b.N)/float64(size), "cpu-ns/B")
			})
		}
	}
}
