// Package gzip models the gzip-1 … gzip-9 compressors of OpenZFS
// (compression=gzip-N; compression=gzip is gzip-6): module/zfs/gzip.c:
// gzip_compress(), which on Linux calls z_compress_level() of
// module/os/linux/spl/spl-zlib.c (docs/zfs-semantics.md §4.6, §5.4).
//
// ZFS stores a zlib stream (RFC 1950: 2-byte header, raw deflate, 4-byte
// big-endian Adler-32), not a gzip file: z_compress_level() runs
// deflateInit(level N) — windowBits 15, memLevel 8, Z_DEFAULT_STRATEGY — and a
// single deflate(Z_FINISH) into an output buffer of the capacity D. The block
// is compressed iff the whole stream, trailer included, fits in D; the
// compressed size c is the stream length. Unlike LZ4 and zstd, ZFS adds no
// header of its own.
//
// On Linux that deflate is the kernel's own, lib/zlib_deflate (deflate.c,
// deftree.c, defutil.h: a port of zlib 1.1.x). Compress is a pure-Go port of
// it (deflate.go, trees.go) in every build, byte for byte: on the golden
// pools every block of gzip-1, gzip-6 and gzip-9 gets the PSIZE real ZFS
// wrote (Exact is true).
//
// # The kernel's deflate and userland zlib 1.2.13
//
// For what ZFS uses (levels 1..9, windowBits 15, memLevel 8, the default
// strategy, one deflate(Z_FINISH) with all input), the kernel's deflate and
// zlib 1.2.13 share the configuration table, the hash (15 bits, shift 5),
// longest_match, deflate_fast and deflate_slow (lazy matching, TOO_FAR
// 4096), the window slide, a block of at most lit_bufsize−1 = 16383 symbols,
// the Huffman construction (heap with the depth tie-break, gen_bitlen's
// overflow fix-up, the bit-length tree) and the stored/fixed/dynamic choice
// of _tr_flush_block. They differ by one rule that changes the output:
//
//   - Block truncation. The kernel's zlib_tr_tally() (deftree.c), at
//     levels 3..9, after every 4096th symbol of a block (last_lit & 0xfff
//     == 0), estimates the block's compressed size as 8 bits a symbol plus
//     5 + extra bits a distance, and ends the block there when fewer than
//     half the symbols are matches and the estimate is under half the
//     input the block covers. The kernel's deftree.c comes from zlib's
//     trees.c of 1996 ("trees.c,v 1.11"), which ran this test always; later
//     zlib compiled it only with -DTRUNCATE_BLOCK (off by default, and
//     every 8192 symbols), and 1.2.12 removed it with the symbol buffer
//     rewrite (the CVE-2018-25032 fix). More blocks mean other
//     Huffman trees: on the golden input's 755 stored 128 KiB blocks, 143
//     streams at gzip-6 and 147 at gzip-9 differ from 1.2.13's (none at
//     gzip-1 and gzip-2), of which 3 and 5 change their 4 KiB-rounded
//     PSIZE (the figures of the former -tags zlib build). The differential
//     tests (-tags zlib) check that the port without this rule equals
//     zlib 1.2.13 byte for byte.
//
// Differences that do not change the output: 1.2.x's sym_buf (one buffer
// of 3-byte symbols, CVE-2018-25032) where the kernel overlays d_buf and
// l_buf on pending_buf (the overlay is safe without Z_FIXED, which ZFS does
// not use); 1.2.x's insert count and window zeroing in fill_window where the
// kernel re-seeds ins_h from two bytes (the same hash, as it depends on the
// last three bytes only) and leaves stale bytes past the input (only read
// where the match length is capped by the lookahead); the data_type guess;
// the kernel's s390 DFLTCC hook (CONFIG_ZLIB_DFLTCC: hardware deflate on
// IBM Z, other bytes, not modelled). FreeBSD's ZFS uses its contrib zlib
// (1.2.x), whose bytes the port gives with the truncation rule off; that is
// not exposed.
//
// Intel QAT offload (gzip_compress() with qat_dc_use_accel()) produces other
// bytes again and is not modelled.
//
// The C zlib reference of the differential tests is in internal/czlib
// (cgo, built only with -tags zlib); the model never uses it.
package gzip
