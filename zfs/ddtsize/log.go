package ddtsize

// The dedup table as `zfs list` and `zpool list` see it right after a copy
// to a fast-dedup pool (2.3+): most entries still wait in the dedup log.
//
// Each txg, the entries the txg changed are appended to the active log
// object as records of 120 bytes (ddt_log.c: ddt_log_begin(),
// ddt_log_entry(): a ddt_log_record_t header, the 40-byte key and the
// 72-byte flat phys, P2ALIGN'd to 8), packed into the object's 128 KiB
// blocks (dmu_object_alloc(…, SPA_OLD_MAXBLOCKSIZE, …)) that no record
// straddles, 1092 records a block; a txg starts a new block (its records
// begin at ddl_length, a whole number of blocks). The blocks are MOS
// metadata: compressed with the metadata compressor, 3 copies. The ZAPs
// get nothing until the log is swapped: at the end of a txg whose flushing
// log is empty, once the active log is zfs_dedup_log_txg_max = 8 txgs old
// (ddt_log_swap(): the new active log's age counts from the swap). From the
// next txg on, each txg moves max(ingest rate, 1000) entries of the
// flushing log into the ZAPs (ddt.c: ddt_sync_flush_log_incremental()),
// and the flushing log's blocks are freed when it is empty
// (ddt_log_truncate()). The same code runs in 2.4.4 (ddt_log.c, ddt.c of
// the zfs-2.4.4 tag; only the flush's passes changed in 2.3.4).
//
// So what the pool holds when zfs list runs depends on how many txgs the
// copy took and how many passed since: a copy of fewer than 8 txgs, listed
// at once, has every entry in the log and empty (not even created) ZAPs.
// The golden pools show it: `zpool status -D` taken with zfs list counts
// 144 bytes in core per entry (the log's DDT_LOG_ENTRY_FLAT_SIZE) on the
// one-disk 2.3.2 pools, the log objects were created in txg 9 and swapped
// in txg 17, after the listing (zdb -DD after the export), and the dedup
// pool's USEDCHILD exceeds the same pool's without dedup by 72–84 KiB (one
// or two log blocks of about 24 KiB, 3 copies) where the flushed ZAPs take
// 240 KiB.
//
// Listed models that state for a copy of DataBytes, a txg per 256 MiB
// (txgDataBytes), each entry logged once, in the txg its first block was
// written, listed listAfterTxgs txgs after the copy's last.

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Log geometry (include/sys/ddt_impl.h, module/zfs/ddt_log.c).
const (
	logBlock        = 128 << 10                       // SPA_OLD_MAXBLOCKSIZE: the log object's block size
	logRecord       = 8 + 8*ddtKeyWords + ddtFlatPhys // ddt_log_record_t + key + flat phys: 120
	logRecsPerBlock = logBlock / logRecord            // 1092
	dlrEntry        = 1                               // DLR_ENTRY
	classDuplicate  = 1                               // DDT_CLASS_DUPLICATE
	classUnique     = 2                               // DDT_CLASS_UNIQUE
	// listAfterTxgs is how many txgs the model lets pass between the
	// copy's last txg and zfs list: the one `zpool sync` (or the txg
	// timeout) forces.
	listAfterTxgs = 1
	// listObjectsTxg is the objects a copy creates per txg (ListedTable).
	listObjectsTxg = 300
)

// Listed is the dedup table of a fast-dedup pool (2.3+) as zfs list and
// zpool list see it right after the copy (bytes are allocated bytes,
// every copy, as dspace counts them).
type Listed struct {
	// Txgs is the number of txgs the copy is modelled to take; the
	// listing comes listAfterTxgs later.
	Txgs int `json:"txgs"`
	// Logged is the entries still in the dedup log (active and flushing),
	// Flushed those already in the ZAPs.
	Logged  uint64 `json:"logged"`
	Flushed uint64 `json:"flushed"`
	// LogBlocks is the log objects' level-0 blocks on disk.
	LogBlocks int `json:"log_blocks"`
	// LogOnDisk is the log objects' allocated bytes, ZAPOnDisk the ZAPs'
	// (the flushed entries'), OnDisk their sum.
	LogOnDisk uint64 `json:"log_on_disk"`
	ZAPOnDisk uint64 `json:"zap_on_disk"`
	OnDisk    uint64 `json:"on_disk"`
}

