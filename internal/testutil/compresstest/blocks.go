package compresstest

// The benchmark harness of the block compressors (compress/lz4, lzjb,
// zle): their output length over independent 128 KiB blocks of realistic
// data, in MB/s of wall time and of CPU time (scripts/bench-lz4.sh
// compares compress/lz4's with C lz4 -1 on the same blocks).

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/benchdata"
)

// BlockSize is the block size of the benchmarks: 128 KiB, the ZFS default
// recordsize (and the -B of scripts/bench-lz4.sh).
const BlockSize = 128 << 10

// BlockFilesEnv names files to benchmark instead of a generated data set: a
// colon-separated list, each file one input named after its base name
// (scripts/bench-lz4.sh passes the files it gives C lz4).
const BlockFilesEnv = "DDTSIM_BENCH_FILES"

// blockSetSize is the size of the data set generated without BlockFilesEnv, bytes.
const blockSetSize = 24 << 20

// BlockSet is one input of the benchmarks.
type BlockSet struct {
	Name string
	Data []byte
}

// BlockSets returns the inputs: the files BlockFilesEnv names, or package benchdata's
// data set (generated once per process) as three inputs: images
// (VM-image-like records: random, text, zero), logs (text) and bin
// (binary-like), each its files concatenated in name order.
var BlockSets = sync.OnceValues(func() ([]BlockSet, error) {
	if env := os.Getenv(BlockFilesEnv); env != "" {
		var sets []BlockSet
		for _, p := range strings.Split(env, ":") {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			sets = append(sets, BlockSet{filepath.Base(p), b})
		}
		return sets, nil
	}
	dir, err := os.MkdirTemp("", "ddtsim-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := benchdata.Generate(dir, blockSetSize); err != nil {
		return nil, err
	}
	var sets []BlockSet
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
		sets = append(sets, BlockSet{sub, all})
	}
	return sets, nil
})

// Blocks cuts data into independent blocks of BlockSize (the last one may
// be shorter), as lz4 -B131072 does in its benchmark mode.
func Blocks(data []byte) [][]byte {
	var bs [][]byte
	for len(data) > 0 {
		n := min(len(data), BlockSize)
		bs = append(bs, data[:n])
		data = data[n:]
	}
	return bs
}

// BlockCase is one way of sizing a block: Size returns its output length in
// bytes (a block that does not fit counted as stored: its own length).
type BlockCase struct {
	Name string
	Size func(blk []byte) int
}

// BenchBlocks benchmarks each case that cases returns for an input (fresh
// compressor state per input) over the input's blocks, as sub-benchmarks
// INPUT/CASE. MB/s are of input bytes per second of wall time; cpu-MB/s of
// input bytes per second of the process's CPU time (run with GOMAXPROCS=1:
// on a busy machine that is the figure per core); out/in is the ratio of
// the outputs' total to the input.
func BenchBlocks(b *testing.B, cases func() []BlockCase) {
	sets, err := BlockSets()
	if err != nil {
		b.Fatal(err)
	}
	for _, set := range sets {
		bs := Blocks(set.Data)
		for _, tc := range cases() {
			b.Run(set.Name+"/"+tc.Name, func(b *testing.B) {
				b.SetBytes(int64(len(set.Data)))
				b.ReportAllocs()
				total, iters := 0, 0
				cpu0 := cpuSeconds()
				for b.Loop() {
					total = 0
					for _, blk := range bs {
						total += tc.Size(blk)
					}
					iters++
				}
				if cpu := cpuSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(float64(iters)*float64(len(set.Data))/cpu/1e6, "cpu-MB/s")
				}
				b.ReportMetric(float64(total)/float64(len(set.Data)), "out/in")
			})
		}
	}
}
