package gzip

import (
	"encoding/binary"
	"hash/adler32"
	"math/bits"
)

// This file and trees.go are a Go model of the Linux kernel's deflate
// (lib/zlib_deflate/deflate.c, deftree.c and defutil.h, a port of zlib 1.1.x
// by Jean-loup Gailly and Mark Adler) as z_compress_level()
// (module/os/linux/spl/spl-zlib.c) drives it for ZFS: windowBits 15,
// memLevel 8, Z_DEFAULT_STRATEGY, the whole block given to one
// deflate(Z_FINISH). The structure follows the kernel's so that each step
// can be checked against the C function it models (named in the comments);
// the code is written for this one use (levels 1..9, one call, all input in
// memory) and leaves out what that use never reaches: preset dictionaries,
// other flush modes and strategies, level 0 (deflate_stored), zlib's
// streaming across calls.
//
// Where the kernel differs from userland zlib 1.2.13 (and so from the
// -tags zlib reference) is listed in doc.go.

// Parameters fixed by z_compress_level(): deflateInit2(level, Z_DEFLATED,
// MAX_WBITS, DEF_MEM_LEVEL, Z_DEFAULT_STRATEGY).
const (
	wBits      = 15                  // MAX_WBITS
	wSize      = 1 << wBits          // w_size: the LZ77 window, 32 KiB
	wMask      = wSize - 1           // w_mask
	windowSize = 2 * wSize           // window_size: the window buffer holds two windows
	memLevel   = 8                   // DEF_MEM_LEVEL
	hashBits   = memLevel + 7        // hash_bits: 15
	hashSize   = 1 << hashBits       // hash_size
	hashMask   = hashSize - 1        // hash_mask
	hashShift  = (hashBits + 2) / 3  // hash_shift: (hash_bits+MIN_MATCH-1)/MIN_MATCH = 5
	litBufSize = 1 << (memLevel + 6) // lit_bufsize: 16384 symbols a block at most

	minMatch     = 3                       // MIN_MATCH
	maxMatch     = 258                     // MAX_MATCH
	minLookahead = maxMatch + minMatch + 1 // MIN_LOOKAHEAD
	maxDist      = wSize - minLookahead    // MAX_DIST(s)
	tooFar       = 4096                    // TOO_FAR: a 3-byte match farther than this is dropped (deflate_slow)
	nilPos       = 0                       // NIL: the end of a hash chain

	// windowSlack lets the match loop read 8 bytes at a time up to 266
	// bytes past any window position (it compares up to window[pos+257]
	// with 8-byte loads); the kernel's loop reads single bytes and needs
	// none. The slack never holds input.
	windowSlack = maxMatch + 8 + 6
)

// config is one row of the kernel's configuration_table (deflate.c): the
// matcher's effort at a compression level.
type config struct {
	good  int  // good_length: above a previous match this long, search a quarter of the chain
	lazy  int  // max_lazy: no lazy search above this length (deflate_slow); max_insert_length (deflate_fast)
	nice  int  // nice_length: stop searching at a match this long
	chain int  // max_chain: hash chain entries searched
	slow  bool // deflate_slow (lazy matching) rather than deflate_fast
}

// configs is configuration_table for levels 1..9 (index 0 is level 0,
// deflate_stored, which ZFS never asks for). The values are zlib's and have
// not changed between 1.1.x and 1.2.13.
var configs = [MaxLevel + 1]config{
	1: {4, 4, 8, 4, false},
	2: {4, 5, 16, 8, false},
	3: {4, 6, 32, 32, false},
	4: {4, 4, 16, 16, true},
	5: {8, 16, 32, 32, true},
	6: {8, 16, 128, 128, true},
	7: {8, 32, 128, 256, true},
	8: {32, 128, 258, 1024, true},
	9: {32, 258, 258, 4096, true},
}

// deflater is the state of one deflate stream (the kernel's deflate_state,
// less what one deflate(Z_FINISH) call never uses). It is about 200 KiB
// and reused from call to call.
type deflater struct {
	cfg config

	// Input: src is the whole block; srcPos how much of it read_buf has
	// copied into the window.
	src    []byte
	srcPos int

	// The sliding window and hash chains (deflate.c).
	window [windowSize + windowSlack]byte
	prev   [wSize]uint16    // prev: previous position with the same hash, by position & wMask
	head   [hashSize]uint16 // head: last position of each hash chain
	insH   uint32           // ins_h: hash of the 3 bytes at the next insertion

	strstart    int // start of the string to insert
	lookahead   int // valid bytes from strstart on
	blockStart  int // window position of the current block; negative once slid away
	matchStart  int // start of the match longest_match found
	matchLength int // its length
	prevMatch   int // deflate_slow: the previous step's match
	prevLength  int
	matchAvail  bool // deflate_slow: a literal at strstart-1 awaits output

	trees // the current block's symbols, its trees and the bit output (trees.go)
}

