// Package space predicts what zfs list and zpool list will show for the
// files as copied (or volumes as written): USED, LUSED, REFER, LREFER and
// compressratio of the dataset (zfs list -p), ALLOC and DEDUP of the pool
// (zpool list -p). zdb -S, and the DDT model beside this one, count
// level-0 file data only; these figures also hold the metadata ZFS
// allocates for the same files:
//
//   - indirect blocks (L1, L2, …) of every file or volume of more than one
//     block: 128 KiB blocks of 1024 block pointers (dnode.c:
//     dnode_allocate(), DN_MAX_INDBLKSHIFT 17), compressed with lz4 and
//     written with one copy more than data (dmu.c: dmu_write_policy(),
//     redundant_metadata=all). Their compressed size depends on the block
//     pointers' bytes (DVAs, checksums), which ZFS decides at write time:
//     it is modelled as an expected size (Indirect), measured against the
//     golden pools' L1 blocks;
//   - dnode blocks: every object (file, directory, symlink, special file)
//     takes a 512-byte dnode, 32 to a 16 KiB block of the meta-dnode,
//     compressed (dnode.c, dmu_objset.c);
//   - directories: a microzap block sized to its entries (zap_micro.c:
//     mzap_create_impl(), mzap_addent(); 64-byte chunks, names under 50
//     bytes), or a fat ZAP of 16 KiB leaves when it outgrows one
//     (zap.c, zap_leaf.c), compressed, embedded in its block pointer when
//     it compresses to 112 bytes or less;
//   - the fixed objects of a new dataset and of the pool (the master node,
//     SA tables, the objset, the MOS), measured on real pools;
//   - with dedup, the DDT itself (package ddtsize).
//
// What dsl_dataset.c accounts: USED is the allocated size deflated
// (bp_get_dsize_sync(), every copy, every block, a deduplicated block
// charged in full to each dataset referencing it); LUSED/LREFER sum
// BP_GET_UCSIZE: the logical size of data blocks but the physical size
// of metadata blocks (include/sys/spa.h). ALLOC (zpool list) is the raw
// allocated size: parity and padding included, a deduplicated block once.
package space
