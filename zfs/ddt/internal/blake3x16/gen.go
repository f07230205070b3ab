//go:build ignore

// gen.go writes blake3x16_amd64.s: the two AVX-512 kernels of package
// blake3x16, each compressing 16 BLAKE3 inputs at once, one per 32-bit lane
// of the 16 ZMM registers that hold the state and the 16 that hold the
// message. Run by go generate.
//
// The message words are moved into lanes without gathers (slow on AMD's
// AVX-512): the chunk kernel loads one 64-byte block of each of the 16
// chunks and transposes the 16x16 words with unpacks and 128-bit lane
// shuffles; the parent kernel takes chaining values already word-major and
// pairs them with two-table permutes.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

var out strings.Builder

func emit(format string, args ...any) { fmt.Fprintf(&out, "\t"+format+"\n", args...) }

func z(r int) string { return fmt.Sprintf("Z%d", r) }

// BLAKE3's message permutation, applied between rounds.
var permutation = [16]int{2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}

// g is BLAKE3's quarter round on state registers a, b, c, d with message
// registers mx, my.
func g(v *[16]int, a, b, c, d, mx, my int) {
	emit("VPADDD %s, %s, %s", z(v[b]), z(v[a]), z(v[a]))
	emit("VPADDD %s, %s, %s", z(mx), z(v[a]), z(v[a]))
	emit("VPXORD %s, %s, %s", z(v[a]), z(v[d]), z(v[d]))
	emit("VPRORD $16, %s, %s", z(v[d]), z(v[d]))
	emit("VPADDD %s, %s, %s", z(v[d]), z(v[c]), z(v[c]))
	emit("VPXORD %s, %s, %s", z(v[c]), z(v[b]), z(v[b]))
	emit("VPRORD $12, %s, %s", z(v[b]), z(v[b]))
	emit("VPADDD %s, %s, %s", z(v[b]), z(v[a]), z(v[a]))
	emit("VPADDD %s, %s, %s", z(my), z(v[a]), z(v[a]))
	emit("VPXORD %s, %s, %s", z(v[a]), z(v[d]), z(v[d]))
	emit("VPRORD $8, %s, %s", z(v[d]), z(v[d]))
	emit("VPADDD %s, %s, %s", z(v[d]), z(v[c]), z(v[c]))
	emit("VPXORD %s, %s, %s", z(v[c]), z(v[b]), z(v[b]))
	emit("VPRORD $7, %s, %s", z(v[b]), z(v[b]))
}

// rounds emits BLAKE3's seven rounds on state registers v and message
// registers m (m[j]: word j of every lane), then v[i] ^= v[i+8] for i < 8:
// the chaining value output.
func rounds(v *[16]int, m [16]int) {
	for r := 0; r < 7; r++ {
		emit("// round %d", r+1)
		g(v, 0, 4, 8, 12, m[0], m[1])
		g(v, 1, 5, 9, 13, m[2], m[3])
		g(v, 2, 6, 10, 14, m[4], m[5])
		g(v, 3, 7, 11, 15, m[6], m[7])
		g(v, 0, 5, 10, 15, m[8], m[9])
		g(v, 1, 6, 11, 12, m[10], m[11])
		g(v, 2, 7, 8, 13, m[12], m[13])
		g(v, 3, 4, 9, 14, m[14], m[15])
		var next [16]int
		for i := range next {
			next[i] = m[permutation[i]]
		}
		m = next
	}
	for i := 0; i < 8; i++ {
		emit("VPXORD %s, %s, %s", z(v[i+8]), z(v[i]), z(v[i]))
	}
}

// regs is a free list of ZMM registers.
type regs []int

func (f *regs) get() int {
	r := (*f)[0]
	*f = (*f)[1:]
	return r
}

func (f *regs) put(r int) { *f = append(*f, r) }

