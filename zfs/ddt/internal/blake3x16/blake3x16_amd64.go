//go:build amd64 && !purego

package blake3x16

import "golang.org/x/sys/cpu"

//go:generate go run gen.go -out blake3x16_amd64.s

// compressChunks16 compresses the 16 chunks of 1 KiB in in, numbered
// counter to counter+15, and stores their chaining values word-major:
// out[w][i] is word w of chunk i's. The chunks are BLAKE3's hash mode
// (key: the IV; flags: none but CHUNK_START and CHUNK_END), none the root.
//
//go:noescape
func compressChunks16(out *[8][16]uint32, in *[GroupSize]byte, counter uint64)

// compressParents16 compresses the 16 parent nodes of the 32 chaining
// values a (the first 16) and b (the rest), word-major as compressChunks16
// stores them, with flags (flagParent, and flagRoot for the root), and
// stores their chaining values word-major in out. out may be a or b: all
// of a and b is read first.
//
//go:noescape
func compressParents16(out, a, b *[8][16]uint32, flags uint32)

// available: the kernels need AVX-512 F (with the OS saving ZMM state).
var available = cpu.X86.HasAVX512F
