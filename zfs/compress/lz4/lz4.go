// Package lz4 is a bit-exact Go implementation of the LZ4 compressor used by
// OpenZFS for compress=lz4 (module/zfs/lz4.c in releases up to 2.1.x,
// module/zfs/lz4_zfs.c from 2.2.0 on; the compressor is unchanged from
// zfs-0.6.1 to 2.4.x).
//
// The ZFS compressor is derived from "LZ4 r85" (December 2012). Its output is
// a valid LZ4 block, but it differs from what current liblz4 or other Go LZ4
// ports produce (different hash, search schedule and output-limit checks), so
// ddtsim needs this separate implementation to predict compressed sizes and
// bytes exactly. It was written from the ddtsim specification
// (docs/zfs-semantics.md §5.1), not translated from the C sources.
//
// Structure mirrored from the C code:
//
//   - lz4_compress_zfs: 4-byte big-endian payload-length header, then the
//     LZ4 payload produced with capacity D−4 (Compressor.Compress).
//   - real_LZ4_compress: chooses LZ4_compress64kCtx for inputs shorter than
//     65547 bytes, LZ4_compressCtx otherwise, after zeroing the hash table.
//   - LZ4_compress64kCtx: 13-bit hash of 16-bit positions, no match-distance
//     limit (compress64k).
//   - LZ4_compressCtx: 12-bit hash of 32-bit positions, matches at most
//     65535 bytes back (compressLarge).
//
// Compressor.Size runs the same compressor but only counts its output
// (sizeLarge, size64k): ZFS decides how to store a block from the compressed
// length alone. The four (compressLarge, compress64k, sizeLarge, size64k)
// are generated from one template: search.go, by gen.go from search.tmpl.
//
// Hashing reads 4 input bytes in little-endian order, i.e. the result equals
// ZFS on little-endian hosts (x86-64, arm64). Big-endian hosts produce
// different (equally valid) output; that case is not modelled.
package lz4

//go:generate go run gen.go -out search.go

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// ErrNoFit: the output did not fit in the capacity under ZFS's (conservative)
// output checks. It corresponds to real_LZ4_compress returning 0, upon which
// lz4_compress_zfs (module/zfs/lz4_zfs.c) reports the block as incompressible.
// The checks are the ones of LZ4 r85 and can fail even though the encoded
// block would actually have fitted; ErrNoFit reproduces them exactly.
var ErrNoFit = errors.New("lz4: output does not fit")

// Constants of LZ4 r85 as used by module/zfs/lz4_zfs.c.
const (
	minMatch     = 4  // MINMATCH
	lastLiterals = 5  // LASTLITERALS
	mfLimit      = 12 // MFLIMIT = COPYLENGTH + MINMATCH
	minLength    = 13 // MINLENGTH = MFLIMIT + 1
	maxDistance  = 65535
	skipStrength = 6 // SKIPSTRENGTH
	runMask      = 15
	mlMask       = 15
	hashMul      = 2654435761

	// limit64k is LZ4_64KLIMIT = 65536 + (MFLIMIT − 1): inputs shorter than
	// this use LZ4_compress64kCtx.
	limit64k = 1<<16 + mfLimit - 1

	hashLogLarge = 12 // HASH_LOG (COMPRESSIONLEVEL 12)
	hashLog64k   = 13 // HASHLOG64K = HASH_LOG + 1

	headerSize = 4 // sizeof (bufsiz) in lz4_compress_zfs
)

// Compressor holds the hash tables of LZ4_compressCtx / LZ4_compress64kCtx
// (ZFS's struct refTables, zeroed by real_LZ4_compress on every call; here
// 32 KiB in total, of which each call clears the 16 KiB it uses). The zero
// value is ready to use. A Compressor is not safe for concurrent use; keep one
// per goroutine and reuse it: Compress performs no allocation.
type Compressor struct {
	// ZFS overlays both views on one 16 KiB buffer; keeping them separate
	// is equivalent because each call zeroes the table it uses.
	large [1 << hashLogLarge]uint32 // LZ4_compressCtx: HTYPE = U32 positions
	small [1 << hashLog64k]uint16   // LZ4_compress64kCtx: U16 positions
}

// Compress compresses src into dst, whose length is the capacity D in bytes
// (including the 4-byte big-endian header), exactly like lz4_compress_zfs
// (module/zfs/lz4_zfs.c) called with s_len = len(src) and d_len = len(dst).
// It returns c = 4 + payload length in bytes, or ErrNoFit. Output bytes
// dst[:c] are the exact bytes ZFS would store (the header holds the payload
// length P = c−4 as a big-endian uint32, followed by the LZ4 block). Bytes of
// dst beyond c, and all of dst after ErrNoFit, are unspecified.
//
// The LZ4 core (real_LZ4_compress) runs with capacity osize = D − 4; a dst
// shorter than 4 bytes yields ErrNoFit. len(src) must not exceed
// math.MaxInt32 (ZFS passes the size as a C int; blocks are at most 16 MiB).
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	if len(dst) < headerSize {
		return 0, ErrNoFit
	}
	if len(src) > math.MaxInt32 {
		panic("lz4: input larger than 2 GiB")
	}
	out := dst[headerSize:]
	var p int
	if len(src) < limit64k {
		p = c.compress64k(out, src)
	} else {
		p = c.compressLarge(out, src)
	}
	if p <= 0 {
		return 0, ErrNoFit
	}
	binary.BigEndian.PutUint32(dst, uint32(p))
	return headerSize + p, nil
}

