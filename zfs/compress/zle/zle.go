// Package zle is a bit-exact Go implementation of the ZLE ("zero length
// encoding") compressor used by OpenZFS for compress=zle
// (module/zfs/zle.c: zle_compress, unchanged in every release, called with
// the parameter n = 64 from zio_compress_table). ZFS also uses ZLE
// internally for DDT ZAP values (docs/zfs-semantics.md §2.6).
//
// The output is a sequence of runs, each starting with a length byte b:
// b < 64 means b+1 literal bytes follow; b ≥ 64 means b−64+1 zero bytes
// (1…192), with no payload. Literal runs hold at most 64 bytes, may contain
// single zero bytes, and end before a pair of zero bytes. Sizes and bytes
// depend on the exact run-splitting and output-limit logic of the C code,
// which this package reproduces. It was written from the ddtsim
// specification (docs/zfs-semantics.md §5.3), not translated from the C
// sources.
package zle

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// ErrNoFit: the input could not be encoded within the capacity. It
// corresponds to zle_compress returning s_len (the encoding loop stopped
// before consuming the whole input), which zio_compress_data treats as "does
// not fit" (the block is stored uncompressed). The loop stops early, and
// conservatively, when fewer than 64 bytes of room remain for a literal run,
// so ErrNoFit can occur although the actual output would have fitted.
var ErrNoFit = errors.New("zle: output does not fit")

const (
	// zleN is ZLE's parameter n as passed by ZFS (zio_compress_table:
	// zle, 64). Length bytes below n start literal runs.
	zleN = 64
	// maxLiteral is the longest literal run (length byte n − 1).
	maxLiteral = zleN
	// maxZeros is the longest zero run (256 − n; length byte 255).
	maxZeros = 256 - zleN
)

// Compress compresses src into dst, whose length is the capacity D in bytes,
// exactly like zle_compress (module/zfs/zle.c) called with s_len = len(src),
// d_len = len(dst) and n = 64. It returns the output length c, or ErrNoFit.
// Output bytes dst[:c] are the exact bytes ZFS would store; bytes of dst
// beyond c, and all of dst after ErrNoFit, are unspecified.
//
// As in the C code, a new run starts only while op < D − 1 (op = bytes
// written so far), and a literal run only if at least 64 bytes of room remain
// after its length byte; the result is a success only if the whole input was
// consumed. An empty src yields c = 0 for any capacity. Compress performs no
// allocation and is safe for concurrent use.
func Compress(dst, src []byte) (int, error) {
	return encode(dst, len(dst), src)
}

// Size returns the length in bytes that Compress would return for src and a
// dst of capacity limit bytes (ZFS's d_len; a negative limit counts as 0), or
// ok = false exactly where Compress returns ErrNoFit. It runs the same code
// (zle_compress of module/zfs/zle.c with n = 64) but writes no output, and
// like ZFS it stops at the first run that would not fit. It allocates nothing
// and is safe for concurrent use.
func Size(src []byte, limit int) (n int, ok bool) {
	n, err := encode(nil, max(limit, 0), src)
	return n, err == nil
}

// encode is zle_compress with capacity d: it writes the output to dst
// (len(dst) = d) and returns its length, or ErrNoFit; with dst nil it only
// counts (Size).
func encode(dst []byte, d int, src []byte) (int, error) {
	sLen := len(src)
	ip, op := 0, 0
	for ip < sLen && op < d-1 {
		first := ip
		lenByte := op
		op++
		if src[ip] == 0 {
			// Zero run: up to 192 zero bytes, stopping at the end of
			// the input.
			ip = zeroRunEnd(src, ip, min(ip+maxZeros, sLen))
			if dst != nil {
				dst[lenByte] = byte(ip - first - 1 + zleN)
			}
			continue
		}
		if d-op < zleN {
			break // the room check fails: the input is not consumed
		}
		// Literal run: copy while ip < min(first + 64, s_len) − 1 and the
		// bytes at ip, ip+1 are not both zero; then the byte at ip too
		// if it is not zero.
		end := min(first+maxLiteral, sLen) - 1
		ip = pairEnd(src, ip, end)
		if src[ip] != 0 {
			ip++
		}
		// At most 64 bytes, and d − op ≥ 64.
		if dst != nil {
			copy(dst[op:op+maxLiteral], src[first:ip])
			dst[lenByte] = byte(ip - first - 1)
		}
		op += ip - first
	}
	if ip != sLen {
		return 0, ErrNoFit
	}
	return op, nil
}

// zeroRunEnd returns the smallest p in [i, end) with src[p] ≠ 0, or end.
// Requires end ≤ len(src).
func zeroRunEnd(src []byte, i, end int) int {
	for i+8 <= end {
		if v := binary.LittleEndian.Uint64(src[i : i+8 : i+8]); v != 0 {
			return i + bits.TrailingZeros64(v)>>3
		}
		i += 8
	}
	for i < end && src[i] == 0 {
		i++
	}
	return i
}

const (
	lo7 = 0x7f7f7f7f7f7f7f7f
	hi1 = 0x8080808080808080
)

// pairEnd returns the smallest p in [i, end) with src[p] = src[p+1] = 0, or
// end if there is none. Requires end < len(src).
func pairEnd(src []byte, i, end int) int {
	for i < end && i+8 <= len(src) {
		v := binary.LittleEndian.Uint64(src[i : i+8 : i+8])
		// Bit 7 of byte k of z is set iff byte k of v is zero (exact:
		// (v & 0x7f) + 0x7f does not carry into the next byte).
		z := ^((v&lo7 + lo7) | v | lo7)
		// Bit 7 of byte k (k ≤ 6) set iff bytes k and k+1 are zero.
		if p := z & (z >> 8); p != 0 {
			return min(i+bits.TrailingZeros64(p)>>3, end)
		}
		i += 7 // byte 7 has not been tested as the first of a pair
	}
	for i < end && src[i]|src[i+1] != 0 {
		i++
	}
	return i
}
