//go:build zlib

package gzip

/*
#cgo LDFLAGS: -lz
#include <stdlib.h>
#include <zlib.h>

// ddtsim_gzip_new allocates a z_stream and initialises it as
// z_compress_level() (module/os/linux/spl/spl-zlib.c) does: deflateInit at
// level, i.e. deflateInit2(level, Z_DEFLATED, MAX_WBITS = 15,
// DEF_MEM_LEVEL = 8, Z_DEFAULT_STRATEGY).
static z_stream *ddtsim_gzip_new(int level) {
	z_stream *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	if (deflateInit2(s, level, Z_DEFLATED, MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(s);
		return NULL;
	}
	return s;
}

// ddtsim_gzip_compress runs one deflate(Z_FINISH) of src into dst after
// deflateReset (equivalent to a fresh deflateInit). It returns the stream
// length, 0 when the stream did not fit in dlen bytes (deflate returned Z_OK
// with the output full, which z_compress_level() turns into Z_BUF_ERROR), or
// -1 on any other zlib error. No pointer to dst or src is kept.
static long ddtsim_gzip_compress(z_stream *s, unsigned char *dst, size_t dlen,
    unsigned char *src, size_t slen) {
	int err;
	long n;
	if (deflateReset(s) != Z_OK)
		return -1;
	s->next_in = src;
	s->avail_in = (uInt)slen;
	s->next_out = dst;
	s->avail_out = (uInt)dlen;
	err = deflate(s, Z_FINISH);
	n = (long)s->total_out;
	s->next_in = Z_NULL;
	s->avail_in = 0;
	s->next_out = Z_NULL;
	s->avail_out = 0;
	if (err == Z_STREAM_END)
		return n;
	if (err == Z_OK || err == Z_BUF_ERROR)
		return 0;
	return -1;
}

static void ddtsim_gzip_free(z_stream *s) {
	deflateEnd(s);
	free(s);
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// Exact reports whether this build reproduces C zlib's deflate byte for byte.
// It is true in this build (-tags zlib): the output is the system zlib's.
const Exact = true

// Compressor holds one C zlib deflate state (about 270 KiB of C memory at
// memLevel 8, windowBits 15), reset before every call; it is freed when the
// Compressor becomes unreachable. A Compressor is not safe for concurrent
// use; keep one per goroutine and reuse it: Compress performs no Go
// allocation.
type Compressor struct {
	level int
	s     *C.z_stream
}

// New returns a compressor for ZFS gzip-level (1..9); it fails for any other
// level, or when zlib cannot allocate its state.
func New(level int) (*Compressor, error) {
	if err := checkLevel(level); err != nil {
		return nil, err
	}
	s := C.ddtsim_gzip_new(C.int(level))
	if s == nil {
		return nil, fmt.Errorf("gzip: zlib deflateInit2 failed at level %d", level)
	}
	c := &Compressor{level: level, s: s}
	runtime.AddCleanup(c, func(s *C.z_stream) { C.ddtsim_gzip_free(s) }, s)
	return c, nil
}

// Level returns the ZFS gzip level the Compressor was made for.
func (c *Compressor) Level() int { return c.level }

// Compress compresses src into dst, whose length is the capacity D in bytes,
// exactly like gzip_compress() (module/zfs/gzip.c) → z_compress_level()
// (module/os/linux/spl/spl-zlib.c) called with s_len = len(src) and d_len =
// len(dst): one deflate(Z_FINISH) of a freshly initialised stream (level N,
// windowBits 15, memLevel 8, default strategy) into dst. It returns c = the
// zlib stream length in bytes (2-byte header + deflate data + 4-byte
// Adler-32), or ErrNoFit when the whole stream does not fit in len(dst).
// dst[:c] holds the stream; bytes of dst beyond c, and all of dst after
// ErrNoFit, are unspecified.
//
// len(src) and len(dst) must not exceed math.MaxUint32 (zlib's uInt; ZFS
// blocks are at most 16 MiB).
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	if len(src) > math.MaxUint32 || len(dst) > math.MaxUint32 {
		panic("gzip: buffer larger than 4 GiB")
	}
	if len(dst) == 0 {
		return 0, ErrNoFit // zlib refuses a NULL output buffer
	}
	n := C.ddtsim_gzip_compress(c.s,
		(*C.uchar)(unsafe.Pointer(unsafe.SliceData(dst))), C.size_t(len(dst)),
		(*C.uchar)(unsafe.Pointer(unsafe.SliceData(src))), C.size_t(len(src)))
	runtime.KeepAlive(c)
	switch {
	case n > 0:
		return int(n), nil
	case n == 0:
		return 0, ErrNoFit
	default:
		// deflateReset or deflate reported a state error: cannot happen
		// with a valid stream; ZFS would also store the block as is.
		return 0, fmt.Errorf("gzip: zlib deflate failed at level %d", c.level)
	}
}
