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

// literalsSize is the output check and size of "Encode Literal length" /
// "Copy Literals" for a run of lr literal bytes whose token is at op: it
// returns the new op (after token, length bytes and literals), or 0 when
// emitLiterals would fail (the ZFS check, and for very long runs the extra
// guard of emitLiterals).
func literalsSize(op, lr, osize int) int {
	op++
	// ZFS: op + length + (2 + 1 + LASTLITERALS) + (length >> 8) > oend.
	if op+lr+(2+1+lastLiterals)+(lr>>8) > osize {
		return 0
	}
	if lr >= runMask {
		lb := lenBytes(lr)
		if op+lb+lr+2 > osize { // emitLiterals' extra guard
			return 0
		}
		op += lb
	}
	return op + lr
}

// matchLenSize is the output check and size of "Encode MatchLength" for a
// match of ml bytes beyond MINMATCH; op already includes the offset. It
// returns the new op, or 0 when emitMatchLen would fail.
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

// countMatch is "Start Counting" from ip = the position after MINMATCH and
// r = its reference: the match length beyond MINMATCH, limited so that
// ip + result ≤ matchlimit.
func countMatch(src []byte, r, ip, matchlimit int) int {
	if ip+8 <= matchlimit {
		d := binary.LittleEndian.Uint64(src[ip:ip+8:ip+8]) ^
			binary.LittleEndian.Uint64(src[r:r+8:r+8])
		if d != 0 {
			return bits.TrailingZeros64(d) >> 3
		}
		return 8 + matchLen(src, r+8, ip+8, matchlimit)
	}
	return matchLen(src, r, ip, matchlimit)
}

// catchUp is the "Catch up" step: how far the match of ip with ref extends
// backwards, with ip not going below anchor nor ref below 0 (ref < ip).
func catchUp(src []byte, anchor, ip, ref int) int {
	if ref >= 8 {
		x := binary.LittleEndian.Uint64(src[ip-8:ip:ip]) ^
			binary.LittleEndian.Uint64(src[ref-8:ref:ref])
		if k := bits.LeadingZeros64(x) >> 3; k < 8 {
			return min(k, ip-anchor)
		}
	}
	k := 0
	for ip-k > anchor && ref-k > 0 && src[ip-k-1] == src[ref-k-1] {
		k++
	}
	return k
}

// sizeLarge is compressLarge (LZ4_compressCtx) counting instead of writing:
// it returns the payload size in bytes, or 0 if an output check failed
// (capacity osize).
func (c *Compressor) sizeLarge(src []byte, osize int) int {
	n := len(src)
	if n < minLength {
		return lastSize(0, n, osize)
	}
	table := &c.large
	clear(table[:])
	mflimit := n - mfLimit
	matchlimit := n - lastLiterals
	anchor, op := 0, 0

	table[hashLarge(load32(src, 0))] = 0
	ip := 1
	fwdV := load32(src, ip)
	fwdH := hashLarge(fwdV)

	for {
		// Find a match.
		attempts := uint32(1<<skipStrength + 3)
		fwd := ip
		var ref int
		for {
			h, v := fwdH, fwdV
			step := int(attempts >> skipStrength)
			attempts++
			ip = fwd
			fwd = ip + step
			if fwd > mflimit {
				return lastSize(op, n-anchor, osize)
			}
			fwdV = load32(src, fwd)
			fwdH = hashLarge(fwdV)
			ref = int(table[h&(1<<hashLogLarge-1)])
			table[h&(1<<hashLogLarge-1)] = uint32(ip)
			if ref >= ip-maxDistance && load32(src, ref) == v {
				break
			}
		}

		// Catch up.
		if k := catchUp(src, anchor, ip, ref); k > 0 {
			ip -= k
			ref -= k
		}

		if op = literalsSize(op, ip-anchor, osize); op == 0 {
			return 0
		}

		for {
			op += 2 // offset
			ip += minMatch
			var ml int
			if r := ref + minMatch; ip+8 <= matchlimit {
				d := binary.LittleEndian.Uint64(src[ip:ip+8:ip+8]) ^
					binary.LittleEndian.Uint64(src[r:r+8:r+8])
				if d != 0 {
					ml = bits.TrailingZeros64(d) >> 3
				} else {
					ml = 8 + matchLen(src, r+8, ip+8, matchlimit)
				}
			} else {
				ml = matchLen(src, r, ip, matchlimit)
			}
			ip += ml
			if op = matchLenSize(op, ml, osize); op == 0 {
				return 0
			}

			// Test end of chunk.
			if ip > mflimit {
				return lastSize(op, n-ip, osize)
			}
			// Fill table.
			w := binary.LittleEndian.Uint64(src[ip-2 : ip+6 : ip+6])
			table[hashLarge(uint32(w))&(1<<hashLogLarge-1)] = uint32(ip - 2)

			// Test next position.
			v := uint32(w >> 16)
			h := hashLarge(v) & (1<<hashLogLarge - 1)
			ref = int(table[h])
			table[h] = uint32(ip)
			if ref > ip-(maxDistance+1) && load32(src, ref) == v {
				if op+3 > osize { // compressLarge's guard
					return 0
				}
				op++ // token
				continue
			}
			break
		}

		// Prepare next loop.
		anchor = ip
		ip++
		fwdV = load32(src, ip)
		fwdH = hashLarge(fwdV)
	}
}

