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
// Two implementations exist, chosen at build time:
//
//   - default (pure Go, no cgo): github.com/klauspost/compress/zlib. The
//     stream is valid and decompresses to the input, but the deflate
//     encoder is not zlib's, so c (and the bytes) differ from ZFS's on most
//     blocks. The library level used for each ZFS level was chosen by
//     measurement on the golden input tree (levelMap); the total PSIZE stays
//     within about 0.4% of C zlib's. Exact is false.
//   - -tags zlib (cgo): the system's C zlib (Debian: zlib1g-dev), called
//     with exactly ZFS's parameters and capacity. Exact is true: the output is
//     that of userland zlib byte for byte, which is what ZFS computes in
//     userland (zdb, ztest: compress2()) and, at gzip-1, what the Linux
//     kernel's deflate (lib/zlib_deflate, derived from zlib 1.1.x) produces
//     as well. At gzip-6 and gzip-9 the kernel's deflate emits different
//     streams for a few blocks (testdata/golden/README.md), so even this build
//     is not bit-exact against a Linux pool there.
//
// Intel QAT offload (gzip_compress() with qat_dc_use_accel()) produces other
// bytes again and is not modelled.
package gzip
