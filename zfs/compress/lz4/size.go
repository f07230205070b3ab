package lz4

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Size returns the length in bytes that Compress would return for src and a
// dst of capacity limit bytes (ZFS's d_len, the 4-byte header included), or
// ok = false exactly where Compress returns ErrNoFit. It runs the same
// compressor (lz4_compress_zfs and real_LZ4_compress of
// module/zfs/lz4_zfs.c, with every output check of LZ4 r85 at the same
// point) but writes no output: it only counts the bytes, and stops at the
// first check that fails, as ZFS does. Like Compress it allocates nothing,
// and len(src) must not exceed math.MaxInt32.
func (c *Compressor) Size(src []byte, limit int) (n int, ok bool) {
	if limit < headerSize {
		return 0, false
	}
	if len(src) > math.MaxInt32 {
		panic("lz4: input larger than 2 GiB")
	}
	var p int
	if len(src) < limit64k {
		p = c.size64k(src, limit-headerSize)
	} else {
		p = c.sizeLarge(src, limit-headerSize)
	}
	if p <= 0 {
		return 0, false
	}
	return headerSize + p, true
}

// lastSize is emitLast without the output: the payload size after the final
// literal-only sequence of lastRun bytes is appended at op, or 0 when ZFS's
// check (op + lastRun + 1 + ((lastRun + 255 − RUN_MASK) / 255) > oend)
// fails. The checked sum is exactly the encoded size.
func lastSize(op, lastRun, osize int) int {
	op += lastRun + 1 + (lastRun+255-runMask)/255
	if op > osize {
		return 0
	}
	return op
}

// literalsSize is "Encode Literal length" and "Copy Literals" without the
// output, for a run of lr literal bytes whose token goes at op: it returns
// the new op (after token, length bytes and literals), or 0 when the ZFS
// check, or for very long runs the extra guard of emitLiterals, fails.
func literalsSize(op, lr, osize int) int {
	op += 1 + lr
	// ZFS: op + length + (2 + 1 + LASTLITERALS) + (length >> 8) > oend,
	// with op after the token.
	if op+(2+1+lastLiterals)+(lr>>8) > osize {
		return 0
	}
	if lr >= runMask {
		lb := lenBytes(lr)
		if op+lb+2 > osize { // emitLiterals' extra guard
			return 0
		}
		op += lb
	}
	return op
}

