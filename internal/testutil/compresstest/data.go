// Package compresstest holds what the tests of the compressors under
// compress/ share: the input generators of docs/zfs-semantics.md Appendix A
// and of the round trips, the Appendix A vectors, checkers for round trips
// and output bounds given a compress and a decompress function (Codec, and
// Leveled for compressors with levels), the benchmark inputs and loops, and
// the golden PSIZE harness that compares per-block PSIZE with what real ZFS
// wrote (Golden, over testdata/golden).
//
// The generators draw from a *rand.Rand in a fixed order: a test that asks
// for the same generators, sizes and seeds gets the same bytes.
//
// The package is meant for tests only.
package compresstest

import (
	"bytes"
	"math/rand/v2"
	"slices"
)

// Capacity is D = L − floor(L/8), the capacity ZFS gives the compressor for
// a block of l bytes (docs/zfs-semantics.md §4.3, bands P2–P5; the capacity
// of the Appendix A vectors).
func Capacity(l int) int { return l - l/8 }

// LCG returns Appendix A's lcg(n): x0 = 1,
// x_{k+1} = (1103515245·x_k + 12345) mod 2^31, byte_k = (x_{k+1} >> 16) mod 256.
func LCG(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for k := range b {
		x = (1103515245*x + 12345) & (1<<31 - 1)
		b[k] = byte(x >> 16)
	}
	return b
}

// Fox returns Appendix A's 45-byte sentence repeated and truncated to n
// bytes.
func Fox(n int) []byte {
	const s = "The quick brown fox jumps over the lazy dog. "
	b := make([]byte, n)
	for i := range b {
		b[i] = s[i%len(s)]
	}
	return b
}

// Vector is one Appendix A test vector with one compressor's figures.
type Vector struct {
	Name      string // "TV1" … "TV8"
	Want      int    // c with capacity D = Capacity(L), or -1 for FAIL
	Unlimited int    // c with ample capacity (0: same as Want; -1: not given)
}

// AppendixAInput returns the input of the Appendix A vector name ("TV1" …
// "TV8"), or nil for another name.
func AppendixAInput(name string) []byte {
	switch name {
	case "TV1": // 100 × 'A', zero-padded to 512 bytes
		b := make([]byte, 512)
		copy(b, bytes.Repeat([]byte{'A'}, 100))
		return b
	case "TV2": // the byte ramp 0, 1, …, 255, 0, … over 128 KiB
		b := make([]byte, 131072)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	case "TV3":
		return Fox(65536)
	case "TV4": // lcg(3000) zero-padded to 4 KiB
		b := make([]byte, 4096)
		copy(b, LCG(3000))
		return b
	case "TV5":
		return LCG(131072)
	case "TV6": // lcg(131072), low nibbles
		b := LCG(131072)
		for i := range b {
			b[i] &= 0x0F
		}
		return b
	case "TV7": // lcg(65536) zero-padded to 128 KiB
		b := make([]byte, 131072)
		copy(b, LCG(65536))
		return b
	case "TV8": // lcg(4500), low 6 bits, zero-padded to 5 KiB
		b := make([]byte, 5120)
		l := LCG(4500)
		for i := range l {
			b[i] = l[i] & 0x3F
		}
		return b
	}
	return nil
}

// Words is the vocabulary of Text: common English words, ZFS terms and
// fragments of logs, JSON and code.
var Words = []string{"the", "of", "and", "to", "in", "a", "is", "that", "for",
	"it", "as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
	"or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
	"pool", "dataset", "snapshot", "compression", "dedup", "block", "record",
	"checksum", "vdev", "allocation", "\n", "ZFS", "2024-01-15", "error:",
	"{\"id\":", "}", "function", "return", "0x7f3a", "/usr/lib/x86_64"}

// ShortWords is the vocabulary of ShortText: Words without its third ten
// ("or" … "they").
var ShortWords = slices.Concat(Words[:20], Words[30:])

// TextFrom returns n bytes of words drawn from vocab, each followed by a
// space and one in nine also preceded by a comma.
func TextFrom(vocab []string, r *rand.Rand, n int) []byte {
	b := make([]byte, 0, n+32)
	for len(b) < n {
		b = append(b, vocab[r.IntN(len(vocab))]...)
		if r.IntN(9) == 0 {
			b = append(b, ',')
		}
		b = append(b, ' ')
	}
	return b[:n]
}

// Text returns n bytes of text over Words.
func Text(r *rand.Rand, n int) []byte { return TextFrom(Words, r, n) }

// ShortText returns n bytes of text over ShortWords (the text of the gzip
// and zstd tests).
func ShortText(r *rand.Rand, n int) []byte { return TextFrom(ShortWords, r, n) }

// Random returns n random bytes.
func Random(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Zero returns n zero bytes (it draws nothing from r).
func Zero(_ *rand.Rand, n int) []byte { return make([]byte, n) }

// Binary imitates program code: small integers, opcodes and repeats.
func Binary(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; {
		switch r.IntN(4) {
		case 0: // little-endian small integers
			for k := 0; k < 16 && i < n; k++ {
				b[i] = byte(r.IntN(64))
				i++
			}
		case 1: // repeat of earlier bytes
			if i > 64 {
				src := i - 1 - r.IntN(min(i-1, 4096))
				for k := 0; k < 4+r.IntN(28) && i < n; k++ {
					b[i] = b[src+k]
					i++
				}
			}
		case 2: // zero padding
			i += min(n-i, r.IntN(12))
		default: // random bytes
			for k := 0; k < 1+r.IntN(8) && i < n; k++ {
				b[i] = byte(r.Uint32())
				i++
			}
		}
	}
	return b
}

// Repetitive repeats a random pattern of 1 to 300 bytes, with one byte in a
// thousand changed.
func Repetitive(r *rand.Rand, n int) []byte {
	period := 1 + r.IntN(300)
	pat := Random(r, period)
	b := make([]byte, n)
	for i := range b {
		b[i] = pat[i%period]
		if r.IntN(1000) == 0 {
			b[i] ^= byte(r.Uint32())
		}
	}
	return b
}

// LowEntropy returns random bytes masked to their low 1 to 4 bits.
func LowEntropy(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	mask := byte(1<<(1+r.IntN(4)) - 1)
	for i := range b {
		b[i] = byte(r.Uint32()) & mask
	}
	return b
}

// Mixed is pieces of up to 8 KiB of Random, Text, zeros and copies from
// further back (which exercise long distances).
func Mixed(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; {
		l := min(n-i, 1+r.IntN(8192))
		switch r.IntN(4) {
		case 0:
			copy(b[i:], Random(r, l))
		case 1:
			copy(b[i:], Text(r, l))
		case 2:
			// zeros
		case 3:
			if i > 0 {
				src := r.IntN(i)
				for k := 0; k < l; k++ {
					b[i+k] = b[src+k]
				}
			}
		}
		i += l
	}
	return b
}

// Generator is a named input generator.
type Generator struct {
	Name string
	Gen  func(r *rand.Rand, n int) []byte
}

// Generators are the inputs of the lz4, lzjb and zle round-trip tests, in
// the order they draw from the random source.
var Generators = []Generator{
	{"random", Random},
	{"text", Text},
	{"repetitive", Repetitive},
	{"zero", Zero},
	{"lowentropy", LowEntropy},
	{"mixed", Mixed},
}

// LevelGenerators are the inputs of the gzip and zstd tests (compressors
// with levels), in the order they draw from the random source; their
// benchmarks use the first three.
var LevelGenerators = []Generator{
	{"text", ShortText},
	{"binary", Binary},
	{"random", Random},
	{"zero", Zero},
}
