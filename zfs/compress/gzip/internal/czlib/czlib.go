//go:build zlib

// Package czlib calls userland C zlib (the system's, Debian zlib1g-dev: 1.2.13
// here) exactly as ZFS's z_compress_level() calls the kernel's deflate. It is
// the reference that package gzip's differential tests (-tags zlib) compare
// the port of the kernel's deflate with; ddtsim's model does not use it.
package czlib

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
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// ErrNoFit: the zlib stream did not fit in the output buffer (deflate
// returned Z_OK with the output full).
var ErrNoFit = errors.New("czlib: output does not fit")

// Version is the version of the zlib linked (zlibVersion()).
func Version() string { return C.GoString(C.zlibVersion()) }

// Compressor holds one C zlib deflate state (about 270 KiB of C memory at
// memLevel 8, windowBits 15), reset before every call; it is freed when the
// Compressor becomes unreachable. It is not safe for concurrent use.
type Compressor struct {
	level int
	s     *C.z_stream
}

// New returns a compressor at zlib level 1..9.
func New(level int) (*Compressor, error) {
	if level < 1 || level > 9 {
		return nil, fmt.Errorf("czlib: level %d out of range 1..9", level)
	}
	s := C.ddtsim_gzip_new(C.int(level))
	if s == nil {
		return nil, fmt.Errorf("czlib: deflateInit2 failed at level %d", level)
	}
	c := &Compressor{level: level, s: s}
	runtime.AddCleanup(c, func(s *C.z_stream) { C.ddtsim_gzip_free(s) }, s)
	return c, nil
}

// Compress runs one deflate(Z_FINISH) of src into dst (capacity len(dst))
// on a freshly reset stream (level, windowBits 15, memLevel 8, default
// strategy) and returns the stream length, or ErrNoFit.
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	if len(src) > math.MaxUint32 || len(dst) > math.MaxUint32 {
		panic("czlib: buffer larger than 4 GiB")
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
		return 0, fmt.Errorf("czlib: deflate failed at level %d", c.level)
	}
}