// matchLenSize is "Encode MatchLength" without the output, for a match of
// ml bytes beyond MINMATCH; op already includes the offset. It returns the
// new op, or 0 when the ZFS check, or for very long matches the extra guard
// of emitMatchLen, fails.
func matchLenSize(op, ml, osize int) int {
	// ZFS: op + (1 + LASTLITERALS) + (len >> 8) > oend.
	if op+(1+lastLiterals)+(ml>>8) > osize {
		return 0
	}
	if ml >= mlMask {
		op += lenBytes(ml)
		if op > osize { // emitMatchLen's extra guard
			return 0
		}
	}
	return op
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

// catchUp is the "Catch up" step byte by byte: how many bytes the match of
// ip with ref (ref < ip) extends backwards, ip not going below anchor nor
// ref below 0. The sizing loops first compare the 8 bytes before ip and ref
// at once, and call it only when those are all equal or do not exist.
func catchUp(src []byte, anchor, ip, ref int) int {
	k := 0
	for ip-k > anchor && ref-k > 0 && src[ip-k-1] == src[ref-k-1] {
		k++
	}
	return k
}

// The sizing loops below are compressLarge and compress64k without the
// output: op counts the bytes they would write and every output check is
// made at the same point, so they stop (return 0) exactly where those do.
// Their steps are rearranged for speed only; FuzzSize and the tests in
// size_test.go (and zio's over the golden inputs) compare the two.

// findLarge is the "Find a match" loop of LZ4_compressCtx from position ip
// (v = the 4 bytes at ip): it returns the position of the match found and
// its reference, or ip = −1 when the search passed mflimit.
func findLarge(table *[1 << hashLogLarge]uint32, src []byte, ip int, v uint32) (int, int) {
	const mask = 1<<hashLogLarge - 1
	src = src[:len(src):len(src)]
	t := table[:]
	mflimit := len(src) - mfLimit
	attempts := uint32(1<<skipStrength + 3)
	for {
		h := hashLarge(v) & mask
		fwd := ip + int(attempts>>skipStrength)
		attempts++
		if fwd > mflimit {
			return -1, 0
		}
		ref := int(t[h])
		t[h] = uint32(ip)
		w := le32(src, fwd)
		if ref >= ip-maxDistance && le32(src, ref) == v {
			return ip, ref
		}
		ip, v = fwd, w
	}
}

// sizeLarge is compressLarge (LZ4_compressCtx) counting instead of writing:
// it returns the payload size in bytes, or 0 if an output check failed
// (capacity osize).
func (c *Compressor) sizeLarge(src []byte, osize int) int {
	if len(src) < minLength {
		return lastSize(0, len(src), osize)
	}
	src = src[:len(src):len(src)] // cap = len: one register less
	const mask = 1<<hashLogLarge - 1
	table := &c.large
	clear(table[:])
	mflimit := len(src) - mfLimit
	anchor, op := 0, 0

	table[hashLarge(le32(src, 0))&mask] = 0
	ip := 1
	for {
		var ref int
		if ip, ref = findLarge(table, src, ip, le32(src, ip)); ip < 0 {
			return lastSize(op, len(src)-anchor, osize)
		}
		// Catch up.
		k := 8
		if ref >= 8 {
			k = bits.LeadingZeros64(le64(src, ip-8)^le64(src, ref-8)) >> 3
		}
		if k == 8 {
			k = catchUp(src, anchor, ip, ref)
		}
		k = min(k, ip-anchor)
		ip -= k
		ref -= k
		if op = literalsSize(op, ip-anchor, osize); op == 0 {
			return 0
		}
		for {
			op += 2 // offset
			// Start counting after MINMATCH (up to matchlimit = n − 5;
			// two words inline).
			p, r := ip+minMatch, ref+minMatch
			var ml int
			if matchlimit := len(src) - lastLiterals; p+16 > matchlimit {
				ml = matchLen(src, r, p, matchlimit)
			} else if d := le64(src, p) ^ le64(src, r); d != 0 {
				ml = bits.TrailingZeros64(d) >> 3
			} else if d := le64(src, p+8) ^ le64(src, r+8); d != 0 {
				ml = 8 + bits.TrailingZeros64(d)>>3
			} else {
				ml = 16 + matchLen(src, r+16, p+16, matchlimit)
			}
			ip = p + ml
			if op = matchLenSize(op, ml, osize); op == 0 {
				return 0
			}
			// Test end of chunk.
			if ip > mflimit {
				return lastSize(op, len(src)-ip, osize)
			}
			// Fill table: the 4 bytes at ip − 2 and at ip.
			w := le64(src, ip-2)
			table[hashLarge(uint32(w))&mask] = uint32(ip - 2)
			// Test next position. (compressLarge's guard before the
			// token is not needed: nothing is written, and whenever
			// it fails the next check fails too.)
			v := uint32(w >> 16)
			h := hashLarge(v) & mask
			ref = int(table[h])
			table[h] = uint32(ip)
			if ref > ip-(maxDistance+1) && le32(src, ref) == v {
				op++ // token
				continue
			}
			break
		}
		// Prepare next loop.
		anchor = ip
		ip++
	}
}

// find64k is the "Find a match" loop of LZ4_compress64kCtx (no distance
// check), as findLarge.
func find64k(table *[1 << hashLog64k]uint16, src []byte, ip int, v uint32) (int, int) {
	const mask = 1<<hashLog64k - 1
	src = src[:len(src):len(src)]
	t := table[:]
	mflimit := len(src) - mfLimit
	attempts := uint32(1<<skipStrength + 3)
	for {
		h := hash64k(v) & mask
		fwd := ip + int(attempts>>skipStrength)
		attempts++
		if fwd > mflimit {
			return -1, 0
		}
		ref := int(t[h])
		t[h] = uint16(ip)
		w := le32(src, fwd)
		if le32(src, ref) == v {
			return ip, ref
		}
		ip, v = fwd, w
	}
}

// size64k is compress64k (LZ4_compress64kCtx) counting instead of writing:
// it returns the payload size in bytes, or 0 if an output check failed
// (capacity osize).
func (c *Compressor) size64k(src []byte, osize int) int {
	if len(src) < minLength {
		return lastSize(0, len(src), osize)
	}
	src = src[:len(src):len(src)]
	const mask = 1<<hashLog64k - 1
	table := &c.small
	clear(table[:])
	mflimit := len(src) - mfLimit
	anchor, op := 0, 0

	// The first position is not stored (see compress64k).
	ip := 1
	for {
		var ref int
		if ip, ref = find64k(table, src, ip, le32(src, ip)); ip < 0 {
			return lastSize(op, len(src)-anchor, osize)
		}
		// Catch up.
		k := 8
		if ref >= 8 {
			k = bits.LeadingZeros64(le64(src, ip-8)^le64(src, ref-8)) >> 3
		}
		if k == 8 {
			k = catchUp(src, anchor, ip, ref)
		}
		k = min(k, ip-anchor)
		ip -= k
		ref -= k
		if op = literalsSize(op, ip-anchor, osize); op == 0 {
			return 0
		}
		for {
			op += 2 // offset
			// Start counting after MINMATCH (up to matchlimit = n − 5;
			// two words inline).
			p, r := ip+minMatch, ref+minMatch
			var ml int
			if matchlimit := len(src) - lastLiterals; p+16 > matchlimit {
				ml = matchLen(src, r, p, matchlimit)
			} else if d := le64(src, p) ^ le64(src, r); d != 0 {
				ml = bits.TrailingZeros64(d) >> 3
			} else if d := le64(src, p+8) ^ le64(src, r+8); d != 0 {
				ml = 8 + bits.TrailingZeros64(d)>>3
			} else {
				ml = 16 + matchLen(src, r+16, p+16, matchlimit)
			}
			ip = p + ml
			if op = matchLenSize(op, ml, osize); op == 0 {
				return 0
			}
			if ip > mflimit {
				return lastSize(op, len(src)-ip, osize)
			}
			w := le64(src, ip-2)
			table[hash64k(uint32(w))&mask] = uint16(ip - 2)
			v := uint32(w >> 16)
			h := hash64k(v) & mask
			ref = int(table[h])
			table[h] = uint16(ip)
			if le32(src, ref) == v {
				op++ // token
				continue
			}
			break
		}
		anchor = ip
		ip++
	}
}
