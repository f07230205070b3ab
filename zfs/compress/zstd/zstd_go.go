//go:build !cgo || nolibzstd

package zstd

import (
	kzstd "github.com/klauspost/compress/zstd"
)

// Exact reports whether this build reproduces ZFS's zstd output byte for
// byte. It is false in this build, made without cgo (CGO_ENABLED=0, or no
// C compiler, or -tags nolibzstd): every zstd PSIZE is klauspost/compress's
// approximation (see the package comment for its error per level).
const Exact = false

// Implementation names the zstd this build compresses with, for
// `ddtsim --version` and the reports.
const Implementation = "klauspost/compress (pure Go, approximate)"

// LibraryVersion is ZSTD_VERSION_NUMBER of the libzstd this build calls: 0,
// none, in the pure-Go build.
const LibraryVersion = 0

// Compressor holds a klauspost/compress/zstd encoder configured for one ZFS
// level, and a scratch buffer for the library's frame (grown to the largest
// block seen). A Compressor is not safe for concurrent use; keep one per
// goroutine and reuse it: once the scratch buffer has grown, Compress
// performs no allocation.
type Compressor struct {
	level int
	enum  byte
	enc   *kzstd.Encoder
	buf   []byte
}

// New returns a compressor for a ZFS zstd level: 1..19 for zstd-N, or −N for
// zstd-fast-N (N = 1..10, 20, 30, …, 100, 500, 1000); an error otherwise.
func New(level int) (*Compressor, error) {
	enum, err := levelEnum(level)
	if err != nil {
		return nil, err
	}
	enc, err := newEncoder(level)
	if err != nil {
		return nil, err
	}
	return &Compressor{level: level, enum: enum, enc: enc}, nil
}

// Level returns the level the Compressor was made for (1..19, or −N).
func (c *Compressor) Level() int { return c.level }

// Compress compresses src into dst, whose length is the capacity D in bytes
// (including ZFS's 8-byte header), as zfs_zstd_compress_impl()
// (module/zstd/zfs_zstd.c) does with s_len = len(src) and d_len = len(dst),
// but with klauspost/compress/zstd instead of libzstd 1.4.5, and without the
// early-abort pre-pass. It returns c = 8 + frame length in bytes, or ErrNoFit
// when that exceeds D (or D < 8).
//
// dst[:c] holds ZFS's header and a valid magicless zstd frame of src in the
// shape libzstd produces for ZFS: a 2-byte frame header (descriptor 0x00:
// no single-segment flag, no content size, no dictionary, no checksum; then
// the window descriptor), followed by the encoder's blocks. The library's
// own frame header (magic number, content size) is rewritten, so it does not
// count towards c. Bytes of dst beyond c, and all of dst after ErrNoFit, are
// unspecified.
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	if len(dst) < HeaderSize {
		return 0, ErrNoFit
	}
	c.buf = c.enc.EncodeAll(src, c.buf[:0])
	n, ok := reframe(dst[HeaderSize:], c.buf, len(src))
	if !ok {
		return 0, ErrNoFit
	}
	putHeader(dst, n, c.enum)
	return HeaderSize + n, nil
}