// transpose emits the loads of one 64-byte block from each of 16 rows
// (row i at offset i*1024 from CX) and their transposition; it returns the
// register holding word j of every row, lane i from row i.
func transpose(free *regs) [16]int {
	// Stage 1: words interleaved per 128-bit lane of rows 2k and 2k+1.
	// t[4k/2..]: lo(r2k, r2k+1) then hi.
	var t [16]int
	for k := 0; k < 8; k++ {
		x := free.get()
		lo := free.get()
		emit("VMOVDQU32 %d(CX), %s", 2*k*1024, z(x))
		emit("VPUNPCKLDQ %d(CX), %s, %s", (2*k+1)*1024, z(x), z(lo))
		emit("VPUNPCKHDQ %d(CX), %s, %s", (2*k+1)*1024, z(x), z(x))
		t[2*k], t[2*k+1] = lo, x // rows 2k,2k+1: words 4l,4l+1 | 4l+2,4l+3
	}
	// Stage 2: quadwords of row pairs (0,1)+(2,3): u[4g+m] lane l holds
	// word 4l+m of rows 4g..4g+3.
	var u [16]int
	for grp := 0; grp < 4; grp++ {
		a0, a1 := t[4*grp], t[4*grp+1]   // rows 4g, 4g+1
		b0, b1 := t[4*grp+2], t[4*grp+3] // rows 4g+2, 4g+3
		r := free.get()
		emit("VPUNPCKLQDQ %s, %s, %s", z(b0), z(a0), z(r))
		emit("VPUNPCKHQDQ %s, %s, %s", z(b0), z(a0), z(a0))
		u[4*grp+0], u[4*grp+1] = r, a0
		free.put(b0)
		r = free.get()
		emit("VPUNPCKLQDQ %s, %s, %s", z(b1), z(a1), z(r))
		emit("VPUNPCKHQDQ %s, %s, %s", z(b1), z(a1), z(a1))
		u[4*grp+2], u[4*grp+3] = r, a1
		free.put(b1)
	}
	// Stages 3 and 4: the 4x4 transposition of 128-bit lanes, for each m.
	var msg [16]int
	for m := 0; m < 4; m++ {
		a, b, c, d := u[m], u[4+m], u[8+m], u[12+m]
		v0 := free.get()
		emit("VSHUFI32X4 $0x44, %s, %s, %s", z(b), z(a), z(v0)) // a.L0 a.L1 b.L0 b.L1
		emit("VSHUFI32X4 $0xee, %s, %s, %s", z(b), z(a), z(a))  // a.L2 a.L3 b.L2 b.L3
		free.put(b)
		v2 := free.get()
		emit("VSHUFI32X4 $0x44, %s, %s, %s", z(d), z(c), z(v2))
		emit("VSHUFI32X4 $0xee, %s, %s, %s", z(d), z(c), z(c))
		free.put(d)
		w0 := free.get()
		emit("VSHUFI32X4 $0x88, %s, %s, %s", z(v2), z(v0), z(w0)) // lane 0 of a, b, c, d
		emit("VSHUFI32X4 $0xdd, %s, %s, %s", z(v2), z(v0), z(v0)) // lane 1
		free.put(v2)
		w2 := free.get()
		emit("VSHUFI32X4 $0x88, %s, %s, %s", z(c), z(a), z(w2)) // lane 2
		emit("VSHUFI32X4 $0xdd, %s, %s, %s", z(c), z(a), z(a))  // lane 3
		free.put(c)
		msg[m], msg[4+m], msg[8+m], msg[12+m] = w0, v0, w2, a
	}
	return msg
}

func chunks() {
	out.WriteString(`
// func compressChunks16(out *[8][16]uint32, in *[16384]byte, counter uint64)
// Requires: AVX512F
TEXT ·compressChunks16(SB), NOSPLIT, $192-24
	MOVQ out+0(FP), AX
	MOVQ in+8(FP), CX

	// The 16 chunks' counters, low and high words, at 0(SP) and 64(SP).
	MOVQ         counter+16(FP), BX
	VPBROADCASTD BX, Z0
	VPADDD       seq<>(SB), Z0, Z0
	VPCMPUD      $1, seq<>(SB), Z0, K1
	SHRQ         $32, BX
	VPBROADCASTD BX, Z1
	VPADDD       ones<>(SB), Z1, K1, Z1
	VMOVDQU32    Z0, (SP)
	VMOVDQU32    Z1, 64(SP)

	// Each block's flags at 128(SP).
	VMOVDQU32 flags<>(SB), Z2
	VMOVDQU32 Z2, 128(SP)

	// The chaining values start as the IV.
`)
	var cv [8]int
	for i := range cv {
		cv[i] = i
		emit("VPBROADCASTD iv<>+%d(SB), %s", 4*(i%8), z(i))
	}
	out.WriteString("\n\tXORQ DX, DX\n\nloop:\n")
	free := regs{}
	for r := 8; r < 32; r++ {
		free = append(free, r)
	}
	msg := transpose(&free)
	if len(free) != 8 {
		panic(fmt.Sprint("free registers after transpose: ", free))
	}
	var v [16]int
	copy(v[:8], cv[:])
	for i := 8; i < 16; i++ {
		v[i] = free.get()
	}
	emit("ADDQ $64, CX")
	for i := 0; i < 4; i++ {
		emit("VPBROADCASTD iv<>+%d(SB), %s", 4*i, z(v[8+i]))
	}
	emit("VMOVDQU32 (SP), %s", z(v[12]))
	emit("VMOVDQU32 64(SP), %s", z(v[13]))
	emit("VPBROADCASTD blocklen<>(SB), %s", z(v[14]))
	emit("VPBROADCASTD 128(SP)(DX*4), %s", z(v[15]))
	rounds(&v, msg)
	out.WriteString(`
	INCQ DX
	CMPQ DX, $16
	JNE  loop

`)
	for i := 0; i < 8; i++ {
		emit("VMOVDQU32 %s, %d(AX)", z(v[i]), 64*i)
	}
	emit("VZEROUPPER")
	emit("RET")
}

