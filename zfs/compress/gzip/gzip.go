package gzip

import (
	"errors"
	"fmt"
	"math"
)

// ErrNoFit: the zlib stream did not fit in the capacity D. It corresponds to
// z_compress_level() returning Z_BUF_ERROR (deflate(Z_FINISH) returned Z_OK
// with the output buffer full), upon which gzip_compress() reports the block
// as incompressible (it returns s_len).
var ErrNoFit = errors.New("gzip: output does not fit")

// MinLevel and MaxLevel bound the ZFS gzip levels (compression=gzip-1 …
// gzip-9, module/zcommon/zfs_prop.c).
const (
	MinLevel = 1
	MaxLevel = 9
)

// zlib stream framing (RFC 1950).
const (
	headerSize  = 2 // CMF, FLG
	trailerSize = 4 // Adler-32, big-endian
)

// checkLevel validates a ZFS gzip level.
func checkLevel(level int) error {
	if level < MinLevel || level > MaxLevel {
		return fmt.Errorf("gzip: level %d out of range %d..%d", level, MinLevel, MaxLevel)
	}
	return nil
}

// zlibHeader returns the 2-byte zlib header the kernel's deflate (and C
// zlib's) writes for a stream with windowBits 15 at compression level: CMF
// 0x78, FLG with FLEVEL (level-1)/2 capped at 3 — 0 (level 1), 1 (2..5),
// 2 (6) or 3 (7..9) — and the FCHECK bits (deflate.c: zlib_deflate(),
// "Write the zlib header").
func zlibHeader(level int) [2]byte {
	var flevel byte
	switch {
	case level < 2:
		flevel = 0
	case level < 6:
		flevel = 1
	case level == 6:
		flevel = 2
	default:
		flevel = 3
	}
	h := uint16(0x78)<<8 | uint16(flevel)<<6
	h += 31 - h%31
	return [2]byte{byte(h >> 8), byte(h)}
}

// Exact reports whether Compress reproduces ZFS's gzip-N output byte for
// byte. It is true in every build: Compress is a port of the Linux kernel's
// deflate, which ZFS on Linux calls (see the package documentation).
const Exact = true

// Compressor holds the state of one kernel deflate stream (about 200 KiB,
// allocated by New), reset before every call as ZFS initialises a fresh
// stream for every block. A Compressor is not safe for concurrent use; keep
// one per goroutine and reuse it: Compress performs no allocation.
type Compressor struct {
	level int
	d     *deflater
}

// New returns a compressor for ZFS gzip-level (1..9); it fails for any other
// level.
func New(level int) (*Compressor, error) {
	if err := checkLevel(level); err != nil {
		return nil, err
	}
	return &Compressor{level: level, d: new(deflater)}, nil
}

// Level returns the ZFS gzip level the Compressor was made for.
func (c *Compressor) Level() int { return c.level }

// Compress compresses src into dst, whose length is the capacity D in bytes,
// as gzip_compress() (module/zfs/gzip.c) → z_compress_level()
// (module/os/linux/spl/spl-zlib.c) does on Linux with s_len = len(src) and
// d_len = len(dst): one deflate(Z_FINISH) of a fresh stream (level N,
// windowBits 15, memLevel 8, default strategy) through the kernel's deflate.
// It returns c = the zlib stream length in bytes (2-byte header + deflate
// data + 4-byte Adler-32), or ErrNoFit when the whole stream does not fit
// in len(dst); it stops as soon as a block shows that it cannot. dst[:c]
// holds the stream, the kernel's bytes; bytes of dst beyond c, and all of
// dst after ErrNoFit, are unspecified.
//
// len(src) must not exceed math.MaxUint32 (ZFS blocks are at most 16 MiB).
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	if len(src) > math.MaxUint32 {
		panic("gzip: input larger than 4 GiB")
	}
	d := c.d
	d.reset(c.level, dst, src)
	ok := d.compress()
	n := d.n
	d.src, d.out = nil, nil // keep no reference to the caller's buffers
	if !ok {
		return 0, ErrNoFit
	}
	return n, nil
}
