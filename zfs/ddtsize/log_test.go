package ddtsize

import (
	"testing"

	"github.com/ddtsim/ddtsim/zfs/zio"
)

// TestLogGeometry: 120-byte records, 1092 to a 128 KiB block (ddt_log.c:
// ddt_log_begin(): sizeof (ddt_log_record_t) 8 + ddt_key_t 40 + the flat
// phys 72, aligned to 8).
func TestLogGeometry(t *testing.T) {
	t.Parallel()
	if logRecord != 120 || logRecsPerBlock != 1092 {
		t.Errorf("record %d bytes, %d a block; want 120, 1092", logRecord, logRecsPerBlock)
	}
}

// TestLogTimeline checks the log's swaps and flushes against what
// ddt_log_swap() and ddt_sync_flush_log_incremental() do: nothing leaves
// the log before it is 8 txgs old; the txg after the swap flushes up to
// 1000 entries; a txg's entries take their own blocks.
func TestLogTimeline(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n            uint64
		txgs         int
		flushed      uint64
		blocks       int
		blocksAtMost int
	}{
		{518, 1, 0, 1, 1},      // the golden one-disk pools: one txg, all in the log
		{518, 7, 0, 7, 7},      // listed in txg 8: not yet 8 txgs old
		{518, 9, 518, 0, 0},    // swapped at the end of txg 9, flushed whole in txg 10, truncated
		{5000, 9, 1000, 9, 9},  // swapped with 5000: 1000 flushed in txg 10, its blocks kept
		{1092, 1, 0, 1, 1},     // exactly one full block
		{1093, 1, 0, 2, 2},     // one record more: a second block
		{100000, 1, 0, 92, 92}, // ⌈100000/1092⌉
	} {
		f, b := logTimeline(c.n, c.txgs)
		if f != c.flushed || len(b) != c.blocks {
			t.Errorf("%d entries over %d txgs: flushed %d, %d blocks; want %d, %d", c.n, c.txgs, f, len(b), c.flushed, c.blocks)
		}
		var recs uint64
		for _, r := range b {
			if r < 1 || r > logRecsPerBlock {
				t.Errorf("%d entries over %d txgs: a block of %d records", c.n, c.txgs, r)
			}
			recs += uint64(r)
		}
		if recs+f < c.n {
			t.Errorf("%d entries over %d txgs: %d on disk + %d flushed", c.n, c.txgs, recs, f)
		}
	}
}

// TestListedGolden: the DDT as listed right after the copy against what
// the golden one-disk 2.3.2 and 2.4.4 pools show: their USEDCHILD less
// the same pool's without dedup is 84 KiB (lz4-128k-a12-dedup: 405,504 −
// 319,488; v24: 405,504 − 331,776 = 72 KiB) and 72 KiB
// (off-128k-a12-never-dedup: 393,216 − 319,488), where zdb -DD after the
// export shows 240 KiB of ZAPs. The model, all entries in one log
// block, must lie within a 4 KiB block (3 copies) of that range, and far
// below the flushed table.
func TestListedGolden(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"2.3.2", "2.4.4"} {
		r, err := zio.LookupRelease(rel)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := zio.NewDisk(12)
		for _, c := range []struct {
			u, dup uint64
			shape  BlockShape
		}{
			{402, 116, BlockShape{LSize: 67584, PSize: 44800}},   // lz4: 25.9M/17.2M over 402
			{405, 118, BlockShape{LSize: 131072, PSize: 131072}}, // off: 128K records
		} {
			sp := Params{Release: r, Vdev: d, Copies: 1, DataBytes: 30 << 20, Unique: c.shape, Duplicate: c.shape}
			l := ListedTable(c.u, c.dup, sp, 0, 400)
			if l.Flushed != 0 || l.Logged != c.u+c.dup || l.LogBlocks != 1 {
				t.Errorf("%s %d entries: %+v, want all logged in one block", rel, c.u+c.dup, l)
			}
			if l.OnDisk < (72-12)<<10 || l.OnDisk > (84+12)<<10 {
				t.Errorf("%s %d entries: listed %d bytes, real 72-84 KiB", rel, c.u+c.dup, l.OnDisk)
			}
			if f := Estimate(c.u, c.dup, sp).OnDisk; f < 2*l.OnDisk {
				t.Errorf("%s: flushed %d not well above listed %d", rel, f, l.OnDisk)
			}
		}
	}
}

// A log of more than 256 blocks (some 280,000 entries at most in the log)
// has its 128 KiB indirect blocks of up to 1024 pointers: found by a new
// user, the model laid them out in the ZAPs' 32 KiB block and panicked
// (index out of range) past 256 log blocks, on a full scan of 136 MiB of
// unique 512-byte records as on --read's upper bound of a large estate.
// The listed table grows with the entries, and the log's part by about a
// 128 KiB block a 1092 entries.
func TestListedManyLogBlocks(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"2.3.2", "2.4.4"} {
		r, err := zio.LookupRelease(rel)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := zio.NewDisk(12)
		shape := BlockShape{LSize: 512, PSize: 512}
		var last Listed
		for _, n := range []uint64{200_000, 276_480, 300_000, 2_000_000} {
			sp := Params{Release: r, Vdev: d, Copies: 1, DataBytes: n * 512, Unique: shape, Duplicate: shape}
			l := ListedTable(n, 0, sp, 0, 2)
			if l.Logged+l.Flushed != n || l.OnDisk <= last.OnDisk || l.LogOnDisk < uint64(l.LogBlocks)*(4<<10) {
				t.Errorf("%s, %d entries: %+v (before: %+v)", rel, n, l, last)
			}
			last = l
		}
		if last.LogBlocks <= 256 {
			t.Errorf("%s: %d log blocks; the test wants more than 256", rel, last.LogBlocks)
		}
	}
}