// logTimeline replays the log's swaps and flushes for n entries written
// evenly over txgs txgs and listed after listAfterTxgs more: it returns
// the entries flushed into the ZAPs by then, and the record counts of the
// blocks of the logs still on disk.
func logTimeline(n uint64, txgs int) (flushed uint64, blocks []int) {
	type logObj struct {
		entries uint64 // entries in its tree
		blocks  []int  // records in each block on disk
		first   int    // ddl_first_txg
	}
	var active, flushing logObj
	var ingest, flushRate int32
	ewma := func(val, prev int32) int32 { return max(0, prev+(val-prev)/flushFlowTxgs) }
	created := false
	var written uint64
	for txg := 1; txg <= txgs+listAfterTxgs; txg++ {
		// ddt_sync_table_log(): this txg's entries.
		var k uint64
		if txg <= txgs {
			k = n*uint64(txg)/uint64(txgs) - written
			written += k
		}
		if k > 0 {
			if !created { // ddt_log_create(): both logs, aged from now
				created = true
				active.first, flushing.first = txg, txg
			}
			active.entries += k
			for r := k; r > 0; r -= min(r, logRecsPerBlock) {
				active.blocks = append(active.blocks, int(min(r, logRecsPerBlock)))
			}
		}
		ingest = ewma(int32(min(k, 1<<30)), ingest)
		if !created {
			continue
		}
		// ddt_sync_flush_log_incremental(): the share of this txg.
		if flushing.entries > 0 {
			take := min(flushing.entries, uint64(max(ingest, flushEntriesMin)))
			flushing.entries -= take
			flushed += take
			flushRate = ewma(int32(min(take, 1<<30)), flushRate)
			if flushing.entries == 0 { // ddt_log_truncate()
				flushing.blocks = nil
			}
		}
		// ddt_log_swap() on age.
		if flushing.entries == 0 && active.entries > 0 && txg >= active.first+logTxgMax {
			flushing, active = active, logObj{first: txg, blocks: flushing.blocks}
		}
	}
	return flushed, append(active.blocks, flushing.blocks...)
}

// ListedTable models the table of unique and duplicate entries as zfs list
// sees it right after the copy (see the file comment). Release rows
// without fast dedup have no log: the ZAPs are written in the txg, and
// Listed is the flushed table (Estimate).
//
// volumes > 0 says the data went to that many volumes, created and
// written one after another: each `zfs create -V` is a sync task that
// waits for its txg (dsl_synctask.c: dsl_sync_task_common()), so the copy
// takes at least a txg a volume. (The golden 2.3.2 pool of 18 volumes
// logged its entries over txgs 107–115 and had them all in its ZAPs when
// listed; a txg a volume gives 95% flushed, the rest in one log block.)
//
// objects is the files, directories and links the copy creates: a copy
// of many small files takes many txgs whatever its size (each txg closes
// after zfs_txg_timeout = 5 s); the model counts a txg per listObjectsTxg
// objects. That rate is fitted, not derived: the golden 2.3.2 pool of
// about 6,400 objects (space case tree-gzip-raidz1x4-a12-dedup) logged
// its first DDT entry in txg 25 and swapped its log in txg 33, partly
// flushed when listed, where the pools of about 400 objects logged from
// txg 9 and listed everything still in the log.
func ListedTable(unique, duplicate uint64, sp Params, volumes, objects uint64) Listed {
	data := sp.DataBytes
	if data == 0 {
		data = 1 << 40
	}
	txgs := int(min(1<<20, max(1, volumes, (data+txgDataBytes-1)/txgDataBytes, objects/listObjectsTxg)))
	n := unique + duplicate
	if !sp.Release.FastDedup || n == 0 {
		r := Estimate(unique, duplicate, sp)
		return Listed{Txgs: txgs, Flushed: n, ZAPOnDisk: r.OnDisk, OnDisk: r.OnDisk}
	}
	flushed, blocks := logTimeline(n, txgs)
	l := Listed{Txgs: txgs, Logged: n - flushed, Flushed: flushed, LogBlocks: len(blocks)}
	if flushed > 0 {
		// The flushed entries, in the classes' proportion.
		fu := uint64(float64(unique) * float64(flushed) / float64(n))
		l.ZAPOnDisk = Estimate(fu, flushed-fu, sp).OnDisk
	}
	m := modelFor(sp)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.logSizes == nil {
		m.logSizes = map[int]uint64{}
		m.logMeta = newMetaWriter(sp.Release, sp.Vdev, logBlock)
	}
	unidup := float64(duplicate) / float64(n)
	for _, recs := range blocks {
		sz, ok := m.logSizes[recs]
		if !ok {
			sz = m.logMeta.level0(m.logBlock(rand.New(rand.NewPCG(uint64(recs), 0x106)), recs, unidup))
			m.logSizes[recs] = sz
		}
		l.LogOnDisk += sz
	}
	// The log object's indirect blocks: one L1 per 1024 blocks once they
	// outgrow the dnode's pointers (128 KiB blocks; laid out as the ZAPs'
	// indirect blocks are, which compress alike).
	if len(blocks) > 1 {
		l1 := (len(blocks) + 1023) / 1024
		l.LogOnDisk += uint64(l1) * m.logMeta.indirect(m.indirectBlockOf(rand.New(rand.NewPCG(uint64(len(blocks)), 0x1d)), min(len(blocks), 1024), logBlock, logBlock))
	}
	l.OnDisk = l.LogOnDisk + l.ZAPOnDisk
	return l
}

