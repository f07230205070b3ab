package lz4

import "math"

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
