// Package zdb is the text OpenZFS prints about dedup tables, read and
// written (one format, as archive/tar is one).
//
// Writing. WriteSimulated prints exactly what `zdb -S` prints for a
// simulated DDT (cmd/zdb/zdb.c: dump_simulated_ddt()); WriteHistogram is
// its histogram table, in the layout of zpool_dump_ddt()
// (lib/libzutil/zutil_pool.c), and WriteRatioLine its ratio line
// (cmd/zdb/zdb.c: dump_dedup_ratio()). Numbers are formatted by package
// nicenum, as zfs_nicenum_format() does (lib/libzutil/zutil_nicenum.c).
//
// Reading. Parse reads what `zdb -S`, `zdb -D`/`-DD`/`-DDD` (cmd/zdb/zdb.c:
// dump_all_ddts(), dump_ddt()) and `zpool status -D` (cmd/zpool/
// zpool_main.c: print_dedup_stats()) printed, from every release, as people
// paste it, with any `zfs list` / `zpool list` tables pasted beside them
// (package zfslist). Every number keeps its display precision: a
// nicenum.Value is the interval of integers that print as its text, and
// sums of them are Intervals. The text is checked against itself (Check)
// and dated (Era); what is not understood is reported by line (Diag).
//
// Running zdb on a live pool is package zdb/live.
//
// The package imports, of this module, package ddt for the histogram it
// writes, nicenum and zfslist.
package zdb