// reset prepares d for a new stream at level, as deflateInit2() with
// zlib_deflateReset() and lm_init() do. prev is cleared too: the kernel
// leaves it uninitialised ("initialized on the fly"), and no chain that can
// change the output reaches an entry not written in this stream; clearing
// it keeps stale positions of an earlier call out of the unreachable ones.
func (d *deflater) reset(level int, dst, src []byte) {
	d.level = level
	d.cfg = configs[level]
	d.src, d.srcPos = src, 0
	clear(d.head[:])
	clear(d.prev[:])
	d.insH = 0
	d.strstart, d.lookahead, d.blockStart = 0, 0, 0
	d.matchStart, d.prevMatch = 0, 0
	d.matchLength, d.prevLength = minMatch-1, minMatch-1
	d.matchAvail = false
	d.trees.init(dst)
}

// compress runs deflate(Z_FINISH) on d's input: the zlib header, the
// deflate blocks, the Adler-32 trailer (zlib_deflate()). It reports false
// as soon as the stream cannot fit in the output buffer.
func (d *deflater) compress() bool {
	// The header (zlib_deflate(), "Write the zlib header"): CMF for
	// deflate with a 32K window, FLEVEL = (level-1)/2 capped at 3, and
	// FCHECK.
	h := zlibHeader(d.level)
	if !d.putBytes(h[:]) {
		return false
	}
	var ok bool
	if d.cfg.slow {
		ok = d.deflateSlow()
	} else {
		ok = d.deflateFast()
	}
	if !ok {
		return false
	}
	var tr [trailerSize]byte
	binary.BigEndian.PutUint32(tr[:], adler32.Checksum(d.src))
	return d.putBytes(tr[:])
}

// updateHash is UPDATE_HASH: roll byte c into hash h. With hash_shift 5 and
// hash_bits 15, h depends on the last three bytes only.
func updateHash(h uint32, c byte) uint32 {
	return (h<<hashShift ^ uint32(c)) & hashMask
}

// insertString is INSERT_STRING: enter the string at pos in its hash chain
// and return the chain's previous head.
func (d *deflater) insertString(pos int) int {
	d.insH = updateHash(d.insH, d.window[pos+minMatch-1])
	head := d.head[d.insH]
	d.prev[pos&wMask] = head
	d.head[d.insH] = uint16(pos)
	return int(head)
}

// fillWindow is fill_window(): read input until there are MIN_LOOKAHEAD
// bytes ahead or the input is exhausted, sliding the window down by wSize
// when strstart has passed wSize+MAX_DIST.
func (d *deflater) fillWindow() {
	for {
		more := windowSize - d.lookahead - d.strstart
		if d.strstart >= wSize+maxDist {
			copy(d.window[:wSize], d.window[wSize:windowSize])
			d.matchStart -= wSize
			d.strstart -= wSize
			d.blockStart -= wSize
			for i, p := range d.head {
				d.head[i] = slid(p)
			}
			for i, p := range d.prev {
				d.prev[i] = slid(p)
			}
			more += wSize
		}
		if d.srcPos == len(d.src) {
			return
		}
		// read_buf()
		n := copy(d.window[d.strstart+d.lookahead:d.strstart+d.lookahead+more], d.src[d.srcPos:])
		d.srcPos += n
		d.lookahead += n
		if d.lookahead >= minMatch {
			d.insH = updateHash(uint32(d.window[d.strstart]), d.window[d.strstart+1])
		}
		if d.lookahead >= minLookahead || d.srcPos == len(d.src) {
			return
		}
	}
}

// slid is a hash table entry after the window slid down by wSize.
func slid(p uint16) uint16 {
	if p >= wSize {
		return p - wSize
	}
	return nilPos
}

// longestMatch is longest_match(): follow the hash chain from curMatch and
// return the longest match for the string at strstart that is longer than
// prevLength, setting matchStart; the result is at most lookahead. As in
// the kernel (without UNALIGNED_OK), a candidate is compared only when its
// bytes at best_len, best_len-1, 0 and 1 agree; byte 2 is not compared (the
// hash chain implies it); the length found is min(first difference from
// byte 3 on, 258).
func (d *deflater) longestMatch(curMatch int) int {
	chain := d.cfg.chain
	w := d.window[:]
	scan := d.strstart
	bestLen := d.prevLength
	nice := d.cfg.nice
	limit := nilPos
	if d.strstart > maxDist {
		limit = d.strstart - maxDist
	}
	if d.prevLength >= d.cfg.good {
		chain >>= 2
	}
	if nice > d.lookahead {
		nice = d.lookahead
	}
	scanEnd1, scanEnd := w[scan+bestLen-1], w[scan+bestLen]
	s0, s1 := w[scan], w[scan+1]
	for {
		m := curMatch
		if w[m+bestLen] == scanEnd && w[m+bestLen-1] == scanEnd1 && w[m] == s0 && w[m+1] == s1 {
			n := matchLen(w[scan+3:scan+maxMatch+8], w[m+3:m+maxMatch+8]) + 3
			if n > bestLen {
				d.matchStart = m
				bestLen = n
				if n >= nice {
					break
				}
				scanEnd1, scanEnd = w[scan+bestLen-1], w[scan+bestLen]
			}
		}
		curMatch = int(d.prev[curMatch&wMask])
		if curMatch <= limit {
			break
		}
		chain--
		if chain == 0 {
			break
		}
	}
	if bestLen <= d.lookahead {
		return bestLen
	}
	return d.lookahead
}

