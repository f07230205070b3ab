// Package histsql is the dedup table histogram of saved scans as one
// portable SQL query, for scans too many or too large to add up on one
// machine: an engine that reads Parquet (DuckDB, Spark SQL, Trino) runs
// Query over the Parquet files of every scan, and ReadResult reads what it
// printed back as a ddt.Histogram, from which the report is written as for
// any scan.
//
// The query models what `zdb -S` computes (OpenZFS cmd/zdb/zdb.c:
// dump_simulated_ddt()): the references of every key in all scans are added
// up, as zdb_ddt_add_cb() adds each block pointer to its entry, and each
// entry goes into the bucket highbit(refcnt) - 1 = floor(log2(refcnt))
// (include/sys/ddt.h: ddt_histogram_t, 64 buckets; ddt_stat_add() into
// ddh_stat[highbit(refcnt) - 1]). The allocated columns count each key
// once, with zdb's per entry sizes ref_size / refcnt in integer division;
// the referenced columns count every reference. Blocks embedded in their
// block pointers (psize 0) have no entry. This is what ddt.Histogram.Add
// does for one table in memory. The reduce is by key, not by bucket: a key
// in two scans is one entry with the references of both, so the histogram
// of several scans is not the bucket-wise sum of theirs (which is what
// ddt_histogram_add() computes for the tables of one pool, whose keys
// differ).
//
// # Input
//
// The query reads a table or view named ddtsim_entries: the union of the
// rows of all scans, one row per DDT key per scan, with the columns
//
//	key     FIXED_LEN_BYTE_ARRAY(16)  the 128-bit DDT key (first 16 bytes of
//	                                  the block's BLAKE3-256 digest)
//	refcnt  INT64  references of the block in this scan, >= 1
//	lsize   INT64  logical bytes of one reference
//	psize   INT64  physical bytes of one reference; 0: embedded, not counted
//	dsize   INT64  allocated bytes of one reference over all copies
//
// Within one model the sizes of a key are equal in every scan. How each
// engine defines the view over the files is engine-specific and stays out
// of the query (docs/saved-scans.md: Many scans in SQL).
//
// # Output
//
// One row per non-empty bucket, ordered by bucket, all BIGINT: bucket
// (0 to 63), blocks, lsize, psize, dsize (allocated), ref_blocks,
// ref_lsize, ref_psize, ref_dsize (referenced). ReadResult takes it as
// the engines print it: CSV or tab-separated, with a header row (columns
// by name) or without (columns in this order).
package histsql
