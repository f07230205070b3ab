// Package zstd models the zstd compressors of OpenZFS (compression=zstd-1 …
// zstd-19 and zstd-fast-1 … zstd-fast-1000; compression=zstd is zstd-3,
// zstd-fast is zstd-fast-1): module/zstd/zfs_zstd.c: zfs_zstd_compress_impl()
// (2.3+; zfs_zstd_compress() in 2.0–2.2), docs/zfs-semantics.md §5.5.
//
// ZFS compresses every block with ZSTD_compress2() of a fresh context set to
// the mapped library level (zstd-N → N, zstd-fast-N → −N), format
// ZSTD_f_zstd1_magicless (no 4-byte magic number), checksumFlag 0 and
// contentSizeFlag 0, into an output of capacity D − 8, and prepends an 8-byte
// header (zfs_zstdhdr_t):
//
//	bytes 0–3  frame length, big-endian uint32
//	byte  4    ZFS level enum (enum zio_zstd_levels): 1…19 for zstd-N;
//	           ZIO_ZSTD_LEVEL_RESERVE = 101, ZIO_ZSTD_LEVEL_FAST = 102, so
//	           103…112 for zstd-fast-1…10, 113…121 for zstd-fast-20…100,
//	           122 for zstd-fast-500, 123 for zstd-fast-1000
//	bytes 5–7  libzstd version 10405 (1.4.5, bundled by every release
//	           2.0.0 … 2.4.x), big-endian 24-bit: 0x00 0x28 0xA5
//
// c = frame length + 8. Any library error (including "destination too
// small") makes the block incompressible (ErrNoFit).
//
// The early-abort pre-pass of 2.2.0+ (LZ4, then zstd-1, for zstd-3 and up on
// blocks of 128 KiB or more, §4.5) is not part of this package: the caller
// runs it.
//
// Two implementations exist, chosen at build time:
//
//   - the default wherever cgo is available (a C compiler on the build
//     machine; CGO_ENABLED is not 0): libzstd 1.4.4 as the Go module
//     github.com/DataDog/zstd v1.4.5 compiles it from its own copy of the C
//     sources (no system package), called with exactly ZFS's parameters and
//     capacity, through the buffered streaming path that ZSTD_compress2 of
//     1.4.5 takes whenever the capacity is below ZSTD_compressBound (always,
//     in ZFS). Exact is true: on every block of the zstd golden cases its
//     frames are those of the 1.4.5 that ZFS bundles (1.4.5 changed no
//     compressed output there); the system's libzstd 1.5.4 (Debian 12), used
//     before, differed on up to 26 of 760 blocks (−0.29% at zstd-19).
//   - without cgo (CGO_ENABLED=0, cross-compiled binaries, or -tags
//     nolibzstd): github.com/klauspost/compress/zstd. Its encoder has four
//     strength settings only and does not reproduce libzstd's output, so c
//     differs from ZFS on most blocks. The frame is rewritten to ZFS's shape
//     (magicless, no content size, no checksum), and the encoder setting for
//     each ZFS level was chosen by measurement (settingFor in
//     zstd_klauspost.go, which lists the size error per level: within 0.8%,
//     mostly 0.4%, for zstd-1 … zstd-12 and zstd-fast-1 … 9; up to +2.2% at
//     zstd-19; far too small from zstd-fast-10 on). Exact is false, and the
//     reports mark every zstd figure of such a build approximate.
//
// Implementation names the one compiled in.
package zstd
