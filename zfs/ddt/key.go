package ddt

import (
	"encoding/binary"
	"sync"

	"github.com/ddtsim/ddtsim/zfs/ddt/internal/blake3x16"
	zblake3 "github.com/zeebo/blake3"
	"lukechampine.com/blake3"
	"lukechampine.com/blake3/guts"
)

// KeyOf is the table key of a block: the BLAKE3-256 digest of its LSIZE
// bytes (zero-padded), as ddtsim models a dedup=on dataset's checksum.
//
// It hashes in the calling goroutine. Blocks of a power of two from 16 KiB
// (records of recordsize or volblocksize 16K and up) go to blake3x16's
// AVX-512 kernels where the CPU has them (1.7x the speed of guts' at 128K:
// no gathers); other lengths, and CPUs without AVX-512, to the kernels of
// lukechampine.com/blake3/guts (AVX-512 or AVX2), 16 chunks of 1 KiB a
// call: blake3.Sum256 would start a goroutine per power-of-two run of
// chunks of every input (about ten for a 128K block), which costs more
// CPU than the hashing (scripts/bench-hash.sh).
func KeyOf(block []byte) Key {
	if sum, ok := blake3x16.Sum256(block); ok {
		return Key(sum)
	}
	switch n := len(block); {
	case n <= guts.ChunkSize:
		return Key(blake3.Sum256(block)) // one chunk: hashed in place
	case n > 2<<10 && n <= 8<<10:
		// 3 to 8 chunks: zeebo/blake3's 4-way SSE kernel fills its lanes
		// where the 16-lane kernel would run mostly empty (4K records:
		// 0.77 CPU ns/byte against 0.85, BenchmarkBLAKE3).
		return Key(zblake3.Sum256(block))
	}
	return keyOfChunks(block)
}

// groupSize is what one guts.CompressBuffer call hashes: 16 KiB, the
// complete subtree of height 4 of the BLAKE3 tree when it is followed by
// further input.
const groupSize = guts.MaxSIMD * guts.ChunkSize

// groupHeight is the height of a group's subtree: 16 chunks.
const groupHeight = 4

// tails holds *[groupSize]byte buffers for a last group shorter than 16 KiB,
// which guts.CompressBuffer takes as a whole array.
var tails = sync.Pool{New: func() any { return new([groupSize]byte) }}

// keyOfChunks is KeyOf of more than one chunk. The tree is built as
// blake3.Hasher builds it: each full group but the last is a finished
// subtree, pushed on a stack of subtree chaining values, at most one per
// height, merged into its parent when a sibling of its height follows; the
// last group, 1 to 16 chunks, is then merged with the stack, from the lowest
// height up, into the root.
func keyOfChunks(b []byte) Key {
	var stack [64 - groupHeight][8]uint32 // stack[i]: a subtree of height i+groupHeight
	var groups uint64                     // groups pushed; bit i set: stack[i] holds one
	for len(b) > groupSize {
		cv := guts.ChainingValue(guts.CompressBuffer((*[groupSize]byte)(b), groupSize, &guts.IV, groups<<groupHeight, 0))
		i := 0
		for ; groups&(1<<i) != 0; i++ {
			cv = guts.ChainingValue(guts.ParentNode(stack[i], cv, &guts.IV, 0))
		}
		stack[i] = cv
		groups++
		b = b[groupSize:]
	}
	var n guts.Node
	if len(b) == groupSize {
		n = guts.CompressBuffer((*[groupSize]byte)(b), groupSize, &guts.IV, groups<<groupHeight, 0)
	} else {
		// CompressBuffer hashes only the first len(b) bytes of the
		// array: the rest need not be cleared.
		tail := tails.Get().(*[groupSize]byte)
		copy(tail[:], b)
		n = guts.CompressBuffer(tail, len(b), &guts.IV, groups<<groupHeight, 0)
		tails.Put(tail)
	}
	for i := range stack {
		if groups&(1<<i) != 0 {
			n = guts.ParentNode(stack[i], guts.ChainingValue(n), &guts.IV, 0)
		}
	}
	n.Flags |= guts.FlagRoot
	out := guts.WordsToBytes(guts.CompressNode(n))
	return Key(out[:32])
}

// ZeroKeys remembers the key of the all-zero block of each LSIZE, so that
// zero records are not hashed one by one. Safe for concurrent use.
type ZeroKeys struct {
	mu sync.Mutex
	m  map[uint32]Key
}

// NewZeroKeys returns an empty ZeroKeys.
func NewZeroKeys() *ZeroKeys { return &ZeroKeys{m: make(map[uint32]Key)} }

// Get returns KeyOf lsize zero bytes.
func (z *ZeroKeys) Get(lsize uint32) Key {
	z.mu.Lock()
	defer z.mu.Unlock()
	k, ok := z.m[lsize]
	if !ok {
		k = KeyOf(make([]byte, lsize))
		z.m[lsize] = k
	}
	return k
}

// GroupKey is k with its bytes 8 to 15 replaced by group, big-endian:
// the key of a content read in one group of a group plan's sample
// (estimate.Plan.Groups). The table keeps 128 bits of a key: the first 64
// are then the content's, the last 64 the group's, and the records of one
// content in one group are one entry.
func GroupKey(k Key, group uint64) Key {
	for i := range 8 {
		k[8+i] = byte(group >> (56 - 8*i))
	}
	return k
}

// HoleGroupKey is the key under which a group plan's sample counts the
// records of group that it read and found all zeros, which ZFS leaves
// holes (no block, no entry of zdb -S): their group's records are then
// all in the table, whose entries give each group's sums. Its first 64
// bits are a hash of the group (HoleGroup tells them from a content's,
// which could be equal with probability 2^-64).
func HoleGroupKey(group uint64) Key {
	var k Key
	binary.BigEndian.PutUint64(k[:8], holeTag(group))
	return GroupKey(k, group)
}

// HoleGroup reports whether a key of a group plan's table whose first and
// second 64 bits are content and group is a HoleGroupKey.
func HoleGroup(content, group uint64) bool { return content == holeTag(group) }

func holeTag(group uint64) uint64 { return mix(group, 0x686f6c6573) } // "holes"
