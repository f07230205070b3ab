// Package blake3x16 computes BLAKE3-256 digests of inputs whose length is
// a power of two of at least 16 KiB (ZFS records of 16K and up) with two
// AVX-512 kernels that compress 16 chunks, or 16 parent nodes, at once,
// one per 32-bit lane, and move message words into lanes without gathers.
// The tree is the one the BLAKE3 specification defines (section 2.1: a
// complete binary tree of 1 KiB chunks when their number is a power of
// two); the digests equal those of the reference implementation and of
// lukechampine.com/blake3 (tests). On CPUs without AVX-512, or built with
// the tag purego, Sum256 reports false and callers hash another way.
package blake3x16

import "encoding/binary"

// GroupSize is what one chunk-kernel call hashes: 16 chunks of 1 KiB.
const GroupSize = 16 << 10

// BLAKE3's domain flags (specification table 3) used by the kernels.
const (
	flagParent = 1 << 2
	flagRoot   = 1 << 3
)

// Available reports whether Sum256 can hash on this CPU.
func Available() bool { return available }

// MaxSize is the longest input Sum256 hashes: 32 MiB, twice ZFS's
// largest record (recordsize 16M).
const MaxSize = 32 << 20

// Sum256 returns the BLAKE3-256 digest of b and true when the kernels run
// on this CPU and len(b) is a power of two from GroupSize to MaxSize
// bytes; otherwise the zero digest and false.
func Sum256(b []byte) (sum [32]byte, ok bool) {
	n := len(b)
	if !available || n < GroupSize || n&(n-1) != 0 || n > MaxSize {
		return sum, false
	}
	// A stack of word-major sets of 16 chaining values, each the roots of
	// 16 complete subtrees of 16<<level[i] chunks; the sets of one level
	// merge as the bits of a binary counter do. MaxSize is 2^11 groups: at
	// most 12 sets (6 KiB, cleared at each call: the bound keeps that
	// small beside the hashing).
	var stack [12][8][16]uint32
	var level [12]int
	top := 0
	for g := 0; g < n/GroupSize; g++ {
		compressChunks16(&stack[top], (*[GroupSize]byte)(b[g*GroupSize:]), uint64(g)*16)
		l := 0
		for top > 0 && level[top-1] == l {
			compressParents16(&stack[top-1], &stack[top-1], &stack[top], flagParent)
			top--
			l++
		}
		level[top] = l
		top++
	}
	// One set of 16 chaining values is left (the groups are a power of
	// two); its 16 → 8 → 4 → 2 → 1 parents, the last the root.
	t := &stack[0]
	for k := 8; k > 1; k /= 2 {
		compressParents16(t, t, t, flagParent)
	}
	compressParents16(t, t, t, flagParent|flagRoot)
	for w := 0; w < 8; w++ {
		binary.LittleEndian.PutUint32(sum[4*w:], t[w][0])
	}
	return sum, true
}
