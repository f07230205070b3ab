// Package scanfile reads and writes saved scans: the dedup table of a scan
// with everything needed to add it to other scans (ddtsim merge) or to
// continue it (ddtsim resume).
//
// # Format, version 1
//
// A saved scan is one binary file. Integers written "uvarint" are unsigned
// LEB128 varints (encoding/binary.PutUvarint: 7 bits per byte, low bits
// first, at most 10 bytes).
//
//	magic     8 bytes   0x89 'D' 'D' 'T' 'S' 'I' 'M' '\n'
//	version   4 bytes   big-endian uint32: 1
//	header    uvarint N, then N bytes of JSON (see Header)
//	entries   uvarint C, then C entries, each:
//	            key     32 bytes  the block's DDT key: the BLAKE3-256 digest of its
//	                              logical content (a table that keeps only a prefix
//	                              of the digest writes zeros after it)
//	            refcnt  uvarint   references to the block, ≥ 1
//	            lsize   uvarint   bytes of one reference
//	            psize   uvarint   physical bytes of one reference; 0: embedded in
//	                              the block pointer (not part of the histogram)
//	counters  uvarint N, then N bytes of JSON: the scan's counters
//	          (analyzer.Counters, under their JSON names)
//	checksum  32 bytes  BLAKE3-256 of every byte before it
//
// and nothing after. The entries are in no particular order. DSIZE is not
// stored: it is recomputed from PSIZE by the model's policy when the file
// is read. The header's JSON object holds:
//
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
//	files      [{path, dev, ino, size, mtime_ns, records, done}], sorted by path:
//	           every file the scan took records from, as it was when opened,
//	           and the runs of records [first, end) done, e.g. [[0, 80]]
//
// A path (dir, paths, files[].path) that is not valid UTF-8 is written as
// {"base64": "..."} of its bytes. Readers ignore JSON names they do not
// know; a change that old readers would misread takes a new version.
//
// A file that is not a saved scan, of another version, cut short, or whose
// checksum does not match is refused with an error saying which. Files are
// written atomically: to a temporary file in the target's directory, synced,
// then renamed over the target.
package scanfile
