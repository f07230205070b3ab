package zio

// FileRecords returns the block size (bytes) and record count of a file of
// size bytes on a dataset with the given recordsize (zfs-semantics §3.1;
// module/zfs/zfs_vnops.c: zfs_write(), module/zfs/dnode.c:
// dnode_set_blksz()): a file no larger than recordsize is one block of its
// size rounded up to 512; a larger one is ceil(size/recordsize) blocks of
// exactly recordsize.
func FileRecords(size uint64, recordsize uint32) (lsize uint32, nrec uint64) {
	rs := uint64(recordsize)
	if size <= rs {
		return uint32((size + MinRecordSize - 1) &^ (MinRecordSize - 1)), 1
	}
	return recordsize, (size + rs - 1) / rs
}

// ZvolRecords returns the block size (bytes) and block count of a file of
// size bytes stored as a volume (zfs create -V) of the given volblocksize:
// every block is exactly volblocksize bytes, whatever the size, and the last
// one is zero-padded (zfs-semantics §3.2; module/zfs/zvol.c: a volume's
// single object, ZVOL_OBJ, is created with the volblocksize as its data
// block size, zvol_create_cb(), and never regrown). So 5000 bytes are one
// 16K block, and 20000 bytes two; unlike a file (FileRecords), a small
// volume is not cut to a multiple of 512. The size is the volume's: the
// file's size, rounded up to volblocksize as zfs create -V requires of
// volsize.
func ZvolRecords(size uint64, volblocksize uint32) (lsize uint32, nrec uint64) {
	bs := uint64(volblocksize)
	return volblocksize, (size + bs - 1) / bs
}
