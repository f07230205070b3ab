package zle

import (
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
)

// BenchmarkBlocks times Compress and Size over 128 KiB blocks of realistic
// data with ZFS's capacity (internal/compresstest: MB/s of wall and CPU time,
// out/in).
func BenchmarkBlocks(b *testing.B) {
	compresstest.BenchBlocks(b, func() []compresstest.BlockCase {
		return cases()
	})
}

// cases sizes blocks with fresh state: Compress, and Size.
func cases() []compresstest.BlockCase {
	dst := make([]byte, compresstest.BlockSize)
	return []compresstest.BlockCase{
		{Name: "Compress", Size: func(blk []byte) int {
			n, err := Compress(dst[:compresstest.Capacity(len(blk))], blk)
			if err != nil {
				return len(blk)
			}
			return n
		}},
		{Name: "Size", Size: func(blk []byte) int {
			n, ok := Size(blk, compresstest.Capacity(len(blk)))
			if !ok {
				return len(blk)
			}
			return n
		}},
	}
}
