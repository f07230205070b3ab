// Package zdb is the text OpenZFS prints about dedup tables, read and
// written (one format, as archive/tar is one), and the running of zdb -S
// on a live pool.
//
// Writing. WriteSimulated prints exactly what `zdb -S` prints for a
// simulated DDT (cmd/zdb/zdb.c: dump_simulated_ddt()); WriteHistogram is
// its histogram table, in the layout of zpool_dump_ddt()
// (lib/libzutil/zutil_pool.c), and WriteRatioLine its ratio line
// (cmd/zdb/zdb.c: dump_dedup_ratio()). Nicenum formats numbers as
// zfs_nicenum_format() does (lib/libzutil/zutil_nicenum.c).
//
// Reading. Parse reads what `zdb -S`, `zdb -D`/`-DD`/`-DDD` (cmd/zdb/zdb.c:
// dump_all_ddts(), dump_ddt()) and `zpool status -D` (cmd/zpool/
// zpool_main.c: print_dedup_stats()) printed, from every release, as people
// paste it. Every number keeps its display precision: a Value is the
// interval of integers that print as its text, found with Nicenum itself,
// and sums of them are Intervals. The text is checked against itself
// (Check) and dated (Era); what is not understood is reported by line
// (Diag).
//
// Running. Run runs zdb -S on a live pool, read-only, and returns what it
// printed or a typed error (ErrNotFound, ErrTimeout, ErrOutputTooLong,
// *ExitError); CheckPoolName refuses what OpenZFS would not take for a pool
// name (module/zcommon/zfs_namecheck.c) before anything runs.
//
// The package imports only package ddt of this module, for the histogram
// it writes; the parser imports nothing of it.
package zdb
