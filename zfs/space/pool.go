package space

import (
	"encoding/binary"

	"github.com/ddtsim/ddtsim/zfs/compress/lz4"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// mosCopies: the MOS's blocks are written with spa_max_replication()
// copies, 3 (dmu_write_policy() for the MOS; zfs-semantics §2.6).
const mosCopies = 3

// The pool's own metadata after a fresh pool received one copy and was
// synced (the MOS: pool configuration, DSL directories and datasets,
// space maps of the metaslabs written, feature and history objects), as
// PSIZE of its blocks, measured on the golden pools: 26 blocks (2.2 and
// later) or 32 (2.1) at ashift 12, 69 sectors at ashift 9. It grows
// little with the data (a space map block per metaslab written): on
// pools of terabytes it is noise, on the golden pools of 40–60 MB it is
// 0.5–1%.
var (
	mosNewer = mosBlocks(22, 2, 2)
	mosOlder = mosBlocks(28, 2, 2)
)

// mosBlocks lists small blocks of 1 KiB, 4 KiB and 2.5 KiB, in that
// order of counts.
func mosBlocks(k1, k4, k25 int) []uint64 {
	var b []uint64
	for range k1 {
		b = append(b, 1024)
	}
	for range k4 {
		b = append(b, 4096)
	}
	for range k25 {
		b = append(b, 2560)
	}
	return b
}

// newer reports whether p models OpenZFS 2.2 or later (DDTLeaf32K marks
// those rows of the release table).
func newer(p *zio.Policy) bool { return p.Release.DDTLeaf32K }

// MOS returns the pool's own metadata (one copy of each block) on the
// pool of p: each block's PSIZE rounded as metadata's is (what LUSED
// counts of it), then allocated.
func MOS(p *zio.Policy) Blocks {
	list := mosOlder
	if newer(p) {
		list = mosNewer
	}
	md := Metadata(p)
	var b Blocks
	for _, c := range list {
		b.Add(block(md, 16<<10, c))
	}
	return b
}

// zilBlock is what zpool list counts in ALLOC beyond every block's raw
// size, per dataset written with a sync at its end (cp's last fsync, dd's
// conv=fsync on each volume): one ZIL block, allocated and not charged to
// the dataset (zdb -bb: "ZIL intent log"), 128 KiB in 2.2 and later (its
// first log block is sized for the records it holds), 4 KiB in 2.1;
// measured on every golden pool (one for the file systems, one per
// volume).
func zilBlock(p *zio.Policy) uint64 {
	if newer(p) {
		return 128 << 10
	}
	return 4 << 10
}

// Dnode geometry (include/sys/dnode.h): 512-byte dnodes (dnodesize=legacy,
// the default), 16 KiB blocks of the meta-dnode (DNODE_BLOCK_SHIFT 14),
// whose tree has 6 levels from the start (dmu_objset_create_impl(): enough
// for DN_MAX_OBJECT).
const (
	dnodeSize       = 512
	dnodeBlock      = 16 << 10
	dnodesPerBlock  = dnodeBlock / dnodeSize
	metaDnodeLevels = 6
)

// The expected lz4 output of a dnode block, bytes: a dnode in use (its
// header, block pointer and system attributes: times alike, sizes, ids)
// costs dnodeBytes, a free one almost nothing.
const (
	dnodeBytes  = 80
	dnodeHeader = 64
)

// zplFixed is the number of objects every ZPL dataset has besides what is
// copied into it: the master node, the SA master node, the SA attribute
// registration and layouts, the delete queue, the root directory and the
// .zfs/shares directory (zfs_create_fs()).
const zplFixed = 7

// fixedZAPs are the PSIZE of the blocks of the dataset's fixed objects
// that are not embedded, as zdb -bb lists them on the golden input's pool,
// but the master node (MasterNode): the SA attribute registration (1.5K),
// the SA layouts (a fat ZAP: header and leaf, 4K each), and one more (the
// delete queue, the shares directory: an empty file system's USEDDS on the
// golden zvol pools asks for it).
var fixedZAPs = []uint64{1536, 4096, 4096, 4096}

// masterNodeNames are the entries of a new file system's master node
// (MASTER_NODE_OBJ), in the order zfs_create_fs() adds them
// (module/os/linux/zfs/zfs_znode_os.c): the zplprops nvlist but the
// version (zfs_ioctl.c: zfs_fill_zplprops_impl()), then VERSION, SA_ATTRS,
// DELETE_QUEUE and ROOT; with their values (0 for the properties, the
// ZPL version, small object numbers).
var masterNodeNames = []struct {
	name  string
	value uint64
}{
	{"normalization", 0}, {"utf8only", 0}, {"casesensitivity", 0},
	{"VERSION", 5}, {"SA_ATTRS", 32}, {"DELETE_QUEUE", 33}, {"ROOT", 34},
}

// defaultQuotaNames are the master node entries 2.4.0 adds after
// casesensitivity (Release.ZPLDefaultQuotas).
var defaultQuotaNames = []string{"defaultuserquota", "defaultgroupquota", "defaultprojectquota",
	"defaultuserobjquota", "defaultgroupobjquota", "defaultprojectobjquota"}

// MasterNode returns the master node of a new ZPL file system (one copy,
// under md): a microzap of 7 entries, 512 bytes, up to 2.3; of 13 from
// 2.4.0, which grows it to 1 KiB (zap_micro.c: zap_lockdir_impl() adds
// 512 bytes to a full microzap). At ashift 12 neither compresses into
// what the release allows (112 bytes), so it is stored whole: the 512
// bytes of LREFER by which an empty 2.4.4 file system exceeds a 2.3.2 one
// on the golden zvol pools (43,520 against 43,008), USEDDS unchanged.
func MasterNode(md *zio.Policy) Blocks {
	type ent struct {
		name  string
		value uint64
	}
	var ents []ent
	for i, e := range masterNodeNames {
		ents = append(ents, ent{e.name, e.value})
		if i == 2 && md.Release.ZPLDefaultQuotas {
			for _, q := range defaultQuotaNames {
				ents = append(ents, ent{q, 0})
			}
		}
	}
	size := mzapMinBlock
	for size/mzapEntLen-1 < len(ents) {
		size += mzapMinBlock
	}
	buf := make([]byte, size)
	binary.LittleEndian.PutUint64(buf[0:], 1<<63|3)  // mz_block_type: ZBT_MICRO
	binary.LittleEndian.PutUint64(buf[8:], 0x1e0701) // mz_salt: a few random bytes
	for i, e := range ents {
		c := buf[(i+1)*mzapEntLen:]
		binary.LittleEndian.PutUint64(c, e.value)
		copy(c[14:14+mzapNameLen-1], e.name)
	}
	var z lz4.Compressor
	out, ok := z.Size(buf, int(md.MaxCompressedSize(uint64(size))))
	if !ok {
		out = size + 1 // stored uncompressed
	}
	return block(md, uint64(size), uint64(out))
}

// Volume returns the metadata of a volume besides its indirect blocks
// (one copy of each block, under md): its objset block, a dnode block (the
// zvol object and its properties ZAP, embedded: zvol_create_cb()) and
// the meta-dnode's chain of indirect blocks.
func Volume(md *zio.Policy) Blocks {
	b := block(md, dnodeBlock, dnodeHeader+2*dnodeBytes)
	for range metaDnodeLevels - 1 {
		b.Add(IndirectBlock(md, L1{N: 1}))
	}
	b.Add(Blocks{Count: 1, LSize: 4096, PSize: 4096, ASize: md.Vdev.ASize(4096)})
	return b
}

// Dataset returns the metadata of a ZPL dataset holding objects objects
// besides its fixed ones (one copy of each block, under md): the dnode
// blocks (object numbers are handed out in chunks per CPU, so a few
// blocks are left part empty: one more block is counted), the meta-dnode's
// indirect blocks, the objset block (4 KiB, not compressed) and the fixed
// objects' blocks.
func Dataset(md *zio.Policy, objects uint64) Blocks {
	n := objects + zplFixed
	blocks := (n+dnodesPerBlock-1)/dnodesPerBlock + 1
	var b Blocks
	for i := range blocks {
		used := min(dnodesPerBlock, n-min(n, i*dnodesPerBlock))
		b.Add(block(md, dnodeBlock, dnodeHeader+used*dnodeBytes))
	}
	// The meta-dnode's tree: one block pointer per dnode block at level
	// 1, and a single chain above.
	span := uint64(1)
	for range metaDnodeLevels - 1 {
		k := (blocks + span - 1) / span
		for k > 0 {
			c := min(k, BPsPerBlock)
			b.Add(IndirectBlock(md, L1{N: uint32(c)}))
			k -= c
		}
		span *= BPsPerBlock
	}
	b.Add(Blocks{Count: 1, LSize: 4096, PSize: 4096, ASize: md.Vdev.ASize(4096)})
	b.Add(MasterNode(md))
	for _, ps := range fixedZAPs {
		b.Add(Blocks{Count: 1, LSize: ps, PSize: ps, ASize: md.Vdev.ASize(ps)})
	}
	return b
}
