package zio

import "fmt"

// DefaultVolBlockSize is the volblocksize `zfs create -V` gives a volume
// when none is named, bytes: the release's ZVOL_DEFAULT_BLOCKSIZE (8K up to
// 2.1, 16K from 2.2.0), which from 2.1.0 zfs create doubles while twice it
// still fits in the pool's widest minimum allocation
// (cmd/zfs/zfs_main.c: default_volblocksize()): over the top-level vdevs,
// dRAID D × sector, raidz1 2 sectors, raidz2/3 4 sectors, a disk or
// mirror one sector. So raidz2 of 4K sectors gets 16K on 2.1, dRAID with 8
// data disks of 4K gets 32K; plain disks and mirrors keep the default.
func DefaultVolBlockSize(r *Release, v Vdev) uint32 {
	bs := uint64(r.VolBlockSize)
	if !r.VolBlockSizeByPool || v == nil {
		return uint32(bs)
	}
	pl, ok := v.(*Pool)
	if !ok {
		pl = PoolOf(v)
	}
	asize := uint64(MinRecordSize)
	for _, t := range pl.top {
		asize = max(asize, allocWidth(t.v))
	}
	for bs*2 <= asize {
		bs *= 2
	}
	return uint32(bs)
}

// allocWidth is default_volblocksize()'s "minimum allocation width" of one
// top-level vdev, bytes.
func allocWidth(v Vdev) uint64 {
	switch v := v.(type) {
	case DRAID:
		return uint64(v.Data) << v.Ashift
	case RAIDZ:
		if v.Parity == 1 {
			return 2 << v.Ashift
		}
		return 4 << v.Ashift
	}
	return v.MinAlloc()
}

// CheckVolBlockSize checks a volblocksize as zfs create -V does
// (module/zfs/zvol.c: zvol_check_volblocksize(), libzfs
// zfs_valid_proplist()): a power of two from 512 bytes up to
// zfs_max_recordsize (above 128K the large_blocks feature is needed, which
// new pools have enabled).
func CheckVolBlockSize(bs uint64, r *Release) error {
	if bs < MinRecordSize || bs > uint64(r.MaxRecordSize) || bs&(bs-1) != 0 {
		return fmt.Errorf("invalid volblocksize %d (accepted: a power of two from 512 to %d)", bs, r.MaxRecordSize)
	}
	return nil
}
