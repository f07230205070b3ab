package compresstest

import (
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// RecordSize is the block size of the benchmarks: 128 KiB, the ZFS default
// recordsize.
const RecordSize = 128 << 10

// BenchInput is one named benchmark input.
type BenchInput struct {
	Name string
	Data []byte // nil: not available, the benchmark is skipped
}

// BenchInputs returns the benchmark inputs of lz4, lzjb and zle: "text",
// "random" and "zero" records drawn from rand.NewPCG(10, 11), then what
// extra (if not nil) draws from the same source, then "binary", a record
// from the middle of the gofmt executable (nil when there is none of at
// least 4 records).
func BenchInputs(extra func(r *rand.Rand) []BenchInput) []BenchInput {
	r := rand.New(rand.NewPCG(10, 11))
	inputs := []BenchInput{
		{"text", Text(r, RecordSize)},
		{"random", Random(r, RecordSize)},
		{"zero", make([]byte, RecordSize)},
	}
	if extra != nil {
		inputs = append(inputs, extra(r)...)
	}
	var bin []byte
	for _, p := range []string{runtime.GOROOT() + "/bin/gofmt", "/usr/local/go/bin/gofmt"} {
		if d, err := os.ReadFile(p); err == nil && len(d) >= 4*RecordSize {
			bin = d[len(d)/2 : len(d)/2+RecordSize]
			break
		}
	}
	return append(inputs, BenchInput{"binary", bin})
}

// BenchCompress runs a sub-benchmark per input, named after it: it
// compresses the input with ZFS's capacity D = Capacity(L) using a
// compressor from newCompress, and reports c (metric "c") besides bytes/s
// and allocations.
func BenchCompress(b *testing.B, inputs []BenchInput, newCompress func() CompressFunc) {
	for _, in := range inputs {
		b.Run(in.Name, func(b *testing.B) {
			if in.Data == nil {
				b.Skip("gofmt binary not found")
			}
			compress := newCompress()
			dst := make([]byte, Capacity(len(in.Data)))
			b.SetBytes(int64(len(in.Data)))
			b.ReportAllocs()
			res := 0
			for b.Loop() {
				n, _ := compress(dst, in.Data)
				res = n
			}
			b.ReportMetric(float64(res), "c")
		})
	}
}
