package space

import "github.com/ddtsim/ddtsim/zfs/zio"

// Indirect block geometry of ZPL files and zvols: dnode_allocate() takes
// the default indirect block shift, DN_MAX_INDBLKSHIFT (17): 128 KiB
// blocks of 128-byte block pointers (SPA_BLKPTRSHIFT 7).
const (
	IndirectSize = 128 << 10
	BPsPerBlock  = IndirectSize / 128
)

// The expected lz4 output of an indirect block, bytes, per block pointer
// it holds. A block pointer is 128 bytes: DVAs (offsets increasing as the
// blocks were allocated), the properties word, birth, fill and the 32-byte
// checksum. Most of it is new to the compressor; a block pointer whose
// block has the same contents as one before it in the same indirect block
// (same checksum, sizes and birth: only the DVA differs) costs a few
// literals and a match; an embedded one carries up to 112 bytes of
// compressed data; a hole in the middle costs little, the zeros after the
// last block pointer a byte per 255. Fitted to the 1,059 L1 blocks of the
// golden pools (zdb -ddddd, OpenZFS 2.3.2 and 2.1.11; fill 2 to 1024,
// fletcher4 and sha256 checksums): every L1's PSIZE is predicted to
// within one sector but for 3 of them (see TestIndirectGolden).
const (
	bpHeader   = 16  // lz4 header and the last literals
	bpUnique   = 85  // ×½ byte: a block pointer to contents new in the block
	bpRepeat   = 18  // ×½ byte: to contents met earlier in the same block
	bpEmbedded = 240 // ×½ byte: an embedded block pointer
	bpHole     = 1   // ×½ byte: a hole, or the zeros past the last one
)

// L1 counts the block pointers of one indirect block: N are not holes, of
// which Repeat point to contents met earlier in the same block and
// Embedded are embedded.
type L1 struct {
	N, Repeat, Embedded uint32
}

// IndirectBlock returns the block (one copy) an indirect block with the
// block pointers c takes under the metadata policy md (Metadata): its
// expected compressed size, rounded as md rounds it. c.N must be 1 to
// BPsPerBlock.
func IndirectBlock(md *zio.Policy, c L1) Blocks {
	unique := uint64(c.N - c.Repeat - c.Embedded)
	half := unique*bpUnique + uint64(c.Repeat)*bpRepeat + uint64(c.Embedded)*bpEmbedded +
		uint64(BPsPerBlock-c.N)*bpHole
	return block(md, IndirectSize, bpHeader+(half+1)/2)
}

// Run is a range of indirect blocks of one level, [First, End) by index
// (an index i covers the blocks below it from i×1024), each holding the
// same block pointers C: the interior of a long run of zero blocks, which
// a map of one entry per indirect block would hold at a cost without
// bound (an 8 EiB file of zeros has 2^36 level-1 blocks).
type Run struct {
	First, End uint64
	C          L1
}

// File returns the indirect blocks (one copy) of a file or volume whose
// level-0 block pointers up to the last one written, blocks of them, are
// described by groups and runs: groups[i] counts those of blocks [i×1024,
// (i+1)×1024), and each run the same of every level-1 block in its range
// (none of either: all holes). A run's range holds no key of groups, and
// runs do not overlap. A single block needs none (its pointer is in the
// dnode); above that, levels are added until one block covers them all
// (dnode.c: dnode_increase_indirection()), and an indirect block exists
// only where some block below it does. Its time and memory grow with
// len(groups) and len(runs), not with the blocks a run covers.
func File(md *zio.Policy, blocks uint64, groups map[uint64]L1, runs []Run) Blocks {
	var b Blocks
	if blocks <= 1 {
		return b
	}
	level, span := groups, uint64(BPsPerBlock)
	for {
		above := map[uint64]L1{}
		var next []Run
		for i, g := range level {
			if g.N > 0 {
				b.Add(IndirectBlock(md, g))
				x := above[i/BPsPerBlock]
				x.N++
				above[i/BPsPerBlock] = x
			}
		}
		for _, r := range runs {
			if r.End <= r.First || r.C.N == 0 {
				continue
			}
			n := r.End - r.First
			one := IndirectBlock(md, r.C)
			b.Add(Blocks{Count: one.Count * n, Embedded: one.Embedded * n, LSize: one.LSize * n,
				PSize: one.PSize * n, ASize: one.ASize * n})
			// the parents: partial ones at either end, a run of full
			// ones between
			pa, pb := r.First/BPsPerBlock, (r.End-1)/BPsPerBlock
			if pa == pb {
				x := above[pa]
				x.N += uint32(n)
				above[pa] = x
				continue
			}
			lo, hi := pa, pb+1
			if r.First%BPsPerBlock != 0 {
				x := above[pa]
				x.N += uint32((pa+1)*BPsPerBlock - r.First)
				above[pa] = x
				lo = pa + 1
			}
			if r.End%BPsPerBlock != 0 {
				x := above[pb]
				x.N += uint32(r.End - pb*BPsPerBlock)
				above[pb] = x
				hi = pb
			}
			if lo < hi {
				next = append(next, Run{First: lo, End: hi, C: L1{N: BPsPerBlock}})
			}
		}
		// levels 2 and up, while a level covers more than one block
		if span >= blocks {
			return b
		}
		span *= BPsPerBlock
		level, runs = above, next
	}
}