// logBlock lays out a block of the dedup log holding recs records
// (ddt_log_entry(): dlr_info, the key, the flat phys; the rest zero,
// DLR_INVALID), their entries drawn as the leaves' are, a share dup of
// them in the duplicate class.
func (m *sizeModel) logBlock(rng *rand.Rand, recs int, dup float64) []byte {
	le, be := binary.LittleEndian, binary.BigEndian
	b := make([]byte, logBlock)
	for i := 0; i < recs; i++ {
		r := b[i*logRecord:]
		class, refcnt, sc := uint64(classUnique), uint64(1), 0
		if rng.Float64() < dup {
			class, refcnt, sc = classDuplicate, 2+rng.Uint64N(3), 1
		}
		le.PutUint64(r, dlrEntry|logRecord<<8|class<<56) // entry type ZAP (0)
		lsize, psize := m.shapes[sc].draw(rng)
		comp := uint64(compressLZ4)
		if psize == lsize {
			comp = compressOff
		}
		// The key as it is in memory: checksum words, then ddk_prop.
		for w := 0; w < 4; w++ {
			be.PutUint64(r[8+8*w:], rng.Uint64())
		}
		le.PutUint64(r[40:], (lsize>>9-1)|(psize>>9-1)<<16|comp<<32)
		phys := r[48 : 48+ddtFlatPhys]
		asec := m.vdev.ASize(psize) >> 9
		for d := 0; d < m.copies; d++ {
			le.PutUint64(phys[16*d:], asec)
			le.PutUint64(phys[16*d+8:], (8192+rng.Uint64N(m.sectors))/m.align*m.align)
		}
		le.PutUint64(phys[48:], refcnt)
		le.PutUint64(phys[56:], 4+rng.Uint64N(m.txgs))
		le.PutUint64(phys[64:], 1_750_000_000+rng.Uint64N(m.seconds))
	}
	return b
}

// ListedHistogram is ListedTable for the classes of histogram h written
// under policy p (as EstimateHistogram reads them), dataBytes of data
// (Params.DataBytes) over volumes volumes (0 for files) or in objects
// files, directories and links.
func ListedHistogram(h *ddt.Histogram, p *zio.Policy, dataBytes, volumes, objects uint64) Listed {
	unique, dup := Classes(h)
	return ListedTable(unique.Blocks, dup.Blocks, Params{Release: p.Release, Vdev: p.Vdev, Copies: p.Copies,
		DataBytes: dataBytes, Unique: ShapeOf(unique), Duplicate: ShapeOf(dup)}, volumes, objects)
}
