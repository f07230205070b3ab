package analyzer

// ZvolRecords returns the block size (bytes) and block count of a file of
// size bytes stored as a volume (zfs create -V) of the given volblocksize:
// every block is exactly volblocksize bytes, whatever the size, and the last
// one is zero-padded (zfs-semantics §3.2; module/zfs/zvol.c: a volume's
// single object, ZVOL_OBJ, is created with the volblocksize as its data
// block size, zvol_create_cb(), and never regrown). So 5000 bytes are one
// 16K block, and 20000 bytes two; unlike a file (Records), a small volume is
// not cut to a multiple of 512. The size is the volume's: the file's size,
// rounded up to volblocksize as zfs create -V requires of volsize.
func ZvolRecords(size uint64, volblocksize uint32) (lsize uint32, nrec uint64) {
	bs := uint64(volblocksize)
	return volblocksize, (size + bs - 1) / bs
}

// records cuts a file of size bytes into blocks: as a file (Records), or
// with Options.Zvol as a volume (ZvolRecords), the policy's RecordSize then
// being the volblocksize.
func (s *scan) records(size uint64) (lsize uint32, nrec uint64) {
	if s.opts.Zvol {
		return ZvolRecords(size, s.opts.Policy.RecordSize)
	}
	return Records(size, s.opts.Policy.RecordSize)
}
