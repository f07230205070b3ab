package zio

import (
	"fmt"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
)

// BenchmarkWriteBlocks times the compression step as a scan runs it
// (Writer.Write: the compressed length, the capacity, zstd's early abort)
// for gzip and zstd at the levels admins pick, over 128 KiB blocks of
// realistic data (internal/compresstest: MB/s of wall and CPU time, out/in
// of PSIZE); scripts/bench-gzip-zstd.sh sets it beside the C gzip and zstd
// on the same blocks. zstd-3-r2.1 is zstd-3 of a release before early abort
// (2.1): every block compressed at level 3.
func BenchmarkWriteBlocks(b *testing.B) {
	type lv struct {
		c       Compression
		level   int
		release string
	}
	var levels []lv
	for _, l := range []int{1, 6, 9} {
		levels = append(levels, lv{Gzip1 + Compression(l-1), 0, ""})
	}
	for _, l := range []int{1, 3, 9, 19} {
		levels = append(levels, lv{Zstd, l, ""})
	}
	levels = append(levels, lv{Zstd, 3, "2.1"})
	pool, err := NewPool([]string{"disk"}, 12)
	if err != nil {
		b.Fatal(err)
	}
	compresstest.BenchBlocks(b, func() []compresstest.BlockCase {
		var cases []compresstest.BlockCase
		for _, l := range levels {
			rel := DefaultRelease
			name := l.c.String()
			if l.c == Zstd {
				name = fmt.Sprintf("zstd-%d", l.level)
			}
			if l.release != "" {
				if rel, err = LookupRelease(l.release); err != nil {
					b.Fatal(err)
				}
				name += "-r" + l.release
			}
			p := &Policy{Release: rel, RecordSize: compresstest.BlockSize, Compression: l.c, Level: l.level, Copies: 1, Vdev: pool}
			if err := p.Validate(); err != nil {
				b.Fatal(err)
			}
			w := NewWriter(p)
			cases = append(cases, compresstest.BlockCase{Name: name, Size: func(blk []byte) int {
				if len(blk) < compresstest.BlockSize { // the last block: zero-padded, as a record
					blk = append(blk[:len(blk):len(blk)], make([]byte, compresstest.BlockSize-len(blk))...)
				}
				blk2 := w.Write(blk)
				return int(blk2.PSize)
			}})
		}
		return cases
	})
}
