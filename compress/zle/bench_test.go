package zle

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/benchdata"
)

// benchBlockSize is the block size of the data-set benchmarks: 128 KiB, the
// ZFS default recordsize.
const benchBlockSize = 128 << 10

// benchFilesEnv names files to benchmark instead of a generated data set: a
// colon-separated list, each file one input named after its base name
// (as scripts/bench-lz4.sh does for compress/lz4).
const benchFilesEnv = "DDTSIM_BENCH_FILES"

// benchSetSize is the size of the data set the benchmarks generate without
// benchFilesEnv, bytes.
const benchSetSize = 24 << 20

type benchSet struct {
	name string
	data []byte
}

var benchSets = sync.OnceValues(func() ([]benchSet, error) {
	if env := os.Getenv(benchFilesEnv); env != "" {
		var sets []benchSet
		for _, p := range strings.Split(env, ":") {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			sets = append(sets, benchSet{filepath.Base(p), b})
		}
		return sets, nil
	}
	dir, err := os.MkdirTemp("", "ddtsim-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := benchdata.Generate(dir, benchSetSize); err != nil {
		return nil, err
	}
	var sets []benchSet
	// images: VM-image-like records (random, text, zero); logs: text;
	// bin: binary-like. Each is its files concatenated in name order.
	for _, sub := range []string{"images", "logs", "bin"} {
		names, err := filepath.Glob(filepath.Join(dir, sub, "*"))
		if err != nil {
			return nil, err
		}
		slices.Sort(names)
		var all []byte
		for _, p := range names {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			all = append(all, b...)
		}
		sets = append(sets, benchSet{sub, all})
	}
	return sets, nil
})

// blocks cuts data into independent blocks of benchBlockSize (the last one
// may be shorter), as lz4 -B131072 does in its benchmark mode.
func blocks(data []byte) [][]byte {
	var bs [][]byte
	for len(data) > 0 {
		n := min(len(data), benchBlockSize)
		bs = append(bs, data[:n])
		data = data[n:]
	}
	return bs
}

// zfsLimit is the capacity ZFS gives a block of l bytes
// (MaxCompressedSize without the ashift rounding, which does not change it
// for 128 KiB blocks): l − l/8.
func zfsLimit(l int) int { return l - l/8 }

// BenchmarkBlocks times Compress and Size over 128 KiB blocks of realistic
// data (package benchdata, or the files named by DDTSIM_BENCH_FILES) with
// ZFS's capacity. MB/s are of input bytes per second of wall time; cpu-MB/s
// of input bytes per second of the process's CPU time (run with
// GOMAXPROCS=1: on a busy machine that is the figure per core); out/in is
// the ratio of the outputs' total (a block that does not fit counted as
// stored) to the input.
func BenchmarkBlocks(b *testing.B) {
	sets, err := benchSets()
	if err != nil {
		b.Fatal(err)
	}
	for _, set := range sets {
		bs := blocks(set.data)
		dst := make([]byte, benchBlockSize)
		for _, tc := range []struct {
			name string
			size func(blk []byte) int
		}{
			{"Compress", func(blk []byte) int {
				n, err := Compress(dst[:zfsLimit(len(blk))], blk)
				if err != nil {
					return len(blk)
				}
				return n
			}},
			{"Size", func(blk []byte) int {
				n, ok := Size(blk, zfsLimit(len(blk)))
				if !ok {
					return len(blk)
				}
				return n
			}},
		} {
			b.Run(set.name+"/"+tc.name, func(b *testing.B) {
				b.SetBytes(int64(len(set.data)))
				b.ReportAllocs()
				total, iters := 0, 0
				cpu0 := cpuSeconds()
				for b.Loop() {
					total = 0
					for _, blk := range bs {
						total += tc.size(blk)
					}
					iters++
				}
				if cpu := cpuSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(float64(iters)*float64(len(set.data))/cpu/1e6, "cpu-MB/s")
				}
				b.ReportMetric(float64(total)/float64(len(set.data)), "out/in")
			})
		}
	}
}
