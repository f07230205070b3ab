package gzip

import (
	"encoding/binary"
	"math/bits"
)

// The Huffman coding half of the kernel's deflate (lib/zlib_deflate/
// deftree.c, zlib 1.1.x's trees.c): the symbol buffer, the choice of a
// stored, fixed or dynamic block, the trees and the bit output.

const (
	lengthCodes = 29                         // LENGTH_CODES
	literals    = 256                        // LITERALS
	lCodes      = literals + 1 + lengthCodes // L_CODES: literals, end of block, lengths
	dCodes      = 30                         // D_CODES
	blCodes     = 19                         // BL_CODES
	heapSize    = 2*lCodes + 1               // HEAP_SIZE
	maxBits     = 15                         // MAX_BITS
	maxBLBits   = 7                          // MAX_BL_BITS
	endBlock    = 256                        // END_BLOCK

	rep3to6     = 16 // REP_3_6: repeat the previous length 3-6 times
	repz3to10   = 17 // REPZ_3_10: 3-10 zero lengths
	repz11to138 = 18 // REPZ_11_138: 11-138 zero lengths

	storedBlock  = 0 // STORED_BLOCK
	staticTrees  = 1 // STATIC_TREES
	dynamicTrees = 2 // DYN_TREES
)

var (
	extraLBits  = [lengthCodes]int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	extraDBits  = [dCodes]int{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	extraBLBits = [blCodes]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7}
	blOrder     = [blCodes]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// node is one element of a Huffman tree (ct_data). The kernel overlays freq
// with code and dad with len; nothing in the port relies on that, so they
// are separate here.
type node struct {
	freq, code uint16
	dad, len   uint16
}

// staticDesc is static_tree_desc: what is fixed about a kind of tree.
type staticDesc struct {
	tree      []node // the fixed tree for the same alphabet, or nil
	extra     []int  // extra bits of each code from extraBase on
	extraBase int
	elems     int // codes in the alphabet
	maxLength int // longest code allowed
}

// treeDesc is tree_desc: a dynamic tree and its largest code in use.
type treeDesc struct {
	dyn     []node
	stat    *staticDesc
	maxCode int
}

// The fixed tables of tr_static_init().
var (
	lengthCode  [maxMatch - minMatch + 1]uint8 // length-3 → length code 0..28
	distCode    [512]uint8                     // see dCode
	baseLength  [lengthCodes]int
	baseDist    [dCodes]int
	staticLTree [lCodes + 2]node
	staticDTree [dCodes]node

	staticLDesc  = staticDesc{staticLTree[:], extraLBits[:], literals + 1, lCodes, maxBits}
	staticDDesc  = staticDesc{staticDTree[:], extraDBits[:], 0, dCodes, maxBits}
	staticBLDesc = staticDesc{nil, extraBLBits[:], 0, blCodes, maxBLBits}
)

func init() { initStaticTables() }

// initStaticTables is tr_static_init().
func initStaticTables() {
	length := 0
	code := 0
	for ; code < lengthCodes-1; code++ {
		baseLength[code] = length
		for range 1 << extraLBits[code] {
			lengthCode[length] = uint8(code)
			length++
		}
	}
	// Length 258 could be code 284 with 5 extra bits or code 285: 285.
	lengthCode[length-1] = uint8(code)

	dist := 0
	for code = 0; code < 16; code++ {
		baseDist[code] = dist
		for range 1 << extraDBits[code] {
			distCode[dist] = uint8(code)
			dist++
		}
	}
	dist >>= 7
	for ; code < dCodes; code++ {
		baseDist[code] = dist << 7
		for range 1 << (extraDBits[code] - 7) {
			distCode[256+dist] = uint8(code)
			dist++
		}
	}

	var count [maxBits + 1]uint16
	for n := range staticLTree {
		var l uint16
		switch {
		case n <= 143:
			l = 8
		case n <= 255:
			l = 9
		case n <= 279:
			l = 7
		default:
			l = 8
		}
		staticLTree[n].len = l
		count[l]++
	}
	genCodes(staticLTree[:], lCodes+1, &count)
	for n := range staticDTree {
		staticDTree[n] = node{len: 5, code: reverse(uint16(n), 5)}
	}
}

// dCode is d_code(): the distance code of dist-1.
func dCode(dist int) int {
	if dist < 256 {
		return int(distCode[dist])
	}
	return int(distCode[256+dist>>7])
}

// reverse is bi_reverse(): the low n bits of code, reversed.
func reverse(code uint16, n uint16) uint16 {
	return bits.Reverse16(code) >> (16 - n)
}

// trees is the Huffman half of the deflate state: the current block's
// symbols (d_buf, l_buf), its trees, and the output.
type trees struct {
	level int
	// userland drops the kernel's block-truncation rule (see mustFlush),
	// the one rule by which it differs from zlib 1.2.13 in what ZFS
	// uses; set only by the differential tests against C zlib.
	userland bool

	dist    [litBufSize]uint16 // d_buf: match distance, 0 for a literal
	lc      [litBufSize]uint8  // l_buf: literal byte, or match length-3
	lastLit int                // last_lit: symbols in the block
	matches int                // matches: how many of them are matches

	ltree  [heapSize]node      // dyn_ltree
	dtree  [2*dCodes + 1]node  // dyn_dtree
	bltree [2*blCodes + 1]node // bl_tree
	lDesc  treeDesc
	dDesc  treeDesc
	blDesc treeDesc

	blCount [maxBits + 1]uint16
	heap    [heapSize]int
	heapLen int
	heapMax int
	depth   [heapSize]uint8

	optLen    int // opt_len: bits of the block with the dynamic trees (and, after build_bl_tree, their header)
	staticLen int // static_len: bits of the block with the fixed trees

	// The output: out is the caller's buffer, n bytes of it written;
	// acc holds nacc more bits, least significant first (bi_buf,
	// bi_valid, 64 bits wide rather than 16: the bytes are the same).
	out  []byte
	n    int
	acc  uint64
	nacc uint
	full bool // the stream outgrew out
}

// init is zlib_tr_init() for a stream written into dst.
func (t *trees) init(dst []byte) {
	t.lDesc = treeDesc{dyn: t.ltree[:], stat: &staticLDesc}
	t.dDesc = treeDesc{dyn: t.dtree[:], stat: &staticDDesc}
	t.blDesc = treeDesc{dyn: t.bltree[:], stat: &staticBLDesc}
	t.out, t.n, t.acc, t.nacc, t.full = dst, 0, 0, 0, false
	t.initBlock()
}

// initBlock is init_block().
func (t *trees) initBlock() {
	for i := range lCodes {
		t.ltree[i].freq = 0
	}
	for i := range dCodes {
		t.dtree[i].freq = 0
	}
	for i := range blCodes {
		t.bltree[i].freq = 0
	}
	t.ltree[endBlock].freq = 1
	t.optLen, t.staticLen = 0, 0
	t.lastLit, t.matches = 0, 0
}

// tallyLit is zlib_tr_tally() for a literal byte c; strstart and blockStart
// are the matcher's, for the block-truncation test. It reports whether the
// block must be flushed now.
func (t *trees) tallyLit(c byte, strstart, blockStart int) bool {
	t.dist[t.lastLit] = 0
	t.lc[t.lastLit] = c
	t.lastLit++
	t.ltree[c].freq++
	return t.mustFlush(strstart, blockStart)
}

// tallyMatch is zlib_tr_tally() for a match at distance dist of length
// lc+3.
func (t *trees) tallyMatch(dist, lc, strstart, blockStart int) bool {
	t.dist[t.lastLit] = uint16(dist)
	t.lc[t.lastLit] = uint8(lc)
	t.lastLit++
	t.matches++
	t.ltree[int(lengthCode[lc])+literals+1].freq++
	t.dtree[dCode(dist-1)].freq++
	return t.mustFlush(strstart, blockStart)
}

// mustFlush is the end of zlib_tr_tally(): the block ends when the symbol
// buffer holds lit_bufsize-1 symbols, or — the kernel's rule, which zlib
// 1.2.x compiles only with -DTRUNCATE_BLOCK and 1.2.12 removed — at levels
// above 2, after every 4096th symbol, when fewer than half the symbols are
// matches and an upper bound of the compressed size (8 bits a symbol, 5
// plus the extra bits a distance) is under half the input the block covers.
func (t *trees) mustFlush(strstart, blockStart int) bool {
	if t.lastLit&0xfff == 0 && t.level > 2 && !t.userland {
		out := t.lastLit * 8
		for c := range dCodes {
			out += int(t.dtree[c].freq) * (5 + extraDBits[c])
		}
		out >>= 3
		in := strstart - blockStart
		if t.matches < t.lastLit/2 && out < in/2 {
			return true
		}
	}
	return t.lastLit == litBufSize-1
}

// flushBlock is zlib_tr_flush_block(): emit the block as stored (when the
// input it covers is still in the window, stored != nil, and storing is not
// longer than coding), with the fixed trees (when not longer than the
// dynamic ones) or with dynamic trees. storedLen is the input it covers.
// It reports false when the stream cannot fit in the output (checked before
// anything of the block is written).
func (t *trees) flushBlock(stored []byte, storedLen int, last bool) bool {
	t.buildTree(&t.lDesc)
	t.buildTree(&t.dDesc)
	maxBLIndex := t.buildBLTree()
	optLenb := (t.optLen + 3 + 7) >> 3
	staticLenb := (t.staticLen + 3 + 7) >> 3
	if staticLenb <= optLenb {
		optLenb = staticLenb
	}
	var eof uint32
	if last {
		eof = 1
	}
	pos := t.n*8 + int(t.nacc) // bits written so far
	switch {
	case storedLen+4 <= optLenb && stored != nil:
		end := (pos+3+7)/8 + 4 + storedLen
		if !t.fits(end, last) {
			return false
		}
		t.sendBits(storedBlock<<1|eof, 3)
		t.windup()
		var hdr [4]byte
		binary.LittleEndian.PutUint16(hdr[:], uint16(storedLen))
		binary.LittleEndian.PutUint16(hdr[2:], ^uint16(storedLen))
		t.putBytes(hdr[:])
		t.putBytes(stored)
	case staticLenb == optLenb:
		if !t.fits((pos+3+t.staticLen+7)/8, last) {
			return false
		}
		t.sendBits(staticTrees<<1|eof, 3)
		t.compressBlock(staticLTree[:], staticDTree[:])
	default:
		if !t.fits((pos+3+t.optLen+7)/8, last) {
			return false
		}
		t.sendBits(dynamicTrees<<1|eof, 3)
		t.sendAllTrees(t.lDesc.maxCode+1, t.dDesc.maxCode+1, maxBLIndex+1)
		t.compressBlock(t.ltree[:], t.dtree[:])
	}
	t.initBlock()
	if last {
		t.windup()
	}
	return !t.full
}

// fits reports whether a stream whose blocks end at byte end (plus the
// trailer after the last block) can fit in the output.
func (t *trees) fits(end int, last bool) bool {
	if last {
		end += trailerSize
	}
	if end > len(t.out) {
		t.full = true
	}
	return !t.full
}

// smaller is the heap order of pqdownheap(): by frequency, then by depth
// (the kernel's tie-break, which keeps trees shallow).
func (t *trees) smaller(tree []node, n, m int) bool {
	return tree[n].freq < tree[m].freq || (tree[n].freq == tree[m].freq && t.depth[n] <= t.depth[m])
}

// pqDownHeap is pqdownheap(): sift heap[k] down.
func (t *trees) pqDownHeap(tree []node, k int) {
	v := t.heap[k]
	for j := k << 1; j <= t.heapLen; j <<= 1 {
		if j < t.heapLen && t.smaller(tree, t.heap[j+1], t.heap[j]) {
			j++
		}
		if t.smaller(tree, v, t.heap[j]) {
			break
		}
		t.heap[k] = t.heap[j]
		k = j
	}
	t.heap[k] = v
}

// buildTree is build_tree(): the Huffman tree of desc's frequencies, its
// code lengths (gen_bitlen) and codes (gen_codes); it adds the tree's
// bits to optLen and staticLen.
func (t *trees) buildTree(desc *treeDesc) {
	tree := desc.dyn
	stree := desc.stat.tree
	elems := desc.stat.elems
	maxCode := -1
	t.heapLen, t.heapMax = 0, heapSize
	for n := range elems {
		if tree[n].freq != 0 {
			t.heapLen++
			t.heap[t.heapLen] = n
			maxCode = n
			t.depth[n] = 0
		} else {
			tree[n].len = 0
		}
	}
	// At least two codes: force symbols 0, 1 (or 2) with frequency 1.
	for t.heapLen < 2 {
		n := 0
		if maxCode < 2 {
			maxCode++
			n = maxCode
		}
		t.heapLen++
		t.heap[t.heapLen] = n
		tree[n].freq = 1
		t.depth[n] = 0
		t.optLen--
		if stree != nil {
			t.staticLen -= int(stree[n].len)
		}
	}
	desc.maxCode = maxCode
	for n := t.heapLen / 2; n >= 1; n-- {
		t.pqDownHeap(tree, n)
	}
	next := elems // next internal node
	for {
		// pqremove: n = the least frequent node, m = the next one.
		n := t.heap[1]
		t.heap[1] = t.heap[t.heapLen]
		t.heapLen--
		t.pqDownHeap(tree, 1)
		m := t.heap[1]
		t.heapMax--
		t.heap[t.heapMax] = n
		t.heapMax--
		t.heap[t.heapMax] = m
		tree[next].freq = tree[n].freq + tree[m].freq
		t.depth[next] = max(t.depth[n], t.depth[m]) + 1
		tree[n].dad, tree[m].dad = uint16(next), uint16(next)
		t.heap[1] = next
		next++
		t.pqDownHeap(tree, 1)
		if t.heapLen < 2 {
			break
		}
	}
	t.heapMax--
	t.heap[t.heapMax] = t.heap[1]
	t.genBitlen(desc)
	genCodes(tree, maxCode, &t.blCount)
}

// genBitlen is gen_bitlen(): code lengths from the tree (heap[heapMax:]
// holds the nodes by increasing frequency), capped at the alphabet's
// maximum with zlib's overflow fix-up, and their cost in optLen and
// staticLen.
func (t *trees) genBitlen(desc *treeDesc) {
	tree := desc.dyn
	maxCode := desc.maxCode
	st := desc.stat
	clear(t.blCount[:])
	tree[t.heap[t.heapMax]].len = 0 // the root
	overflow := 0
	for h := t.heapMax + 1; h < heapSize; h++ {
		n := t.heap[h]
		b := int(tree[tree[n].dad].len) + 1
		if b > st.maxLength {
			b = st.maxLength
			overflow++
		}
		tree[n].len = uint16(b)
		if n > maxCode {
			continue // not a leaf
		}
		t.blCount[b]++
		xbits := 0
		if n >= st.extraBase {
			xbits = st.extra[n-st.extraBase]
		}
		f := int(tree[n].freq)
		t.optLen += f * (b + xbits)
		if st.tree != nil {
			t.staticLen += f * (int(st.tree[n].len) + xbits)
		}
	}
	if overflow == 0 {
		return
	}
	// Move overflowing leaves up: each step turns a leaf at the deepest
	// length below the maximum into a node with two leaves below it.
	for overflow > 0 {
		b := st.maxLength - 1
		for t.blCount[b] == 0 {
			b--
		}
		t.blCount[b]--
		t.blCount[b+1] += 2
		t.blCount[st.maxLength]--
		overflow -= 2
	}
	// Hand the lengths out again, longest to the least frequent leaves.
	h := heapSize
	for b := st.maxLength; b != 0; b-- {
		for n := int(t.blCount[b]); n != 0; {
			h--
			m := t.heap[h]
			if m > maxCode {
				continue
			}
			if int(tree[m].len) != b {
				t.optLen += (b - int(tree[m].len)) * int(tree[m].freq)
				tree[m].len = uint16(b)
			}
			n--
		}
	}
}

// genCodes is gen_codes(): canonical codes (bit-reversed for output) from
// the code lengths.
func genCodes(tree []node, maxCode int, count *[maxBits + 1]uint16) {
	var next [maxBits + 1]uint16
	code := uint16(0)
	for b := 1; b <= maxBits; b++ {
		code = (code + count[b-1]) << 1
		next[b] = code
	}
	for n := 0; n <= maxCode; n++ {
		l := tree[n].len
		if l == 0 {
			continue
		}
		tree[n].code = reverse(next[l], l)
		next[l]++
	}
}

// lengthRuns cuts tree's code lengths 0..maxCode into the runs that
// scan_tree() and send_tree() code (a run ends at a change of length, or
// at 6, 7 or 138 repeats), and calls f with each: its length, how many
// codes it covers, the length of the run before (−1 at first) and the
// fewest repeats a repeat code may take there (3 or 4). tree[maxCode+1]
// must hold a length that ends the last run (scanTree's guard).
func lengthRuns(tree []node, maxCode int, f func(curLen, count, prevLen, minCount int)) {
	prevLen := -1
	nextLen := int(tree[0].len)
	count := 0
	maxCount, minCount := 7, 4
	if nextLen == 0 {
		maxCount, minCount = 138, 3
	}
	for n := 0; n <= maxCode; n++ {
		curLen := nextLen
		nextLen = int(tree[n+1].len)
		count++
		if count < maxCount && curLen == nextLen {
			continue
		}
		f(curLen, count, prevLen, minCount)
		count = 0
		prevLen = curLen
		switch {
		case nextLen == 0:
			maxCount, minCount = 138, 3
		case curLen == nextLen:
			maxCount, minCount = 6, 3
		default:
			maxCount, minCount = 7, 4
		}
	}
}

// scanTree is scan_tree(): count, in the bit-length tree's frequencies,
// the run-length coded code lengths of tree.
func (t *trees) scanTree(tree []node, maxCode int) {
	tree[maxCode+1].len = 0xffff // guard
	lengthRuns(tree, maxCode, func(curLen, count, prevLen, minCount int) {
		switch {
		case count < minCount:
			t.bltree[curLen].freq += uint16(count)
		case curLen != 0:
			if curLen != prevLen {
				t.bltree[curLen].freq++
			}
			t.bltree[rep3to6].freq++
		case count <= 10:
			t.bltree[repz3to10].freq++
		default:
			t.bltree[repz11to138].freq++
		}
	})
}

// sendTree is send_tree(): write tree's code lengths, run-length coded with
// the bit-length tree (the same runs scanTree counted).
func (t *trees) sendTree(tree []node, maxCode int) {
	lengthRuns(tree, maxCode, func(curLen, count, prevLen, minCount int) {
		switch {
		case count < minCount:
			for ; count > 0; count-- {
				t.sendCode(curLen, t.bltree[:])
			}
		case curLen != 0:
			if curLen != prevLen {
				t.sendCode(curLen, t.bltree[:])
				count--
			}
			t.sendCode(rep3to6, t.bltree[:])
			t.sendBits(uint32(count-3), 2)
		case count <= 10:
			t.sendCode(repz3to10, t.bltree[:])
			t.sendBits(uint32(count-3), 3)
		default:
			t.sendCode(repz11to138, t.bltree[:])
			t.sendBits(uint32(count-11), 7)
		}
	})
}

// buildBLTree is build_bl_tree(): the bit-length tree for the two trees;
// it returns the index in blOrder of the last bit-length code to send (at
// least 3) and adds the trees' header to optLen.
func (t *trees) buildBLTree() int {
	t.scanTree(t.ltree[:], t.lDesc.maxCode)
	t.scanTree(t.dtree[:], t.dDesc.maxCode)
	t.buildTree(&t.blDesc)
	maxIndex := blCodes - 1
	for ; maxIndex >= 3; maxIndex-- {
		if t.bltree[blOrder[maxIndex]].len != 0 {
			break
		}
	}
	t.optLen += 3*(maxIndex+1) + 5 + 5 + 4
	return maxIndex
}

// sendAllTrees is send_all_trees(): the dynamic block header.
func (t *trees) sendAllTrees(lcodes, dcodes, blcodes int) {
	t.sendBits(uint32(lcodes-257), 5)
	t.sendBits(uint32(dcodes-1), 5)
	t.sendBits(uint32(blcodes-4), 4)
	for rank := range blcodes {
		t.sendBits(uint32(t.bltree[blOrder[rank]].len), 3)
	}
	t.sendTree(t.ltree[:], lcodes-1)
	t.sendTree(t.dtree[:], dcodes-1)
}

// compressBlock is compress_block(): the block's symbols with the given
// trees, then the end-of-block code.
func (t *trees) compressBlock(ltree, dtree []node) {
	for i := range t.lastLit {
		dist := int(t.dist[i])
		lc := int(t.lc[i])
		if dist == 0 {
			t.sendCode(lc, ltree)
			continue
		}
		code := int(lengthCode[lc])
		t.sendCode(code+literals+1, ltree)
		if extra := extraLBits[code]; extra != 0 {
			t.sendBits(uint32(lc-baseLength[code]), uint(extra))
		}
		dist--
		code = dCode(dist)
		t.sendCode(code, dtree)
		if extra := extraDBits[code]; extra != 0 {
			t.sendBits(uint32(dist-baseDist[code]), uint(extra))
		}
	}
	t.sendCode(endBlock, ltree)
}

// sendCode is send_code().
func (t *trees) sendCode(c int, tree []node) {
	t.sendBits(uint32(tree[c].code), uint(tree[c].len))
}

// sendBits is send_bits(): append the low n (≤ 16) bits of v.
func (t *trees) sendBits(v uint32, n uint) {
	t.acc |= uint64(v) << t.nacc
	t.nacc += n
	if t.nacc >= 32 {
		if t.n+4 <= len(t.out) {
			binary.LittleEndian.PutUint32(t.out[t.n:], uint32(t.acc))
		} else {
			t.full = true
		}
		t.n += 4
		t.acc >>= 32
		t.nacc -= 32
	}
}

// windup is bi_windup(): write the pending bits, padding the last byte with
// zero bits.
func (t *trees) windup() {
	for t.nacc > 0 {
		if t.n < len(t.out) {
			t.out[t.n] = byte(t.acc)
		} else {
			t.full = true
		}
		t.n++
		t.acc >>= 8
		t.nacc -= min(t.nacc, 8)
	}
	t.acc = 0
}

// putBytes writes p at a byte boundary; it reports false (and writes
// nothing) when p does not fit.
func (t *trees) putBytes(p []byte) bool {
	if t.full || t.n+len(p) > len(t.out) {
		t.full = true
		return false
	}
	t.n += copy(t.out[t.n:], p)
	return true
}