// le32 and le64 return the 4 or 8 bytes at src[i:] as a little-endian
// number (A32, A64 on a little-endian host), for 0 ≤ i < 2^32. Passing i
// through uint32 tells the compiler that i + 8 cannot overflow, which saves
// one of the two bounds checks of each load.
func le32(src []byte, i int) uint32 {
	j := int(uint32(i))
	return binary.LittleEndian.Uint32(src[j : j+4 : j+4])
}

func le64(src []byte, i int) uint64 {
	j := int(uint32(i))
	return binary.LittleEndian.Uint64(src[j : j+8 : j+8])
}

// hashLarge is LZ4_HASH_VALUE of LZ4_compressCtx: 12-bit multiplicative hash.
func hashLarge(v uint32) uint32 {
	return (v * hashMul) >> (32 - hashLogLarge)
}

// hash64k is LZ4_HASH64K_VALUE of LZ4_compress64kCtx: 13-bit hash.
func hash64k(v uint32) uint32 {
	return (v * hashMul) >> (32 - hashLog64k)
}

// lenBytes is the number of extra length bytes (255-runs plus the final byte)
// LZ4 emits for a literal or match length l that does not fit the 4-bit
// token field (l ≥ 15), otherwise 0.
func lenBytes(l int) int {
	if l < 15 {
		return 0
	}
	return 1 + (l-15)/255
}

// putLen writes the extra length bytes for the value rem = l − 15 at out[op:]
// and returns the new op. The caller guarantees the room.
func putLen(out []byte, op, rem int) int {
	for rem >= 255 {
		out[op] = 255
		op++
		rem -= 255
	}
	out[op] = byte(rem)
	return op + 1
}

// matchLen returns the length of the common prefix of src[ref:] and src[ip:]
// (ref < ip), limited so that ip + result ≤ limit (the "Start Counting" loop of
// LZ4 r85 with matchlimit = n − LASTLITERALS).
func matchLen(src []byte, ref, ip, limit int) int {
	start := ip
	for ip+8 <= limit {
		a := binary.LittleEndian.Uint64(src[ip : ip+8 : ip+8])
		b := binary.LittleEndian.Uint64(src[ref : ref+8 : ref+8])
		if d := a ^ b; d != 0 {
			return ip - start + bits.TrailingZeros64(d)>>3
		}
		ip += 8
		ref += 8
	}
	for ip < limit && src[ip] == src[ref] {
		ip++
		ref++
	}
	return ip - start
}

// emitLiterals is the general "Encode Literal length" / "Copy Literals" step
// of both variants (the compress functions inline the common case of a short
// run that passes the check): it writes the token (literal part) for the literal run
// src[anchor:ip] at out[op] followed by the run, applying the LZ4 r85 output
// check. It returns the token position and the new op, or ok = false when the
// block does not fit (real_LZ4_compress returns 0).
func emitLiterals(out, src []byte, op, anchor, ip int) (token, nop int, ok bool) {
	osize := len(out)
	length := ip - anchor
	token = op
	op++
	// ZFS: op + length + (2 + 1 + LASTLITERALS) + (length >> 8) > oend.
	if op+length+(2+1+lastLiterals)+(length>>8) > osize {
		return 0, 0, false
	}
	// Not a ZFS check: for literal runs of hundreds of KiB the r85 check
	// above under-reserves the length bytes, and the C code writes past
	// oend; the match check that follows the offset then always fails. Failing
	// here instead (the run plus the 2-byte offset does not fit) gives the
	// same result without writing out of bounds.
	if op+lenBytes(length)+length+2 > osize {
		return 0, 0, false
	}
	if length >= runMask {
		out[token] = runMask << 4
		op = putLen(out, op, length-runMask)
	} else {
		out[token] = byte(length << 4)
	}
	copy(out[op:], src[anchor:ip])
	return token, op + length, true
}

// emitMatchLen is "Encode MatchLength" with its output check: it adds the
// match length ml (bytes beyond MINMATCH) to the token at out[token] and
// writes the extra length bytes at out[op:]. op already includes the 2 offset
// bytes. It returns the new op, or ok = false for real_LZ4_compress returning 0.
func emitMatchLen(out []byte, token, op, ml int) (int, bool) {
	osize := len(out)
	// ZFS: op + (1 + LASTLITERALS) + (len >> 8) > oend.
	if op+(1+lastLiterals)+(ml>>8) > osize {
		return 0, false
	}
	if ml >= mlMask {
		// Not a ZFS check: only for matches of hundreds of KiB can the
		// length bytes overrun oend; every later ZFS check then fails.
		if op+lenBytes(ml) > osize {
			return 0, false
		}
		out[token] += mlMask
		return putLen(out, op, ml-mlMask), true
	}
	out[token] += byte(ml)
	return op, true
}

// emitLast is the "_last_literals" step: encode src[anchor:] as the final
// literal-only sequence. It returns the payload size, or 0 when it does not
// fit.
func emitLast(out, src []byte, op, anchor int) int {
	lastRun := len(src) - anchor
	// ZFS: op + lastRun + 1 + ((lastRun + 255 − RUN_MASK) / 255) > oend.
	// This is exactly the encoded size, so the writes below stay in bounds.
	if op+lastRun+1+(lastRun+255-runMask)/255 > len(out) {
		return 0
	}
	if lastRun >= runMask {
		out[op] = runMask << 4
		op = putLen(out, op+1, lastRun-runMask)
	} else {
		out[op] = byte(lastRun << 4)
		op++
	}
	copy(out[op:], src[anchor:])
	return op + lastRun
}