func parents() {
	out.WriteString(`
// func compressParents16(out, a, b *[8][16]uint32, flags uint32)
// Requires: AVX512F
TEXT ·compressParents16(SB), NOSPLIT, $0-28
	MOVQ out+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	VMOVDQU32 even<>(SB), Z0
	VMOVDQU32 odd<>(SB), Z1
`)
	// Word j of parent p is word j of chaining value 2p (j < 8) or word
	// j-8 of chaining value 2p+1: lanes 2p and 2p+1 of a's (p < 8) or b's
	// row j.
	var msg [16]int
	for j := 0; j < 8; j++ {
		msg[j], msg[j+8] = 16+j, 24+j
		emit("VMOVDQU32 %d(CX), %s", 64*j, z(msg[j]))
		emit("VMOVDQA32 %s, %s", z(msg[j]), z(msg[j+8]))
		emit("VPERMT2D %d(DX), Z0, %s", 64*j, z(msg[j]))
		emit("VPERMT2D %d(DX), Z1, %s", 64*j, z(msg[j+8]))
	}
	var v [16]int
	for i := range v {
		v[i] = i
	}
	for i := 0; i < 8; i++ {
		emit("VPBROADCASTD iv<>+%d(SB), %s", 4*(i%8), z(v[i]))
	}
	for i := 0; i < 4; i++ {
		emit("VPBROADCASTD iv<>+%d(SB), %s", 4*i, z(v[8+i]))
	}
	emit("VPXORD %s, %s, %s", z(v[12]), z(v[12]), z(v[12]))
	emit("VPXORD %s, %s, %s", z(v[13]), z(v[13]), z(v[13]))
	emit("VPBROADCASTD blocklen<>(SB), %s", z(v[14]))
	emit("MOVL flags+24(FP), BX")
	emit("VPBROADCASTD BX, %s", z(v[15]))
	rounds(&v, msg)
	for i := 0; i < 8; i++ {
		emit("VMOVDQU32 %s, %d(AX)", z(v[i]), 64*i)
	}
	emit("VZEROUPPER")
	emit("RET")
}

func data(name string, words []uint32) {
	for i, w := range words {
		fmt.Fprintf(&out, "DATA %s<>+%d(SB)/4, $0x%08x\n", name, 4*i, w)
	}
	fmt.Fprintf(&out, "GLOBL %s<>(SB), RODATA|NOPTR, $%d\n\n", name, 4*len(words))
}

func main() {
	file := flag.String("out", "blake3x16_amd64.s", "the assembly file to write")
	flag.Parse()
	out.WriteString("// Code generated by go run gen.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\n#include \"textflag.h\"\n\n")
	// The first 8 words of BLAKE3's IV (those of SHA-256).
	data("iv", []uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19})
	var seq, ones, even, odd []uint32
	for i := uint32(0); i < 16; i++ {
		seq = append(seq, i)
		ones = append(ones, 1)
		even = append(even, 2*i)
		odd = append(odd, 2*i+1)
	}
	data("seq", seq)
	data("ones", ones)
	data("even", even)
	data("odd", odd)
	data("blocklen", []uint32{64})
	// Each block's flags in a chunk: CHUNK_START on the first, CHUNK_END on
	// the last.
	flags := make([]uint32, 16)
	flags[0] |= 1
	flags[15] |= 2
	data("flags", flags)
	chunks()
	parents()
	if err := os.WriteFile(*file, []byte(out.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
