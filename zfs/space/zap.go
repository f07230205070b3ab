package space

import (
	"encoding/binary"
	"sync"

	"github.com/ddtsim/ddtsim/zfs/compress/lz4"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Microzap geometry (include/sys/zap_impl.h, zap_micro.c).
const (
	mzapEntLen   = 64        // MZAP_ENT_LEN: one chunk; the block's first holds the header
	mzapNameLen  = 50        // MZAP_NAME_LEN: a name and its NUL; longer names need a fat ZAP
	mzapMinBlock = 512       // a new directory's block (dnode_allocate(): 1 << zfs_default_bs)
	mzapMaxBlock = 128 << 10 // zap_micro_max_size (2.2+) and MZAP_MAX_BLKSZ (earlier)
)

// Fat ZAP geometry (zap.c, zap_leaf.c): 16 KiB blocks (fzap_default_block_shift
// 14), a leaf's chunks of 24 bytes after its header and hash table, a name
// in array chunks of 21 bytes.
const (
	fzapBlock      = 16 << 10
	leafChunks     = (fzapBlock-2*(fzapBlock/32))/24 - 2 // ZAP_LEAF_NUMCHUNKS: 638
	leafArrayBytes = 21                                  // ZAP_LEAF_ARRAY_BYTES
	// leafFill is how full leaves are on average: a leaf splits in two when
	// full, so a directory's leaves range from half full to full.
	leafFill = 0.70
	// leafBytesPerChunk is the expected lz4 output per used chunk of a
	// leaf (entry chunks carry a 64-bit hash; names compress a little),
	// leafBase that of the leaf header and hash table.
	leafBytesPerChunk = 8
	leafBase          = 900
	fzapHeaderPSize   = 1024 // the header block: the pointer table embedded in it
)

// Names lists a directory's entries: Len of them, Name(i) the i-th (valid
// until the next call).
type Names interface {
	Len() int
	Name(i int) []byte
}

// mzapWork is what microzap builds and compresses a block with (a
// 128 KiB buffer, 32 KiB of lz4 tables), reused through mzapPool.
type mzapWork struct {
	buf [mzapMaxBlock]byte
	lz4 lz4.Compressor
}

var mzapPool = sync.Pool{New: func() any { return new(mzapWork) }}

// Dir returns the blocks (one copy each, under the metadata policy md) of
// the ZAP object of a directory whose entries are names, as the ZPL
// creates it entry by entry: a microzap (zap_micro.c) while every name is
// under 50 bytes and the entries fit in a 128 KiB block, doubling from
// 512 bytes as it fills (one 64-byte chunk an entry, one for the header);
// else a fat ZAP of 16 KiB leaves and a header block, with an L1
// indirect block above them. A microzap's compressed size is that of a
// block built as mzap_addent() fills it (entries in the order given, the
// object numbers and salt made up: they change a few bytes); a fat ZAP's
// is an expected size (leafFill, leafBytesPerChunk).
func Dir(md *zio.Policy, names Names) Blocks {
	n := names.Len()
	micro := n+1 <= mzapMaxBlock/mzapEntLen
	for i := 0; i < n && micro; i++ {
		micro = len(names.Name(i)) < mzapNameLen
	}
	if micro {
		return microzap(md, names)
	}
	chunks := 0
	for i := range n {
		chunks += 2 + (len(names.Name(i))+1+leafArrayBytes-1)/leafArrayBytes
	}
	leaves := max(1, int(float64(chunks)/(leafChunks*leafFill)+0.999))
	var b Blocks
	perLeaf := uint64(leafBase + chunks/leaves*leafBytesPerChunk)
	for range leaves {
		b.Add(block(md, fzapBlock, perLeaf))
	}
	b.Add(block(md, fzapBlock, fzapHeaderPSize))
	b.Add(IndirectBlock(md, L1{N: uint32(leaves + 1)}))
	return b
}

// microzap is Dir of a directory that stays a microzap.
func microzap(md *zio.Policy, names Names) Blocks {
	n := names.Len()
	size := mzapMinBlock
	for size/mzapEntLen-1 < n {
		size *= 2
	}
	w := mzapPool.Get().(*mzapWork)
	defer mzapPool.Put(w)
	buf := w.buf[:size]
	clear(buf)
	binary.LittleEndian.PutUint64(buf[0:], 1<<63|3)  // mz_block_type: ZBT_MICRO
	binary.LittleEndian.PutUint64(buf[8:], 0x1e0701) // mz_salt: pointers XORed (mzap_create_impl()): a few random bytes
	for i := range n {
		e := buf[(i+1)*mzapEntLen:]
		// mze_value: ZFS_DIRENT_MAKE(DT_REG, object)
		binary.LittleEndian.PutUint64(e, 8<<60|uint64(1000+i))
		copy(e[14:14+mzapNameLen-1], names.Name(i))
	}
	out, ok := w.lz4.Size(buf, int(md.MaxCompressedSize(uint64(size))))
	if !ok {
		out = size + 1 // stored uncompressed
	}
	return block(md, uint64(size), uint64(out))
}