// matchLen returns the length of the common prefix of a and b, at most
// maxMatch-3 (a and b are at least maxMatch-3+8 bytes long).
func matchLen(a, b []byte) int {
	const limit = maxMatch - 3
	for i := 0; i < limit; i += 8 {
		x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:])
		if x != 0 {
			return min(i+bits.TrailingZeros64(x)/8, limit)
		}
	}
	return limit
}

// deflateFast is deflate_fast() (levels 1..3): no lazy matching; the
// strings inside a match are entered in the hash chains only if the match
// is at most max_lazy (max_insert_length) long.
func (d *deflater) deflateFast() bool {
	hashHead := nilPos
	for {
		if d.lookahead < minLookahead {
			d.fillWindow()
			if d.lookahead == 0 {
				break
			}
		}
		if d.lookahead >= minMatch {
			hashHead = d.insertString(d.strstart)
		}
		// uint32 as the kernel's unsigned IPos: a stale hashHead past
		// strstart (after a slide, at the end of the input) is far.
		if hashHead != nilPos && uint32(d.strstart-hashHead) <= maxDist {
			d.matchLength = d.longestMatch(hashHead)
		}
		var flush bool
		if d.matchLength >= minMatch {
			flush = d.tallyMatch(d.strstart-d.matchStart, d.matchLength-minMatch, d.strstart, d.blockStart)
			d.lookahead -= d.matchLength
			if d.matchLength <= d.cfg.lazy && d.lookahead >= minMatch {
				d.matchLength-- // the string at strstart is in the table already
				for {
					d.strstart++
					hashHead = d.insertString(d.strstart)
					d.matchLength--
					if d.matchLength == 0 {
						break
					}
				}
				d.strstart++
			} else {
				d.strstart += d.matchLength
				d.matchLength = 0
				d.insH = updateHash(uint32(d.window[d.strstart]), d.window[d.strstart+1])
			}
		} else {
			flush = d.tallyLit(d.window[d.strstart], d.strstart, d.blockStart)
			d.lookahead--
			d.strstart++
		}
		if flush && !d.flushBlock(false) {
			return false
		}
	}
	return d.flushBlock(true)
}

// deflateSlow is deflate_slow() (levels 4..9): lazy matching; a match is
// taken only if the next position has no longer one, and a 3-byte match
// farther than TOO_FAR is not taken.
func (d *deflater) deflateSlow() bool {
	hashHead := nilPos
	for {
		if d.lookahead < minLookahead {
			d.fillWindow()
			if d.lookahead == 0 {
				break
			}
		}
		if d.lookahead >= minMatch {
			hashHead = d.insertString(d.strstart)
		}
		d.prevLength, d.prevMatch = d.matchLength, d.matchStart
		d.matchLength = minMatch - 1
		if hashHead != nilPos && d.prevLength < d.cfg.lazy && uint32(d.strstart-hashHead) <= maxDist {
			d.matchLength = d.longestMatch(hashHead)
			if d.matchLength <= 5 && d.matchLength == minMatch && d.strstart-d.matchStart > tooFar {
				d.matchLength = minMatch - 1
			}
		}
		switch {
		case d.prevLength >= minMatch && d.matchLength <= d.prevLength:
			// The previous match is at least as long: emit it and
			// enter its strings (up to max_insert) in the hash chains.
			maxInsert := d.strstart + d.lookahead - minMatch
			flush := d.tallyMatch(d.strstart-1-d.prevMatch, d.prevLength-minMatch, d.strstart, d.blockStart)
			d.lookahead -= d.prevLength - 1
			for n := d.prevLength - 2; n > 0; n-- {
				d.strstart++
				if d.strstart <= maxInsert {
					hashHead = d.insertString(d.strstart)
				}
			}
			d.matchAvail = false
			d.matchLength = minMatch - 1
			d.strstart++
			if flush && !d.flushBlock(false) {
				return false
			}
		case d.matchAvail:
			// No better match than a literal at strstart-1 (or the
			// current match is longer): emit the literal.
			if d.tallyLit(d.window[d.strstart-1], d.strstart, d.blockStart) && !d.flushBlock(false) {
				return false
			}
			d.strstart++
			d.lookahead--
		default:
			d.matchAvail = true
			d.strstart++
			d.lookahead--
		}
	}
	if d.matchAvail {
		d.tallyLit(d.window[d.strstart-1], d.strstart, d.blockStart)
		d.matchAvail = false
	}
	return d.flushBlock(true)
}

// flushBlock is FLUSH_BLOCK(s, eof): the symbols since blockStart become one
// block (_tr_flush_block), with the input they cover if it is still in the
// window (for a stored block). It reports false when the output is full.
func (d *deflater) flushBlock(last bool) bool {
	var stored []byte
	if d.blockStart >= 0 {
		stored = d.window[d.blockStart:d.strstart]
	}
	ok := d.trees.flushBlock(stored, d.strstart-d.blockStart, last)
	d.blockStart = d.strstart
	return ok
}
