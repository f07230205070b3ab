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

// File returns the indirect blocks (one copy) of a file or volume whose
// level-0 block pointers up to the last one written, blocks of them, are
// described by groups: groups[i] counts those of blocks [i×1024,
// (i+1)×1024) (none: all holes). A single block needs none (its pointer is in the dnode);
// above that, levels are added until one block covers them all
// (dnode.c: dnode_increase_indirection()), and an indirect block exists
// only where some block below it does.
func File(md *zio.Policy, blocks uint64, groups map[uint64]L1) Blocks {
	var b Blocks
	if blocks <= 1 {
		return b
	}
	// level 1, and the next level's counts
	above := map[uint64]L1{}
	span := uint64(BPsPerBlock)
	for i, g := range groups {
		if g.N > 0 {
			b.Add(IndirectBlock(md, g))
			x := above[i/BPsPerBlock]
			x.N++
			above[i/BPsPerBlock] = x
		}
	}
	// levels 2 and up, while a level covers more than one block
	for span < blocks {
		span *= BPsPerBlock
		next := map[uint64]L1{}
		for i, g := range above {
			b.Add(IndirectBlock(md, g))
			x := next[i/BPsPerBlock]
			x.N++
			next[i/BPsPerBlock] = x
		}
		above = next
	}
	return b
}