// size64k is compress64k (LZ4_compress64kCtx) counting instead of writing:
// it returns the payload size in bytes, or 0 if an output check failed
// (capacity osize).
func (c *Compressor) size64k(src []byte, osize int) int {
	n := len(src)
	if n < minLength {
		return lastSize(0, n, osize)
	}
	table := &c.small
	clear(table[:])
	mflimit := n - mfLimit
	matchlimit := n - lastLiterals
	anchor, op := 0, 0

	ip := 1
	fwdV := load32(src, ip)
	fwdH := hash64k(fwdV)

	for {
		// Find a match.
		attempts := uint32(1<<skipStrength + 3)
		fwd := ip
		var ref int
		for {
			h, v := fwdH, fwdV
			step := int(attempts >> skipStrength)
			attempts++
			ip = fwd
			fwd = ip + step
			if fwd > mflimit {
				return lastSize(op, n-anchor, osize)
			}
			fwdV = load32(src, fwd)
			fwdH = hash64k(fwdV)
			ref = int(table[h&(1<<hashLog64k-1)])
			table[h&(1<<hashLog64k-1)] = uint16(ip)
			if load32(src, ref) == v {
				break
			}
		}

		// Catch up.
		for ip > anchor && ref > 0 && src[ip-1] == src[ref-1] {
			ip--
			ref--
		}

		if op = literalsSize(op, ip-anchor, osize); op == 0 {
			return 0
		}

		for {
			op += 2 // offset
			ip += minMatch
			ml := countMatch(src, ref+minMatch, ip, matchlimit)
			ip += ml
			if op = matchLenSize(op, ml, osize); op == 0 {
				return 0
			}

			// Test end of chunk.
			if ip > mflimit {
				return lastSize(op, n-ip, osize)
			}
			// Fill table.
			w := binary.LittleEndian.Uint64(src[ip-2 : ip+6 : ip+6])
			table[hash64k(uint32(w))&(1<<hashLog64k-1)] = uint16(ip - 2)

			// Test next position.
			v := uint32(w >> 16)
			h := hash64k(v) & (1<<hashLog64k - 1)
			ref = int(table[h])
			table[h] = uint16(ip)
			if load32(src, ref) == v {
				if op+3 > osize { // compress64k's guard
					return 0
				}
				op++ // token
				continue
			}
			break
		}

		// Prepare next loop.
		anchor = ip
		ip++
		fwdV = load32(src, ip)
		fwdH = hash64k(fwdV)
	}
}
