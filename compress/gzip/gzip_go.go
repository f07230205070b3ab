//go:build !zlib

package gzip

import (
	"errors"
	"math"

	"github.com/klauspost/compress/zlib"
)

// Exact reports whether this build reproduces C zlib's deflate byte for byte.
// It is false in this default, pure-Go build; build with -tags zlib (cgo and
// the system zlib) for exact output.
const Exact = false

// errFull is returned by fixedWriter when the stream outgrows the capacity.
var errFull = errors.New("gzip: capacity reached")

// fixedWriter is an io.Writer over a caller's buffer that refuses to grow.
type fixedWriter struct {
	buf []byte
	n   int
}

func (w *fixedWriter) Write(p []byte) (int, error) {
	if len(p) > len(w.buf)-w.n {
		return 0, errFull
	}
	w.n += copy(w.buf[w.n:], p)
	return len(p), nil
}

// Compressor holds a github.com/klauspost/compress/zlib writer (its deflate
// state is allocated by New and on the first call, then reused). A
// Compressor is not safe for concurrent use; keep one per goroutine and reuse
// it: after the first call, Compress performs no allocation.
type Compressor struct {
	level int
	zw    *zlib.Writer
	out   fixedWriter
}

// New returns a compressor for ZFS gzip-level (1..9); it fails for any other
// level.
func New(level int) (*Compressor, error) {
	if err := checkLevel(level); err != nil {
		return nil, err
	}
	c := &Compressor{level: level}
	zw, err := zlib.NewWriterLevel(&c.out, levelMap[level])
	if err != nil {
		return nil, err
	}
	c.zw = zw
	return c, nil
}

// Level returns the ZFS gzip level the Compressor was made for.
func (c *Compressor) Level() int { return c.level }

// Compress compresses src into dst, whose length is the capacity D in bytes,
// as gzip_compress() (module/zfs/gzip.c) → z_compress_level()
// (module/os/linux/spl/spl-zlib.c) does with s_len = len(src) and d_len =
// len(dst), but with the deflate encoder of github.com/klauspost/compress
// (at level levelMap[N]) instead of zlib's. It returns c =
// the zlib stream length in bytes (2-byte header + deflate data + 4-byte
// Adler-32), or ErrNoFit when the whole stream does not fit in len(dst).
// dst[:c] holds a valid zlib stream of src whose header bytes are the ones C
// zlib writes for the ZFS level; its length approximates ZFS's c (see
// Exact). Bytes of dst beyond c, and all of dst after ErrNoFit, are
// unspecified.
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	if len(src) > math.MaxUint32 {
		panic("gzip: input larger than 4 GiB")
	}
	c.out = fixedWriter{buf: dst}
	c.zw.Reset(&c.out)
	_, err := c.zw.Write(src)
	if err == nil {
		err = c.zw.Close()
	}
	n := c.out.n
	c.out = fixedWriter{}
	if err != nil {
		if errors.Is(err, errFull) {
			return 0, ErrNoFit
		}
		return 0, err
	}
	h := zlibHeader(c.level)
	dst[0], dst[1] = h[0], h[1]
	return n, nil
}
