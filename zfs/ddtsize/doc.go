// Package ddtsize models the size of the real dedup table (DDT) a pool
// would build for a DDT histogram: what `zdb -DD` prints per DDT object as
// dspace (on disk) and mspace (in core), and `zpool status -D` as their
// sum, and whether that table stays cached in the ARC.
//
// It follows OpenZFS's layout and write path of the DDT's ZAP objects:
//   - size.go: one fat ZAP per class (module/zfs/ddt.c: ddt_class_t;
//     ddt_zap.c: ddt_zap_create(), ddt_zap_compress(); zap.c, zap_leaf.c;
//     include/sys/zap_impl.h, zap_leaf.h, ddt.h, ddt_impl.h), legacy
//     ("trad") and fast-dedup (FDT, 2.3+) entries, leaves built as ZFS
//     lays them out and compressed with the release's metadata compressor
//     (package zio; zio.c: zio_write_compress(), dmu.c:
//     dmu_write_policy());
//   - flush.go: the 2.3 dedup log's flush into the ZAPs and the blocks it
//     leaves uncompressed (ddt.c: ddt_sync_flush_log_incremental(),
//     ddt_log.c: ddt_log_swap(), zio.c: zio_write_compress() from
//     zfs_sync_pass_dont_compress);
//   - log.go: the table as zfs list sees it right after a copy on a 2.3+
//     pool, most entries still in the dedup log (ddt_log.c: the log's
//     records and blocks; ddt.c: its swap and flush by txg);
//   - arc.go: the default ARC and metadata limits on Linux
//     (module/os/linux/zfs/arc_os.c: arc_default_max(); arc.c: arc_init(),
//     arc_set_limits()).
//
// Package ddt holds the table and histogram the model reads; this package
// adds what ddt does not need: the ZAP geometry, the compressors and the
// release table (zio).
package ddtsize
