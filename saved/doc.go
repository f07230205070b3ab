// Package saved reads and writes saved scans: the dedup table of a scan
// with everything needed to add it to other scans (ddtsim merge) or to
// continue it (ddtsim resume), and merges them in bounded memory.
//
// # Format, versions 3 and 4
//
// A saved scan is a directory holding a manifest and the table as Apache
// Parquet files, so that any engine that reads Parquet (DuckDB, Spark,
// Trino, pandas) can reduce many scans (see package histsql):
//
//	_manifest.json     the header, the counters and the partition files (Manifest)
//	part-00.parquet    the entries whose key's first byte is 0x00–0x0f,
//	…                  sorted by key
//	part-15.parquet    … 0xf0–0xff
//
// Every part file has the columns of Row: key (FIXED_LEN_BYTE_ARRAY(16),
// the 128-bit DDT key), refcnt, lsize, psize, dsize (INT64; sizes in bytes
// of one reference; psize 0 is an embedded block, not in zdb's
// histogram; dsize is the model's allocated size of psize over all
// copies). Files are Snappy-compressed, in row groups of 131,072 rows and
// pages of 64 KiB, so that a reader holds little of a file at once: Merge
// streams partition p of every scan through a k-way merge, Partitions
// such merges at most at once, and its memory does not depend on the
// number of entries.
//
// The manifest's name starts with an underscore so that engines reading
// every file of a directory as Parquet (Hive-style tables in Trino and
// Spark) leave it out, as they leave out temporary directories starting
// with a dot. It is one JSON object:
//
//	format     "ddtsim saved scan"
//	version    3, or 4 for a scan made with --read (read below)
//	ddtsim     version of the ddtsim that wrote it
//	created    time written (RFC 3339)
//	host       host name of the machine scanned
//	dir        working directory of the scan (relative paths are relative to it)
//	model      release, release_rules, recordsize, volblocksize (zvols only),
//	           compression, copies, dedup, vdevs (as given), pool (the layout
//	           they make), ashift, sparse, sample: what decides the table (Model)
//	options    follow, count_links, one_file_system: what decides which files
//	paths      the paths named, as given
//	complete   false when the scan was interrupted
//	problems   [{path, kind, reason}]: paths that could not be read or changed
//	position   {arg, path}: the place in the walk's order (source.Position:
//	           paths named in order, below each directory its entries sorted
//	           by name, depth first) up to which every file is done; absent
//	           when none is
//	files      [{path, arg, dev, ino, size, mtime_ns, records, done}], sorted by
//	           path: the files position does not cover that the scan took
//	           records from (in flight when it stopped, done out of order, or
//	           given up after a read error), as they were when opened, and
//	           the runs of records [first, end) done, e.g. [[0, 80]];
//	           bp_tally, for a file not finished: the block pointers of
//	           its records done, {l1: [{g, n, r, e}], last_data, open:
//	           [{next, group, n, repeat, seen}]} (analyzer.BPTally), from
//	           which a resume accounts its indirect blocks as one scan
//	           would (absent in scans saved before: their resume counts
//	           them from the records it reads); and
//	           [{path, unread: true}]: paths the scan could not read, or list,
//	           which a resume reads (what lies below them too) whatever the
//	           position
//	shard      {index, count}: a scan made with --shard index/count only
//	read       {fraction, seed, groups}: a scan made with --read only
//	           (version 4; 5 with groups): the plan that chose the records
//	           read (estimate.Plan); the table holds those records only
//	           (with groups, keyed by content and group: ddt.GroupKey), and
//	           the counters unread, data_lsize, max_lsize, read_lsize and
//	           read_lsize_sq (with groups also read_groups, per group read
//	           its records and LSIZE, and size_files, the files per size)
//	           say what the estimate needs of the others
//	counters   the scan's counters (analyzer.Counters, under their JSON names)
//	partitions [{file, rows, bytes, blake3}]: the 16 part files, in order,
//	           with their row count, size and BLAKE3-256 (hex)
//
// A path (dir, paths, files[].path) that is not valid UTF-8 is written as
// {"base64": "..."} of its bytes. Readers ignore JSON names they do not
// know; a change that old readers would misread takes a new version.
//
// A directory without a manifest of this format, of another version, a
// part file missing, cut short, changed (its BLAKE3), not Parquet, of
// other columns, with keys out of order or of another partition, or with
// a DSIZE the model does not give, is refused with an error naming the
// file. A scan is written atomically: into a new directory beside the
// target (.NAME.PID-N.tmp), every file synced, which then takes the
// target's place; what a write killed half way leaves beside the target
// is removed by the next write (or resume) once its process is gone.
//
// Version 4 is version 3 with read: a reader of version 3 would take the
// table of the records read for the whole data's, so a scan with a plan
// takes the new number, and one without keeps 3, which older readers
// read.
//
// Version 2 is read too: the same but for position, its files listing
// every file the scan took records from. Version 3 changed the number
// because a reader of version 2 would read the files behind the position
// again.
//
// # Format, version 1
//
// What ddtsim wrote before: one binary file, still read (Read, Merge);
// saving it again (ddtsim resume) writes version 3 in its place. Integers
// written "uvarint" are unsigned LEB128 varints.
//
//	magic     8 bytes   0x89 'D' 'D' 'T' 'S' 'I' 'M' '\n'
//	version   4 bytes   big-endian uint32: 1
//	header    uvarint N, then N bytes of JSON (the manifest's fields from
//	          ddtsim to files)
//	entries   uvarint C, then C entries, each:
//	            key     32 bytes  the 128-bit key, then 16 zero bytes
//	            refcnt  uvarint   references to the block, ≥ 1
//	            lsize   uvarint   bytes of one reference
//	            psize   uvarint   physical bytes of one reference; 0: embedded
//	counters  uvarint N, then N bytes of JSON: the scan's counters
//	checksum  32 bytes  BLAKE3-256 of every byte before it
package saved
