//go:build !amd64 || purego

package blake3x16

func compressChunks16(out *[8][16]uint32, in *[GroupSize]byte, counter uint64) {
	panic("blake3x16: no kernel")
}

func compressParents16(out, a, b *[8][16]uint32, flags uint32) { panic("blake3x16: no kernel") }

const available = false
