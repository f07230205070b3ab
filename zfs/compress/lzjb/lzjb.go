// Package lzjb is a bit-exact Go implementation of the LZJB compressor used by
// OpenZFS for compress=lzjb, and for compress=on on pools without the
// lz4_compress feature (module/zfs/lzjb.c: lzjb_compress, unchanged from
// zfs-0.6.0 to 2.4.x).
//
// LZJB has no container format of its own: the output is a sequence of
// groups, each a control byte followed by up to 8 items. Bit k (least
// significant first) of the control byte says whether item k is a match
// (2 bytes: ((length−3) << 2) | (offset >> 8), then offset & 0xff; length
// 3…66, offset 1…1023 bytes back) or a literal (1 byte). The result depends on
// the exact hash, table and output-limit logic of the C code, so ddtsim needs
// this implementation to predict compressed sizes and bytes exactly. It was
// written from the ddtsim specification (docs/zfs-semantics.md §5.2), not
// translated from the C sources.
//
// # Buffer address
//
// lzjb_compress derives match offsets from the memory address of the input
// byte: the table stores ADDR(ip) mod 65536, and the offset of a candidate is
// (ADDR(ip) − table[slot]) mod 1024. Table slots that were never written hold
// 0, so the first probe of a slot proposes the candidate at the nearest
// 1024-aligned address at or before ip (none if ip itself is aligned); the
// output therefore depends on the input buffer's address modulo 1024. This
// package models ADDR(p) = p, i.e. an input buffer aligned to 1024 bytes
// (§5.2). That holds for ZFS buffers whose size is a
// multiple of 4 KiB and for most other sizes of 2 KiB and more; blocks of 512
// bytes and of 1025–1536 bytes (and all sizes up to 2 KiB in 0.6.x) may be
// only 512-aligned in ZFS, in which case ZFS can, rarely, produce different
// output (docs/zfs-semantics.md §10, open question 3). That case is not
// modelled.
package lzjb

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// ErrNoFit: the output did not fit in the capacity under LZJB's output check.
// It corresponds to lzjb_compress returning s_len, which zio_compress_data
// treats as "does not fit" (the block is stored uncompressed). The check is
// conservative: it runs only when a new group starts and reserves room for a
// whole group (17 bytes), so it can fail although the actual output would
// have fitted; ErrNoFit reproduces it exactly.
var ErrNoFit = errors.New("lzjb: output does not fit")

// Constants of module/zfs/lzjb.c.
const (
	matchBits  = 6                             // MATCH_BITS
	matchMin   = 3                             // MATCH_MIN
	matchMax   = 1<<matchBits + (matchMin - 1) // MATCH_MAX = 66
	offsetMask = 1<<(16-matchBits) - 1         // OFFSET_MASK = 1023
	lempelSize = 1024                          // LEMPEL_SIZE

	// groupMax = 1 + 2·NBBY = 17 is the size of the largest group (control
	// byte and 8 matches). lzjb_compress fails when a group would start at
	// op ≥ d_len − 1 − 2·NBBY = D − 17, i.e. when a whole group might not
	// fit.
	groupMax = 1 + 2*8
)

// Compressor holds the 1024-entry hash table ("lempel") of lzjb_compress,
// 2 KiB of 16-bit values (the low 16 bits of an input address) that ZFS keeps
// on the stack and zero-initialises on every call; Compress and Size clear it
// on every call too. The zero value is ready to use. A Compressor is not safe
// for concurrent use; keep one per goroutine and reuse it: Compress and Size
// perform no allocation.
type Compressor struct {
	table [lempelSize]uint16
	group [groupMax]byte // where Size writes each group, in place of dst
}

// Compress compresses src into dst, whose length is the capacity D in bytes,
// exactly like lzjb_compress (module/zfs/lzjb.c) called with s_len = len(src)
// and d_len = len(dst), on an input buffer aligned to 1024 bytes (see the
// package documentation). It returns the output length c, or ErrNoFit. Output
// bytes dst[:c] are the exact bytes ZFS would store; bytes of dst beyond c,
// and all of dst after ErrNoFit, are unspecified.
//
// The output check of the C code runs whenever a control byte is about to be
// written: if op ≥ D − 17 (op = bytes written so far) the result is ErrNoFit.
// For a non-empty src, a capacity D ≤ 17 therefore always fails, and on
// success c ≤ D − 1. An empty src yields c = 0 for any capacity (ZFS never
// compresses empty blocks).
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	return c.compress(dst, src, 0)
}

// Size returns the length in bytes that Compress would return for src and a
// dst of capacity limit bytes (ZFS's d_len; a negative limit counts as 0), or
// ok = false exactly where Compress returns ErrNoFit. It runs the same code
// (lzjb_compress of module/zfs/lzjb.c, on an input buffer aligned to 1024
// bytes) but keeps no output: each group is built in a 17-byte scratch
// buffer of the Compressor and only its length is counted. Like ZFS it stops
// at the first group that could pass the limit. It allocates nothing.
func (c *Compressor) Size(src []byte, limit int) (n int, ok bool) {
	n, err := c.encode(nil, max(limit, 0), src, 0)
	return n, err == nil
}

// compress is Compress for an input buffer whose first byte has the memory
// address base (only base mod 1024 matters): ADDR(p) = base + p.
func (c *Compressor) compress(dst, src []byte, base uint) (int, error) {
	return c.encode(dst, len(dst), src, base)
}

// encode is lzjb_compress with capacity d for an input buffer at address
// base: it writes the output to dst, or, when dst is nil, each group to the
// scratch c.group (Size), and returns the output length or ErrNoFit.
func (c *Compressor) encode(dst []byte, d int, src []byte, base uint) (int, error) {
	clear(c.table[:]) // lzjb_compress: uint16_t lempel[LEMPEL_SIZE] = { 0 }
	n := len(src)
	// Positions ip > lastMatch are copied as literals (src > s_end − MATCH_MAX).
	// From ip ≤ lastMatch the 66 bytes src[ip:ip+66] exist, as do those at
	// any candidate before ip, so 8-byte loads below stay in bounds.
	lastMatch := n - matchMax
	ip, op := 0, 0
	for ip < n {
		// copymask reached 1 << NBBY: start a new group.
		if op >= d-groupMax {
			return 0, ErrNoFit
		}
		// op ≤ D − 18, so the whole group (at most 17 bytes) fits.
		g := c.group[:]
		if dst != nil {
			g = dst[op : op+groupMax : op+groupMax]
		}
		gp := 1 // next free byte in g; g[0] is the control byte
		var ctl byte
		if ip <= lastMatch-7*matchMax {
			// Fast path: all 8 items start at or before lastMatch
			// (an item advances ip by at most 66). The body is
			// probe, inlined by hand.
			for k := range 8 {
				v := binary.LittleEndian.Uint64(src[ip : ip+8 : ip+8])
				h := uint32(byte(v))<<16 | uint32(byte(v>>8))<<8 | uint32(byte(v>>16))
				h += h >> 9
				h += h >> 5
				slot := &c.table[h&(lempelSize-1)]
				addr := base + uint(ip)
				off := int((addr - uint(*slot)) & offsetMask)
				*slot = uint16(addr)
				cand := ip - off
				var x uint64
				if uint(cand) < uint(ip) {
					x = v ^ binary.LittleEndian.Uint64(src[cand:cand+8:cand+8])
				}
				if uint(cand) >= uint(ip) || x&0xffffff != 0 {
					g[gp] = byte(v) // literal src[ip]
					gp++
					ip++
					continue
				}
				mlen := matchLen(src, cand, ip, x)
				ctl |= 1 << k
				g[gp] = byte((mlen-matchMin)<<(8-matchBits) | off>>8)
				g[gp+1] = byte(off)
				gp += 2
				ip += mlen
			}
		} else {
			for mask := byte(1); mask != 0 && ip < n; mask <<= 1 {
				var mlen, off int
				if ip <= lastMatch {
					v := binary.LittleEndian.Uint64(src[ip : ip+8 : ip+8])
					mlen, off = c.probe(src, ip, base, v)
				}
				if mlen == 0 {
					// Literal (always for ip > lastMatch).
					g[gp] = src[ip]
					gp++
					ip++
					continue
				}
				ctl |= mask
				g[gp] = byte((mlen-matchMin)<<(8-matchBits) | off>>8)
				g[gp+1] = byte(off)
				gp += 2
				ip += mlen
			}
		}
		g[0] = ctl
		op += gp
	}
	return op, nil
}

// probe performs the table step for position ip ≤ len(src) − 66 (v = the 8
// bytes at ip, little-endian): hash the 3 bytes at ip, take the offset
// (ADDR(ip) − table[slot]) mod 1024 and store ADDR(ip) mod 65536 in the slot.
// It returns the match length (3…66) and offset if the candidate ip − offset
// lies in the input, differs from ip and starts with the same 3 bytes, and
// mlen = 0 otherwise.
func (c *Compressor) probe(src []byte, ip int, base uint, v uint64) (mlen, off int) {
	// hash = (src[0] << 16) + (src[1] << 8) + src[2].
	h := uint32(byte(v))<<16 | uint32(byte(v>>8))<<8 | uint32(byte(v>>16))
	h += h >> 9
	h += h >> 5
	slot := &c.table[h&(lempelSize-1)]
	addr := base + uint(ip)
	off = int((addr - uint(*slot)) & offsetMask)
	*slot = uint16(addr)
	cand := ip - off
	if uint(cand) >= uint(ip) { // cand < 0 or cand = ip (offset 0)
		return 0, 0
	}
	x := v ^ binary.LittleEndian.Uint64(src[cand:cand+8:cand+8])
	if x&0xffffff != 0 {
		return 0, 0
	}
	return matchLen(src, cand, ip, x), off
}

// matchLen returns the match length (3…66) of src[ip:] against src[cand:],
// given x = the XOR of the 8 bytes at ip and at cand (little-endian), whose
// low 3 bytes are zero. Requires ip + 66 ≤ len(src) and cand < ip.
func matchLen(src []byte, cand, ip int, x uint64) int {
	if x != 0 {
		return bits.TrailingZeros64(x) >> 3
	}
	m := 8
	for ; m+8 <= matchMax; m += 8 {
		a := binary.LittleEndian.Uint64(src[ip+m : ip+m+8 : ip+m+8])
		b := binary.LittleEndian.Uint64(src[cand+m : cand+m+8 : cand+m+8])
		if x := a ^ b; x != 0 {
			return m + bits.TrailingZeros64(x)>>3
		}
	}
	for ; m < matchMax && src[ip+m] == src[cand+m]; m++ {
	}
	return m
}
