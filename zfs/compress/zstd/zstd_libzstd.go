//go:build cgo && !nolibzstd

package zstd

/*
#include <stddef.h>
// libzstd as github.com/DataDog/zstd v1.4.5 compiles it into the binary
// (its C sources are those of zstd 1.4.4; the package is imported below
// only for them): the declarations this file uses, as zstd.h of 1.4 gives
// them, the experimental ones (ZSTD_STATIC_LINKING_ONLY) included. The
// parameter numbers are part of the library's ABI since 1.4.0.
#define DDTSIM_ZSTD_VERSION 10404
typedef struct ZSTD_CCtx_s ZSTD_CCtx;
typedef struct { const void *src; size_t size; size_t pos; } ZSTD_inBuffer;
typedef struct { void *dst; size_t size; size_t pos; } ZSTD_outBuffer;
enum { ZSTD_c_compressionLevel = 100, ZSTD_c_contentSizeFlag = 200, ZSTD_c_checksumFlag = 201,
	ZSTD_c_format = 10 };
enum { ZSTD_f_zstd1_magicless = 1 };
enum { ZSTD_reset_session_only = 1 };
enum { ZSTD_e_end = 2 };
ZSTD_CCtx *ZSTD_createCCtx(void);
size_t ZSTD_freeCCtx(ZSTD_CCtx *);
size_t ZSTD_CCtx_setParameter(ZSTD_CCtx *, int, int);
size_t ZSTD_CCtx_reset(ZSTD_CCtx *, int);
size_t ZSTD_compressStream2(ZSTD_CCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *, int);
size_t ZSTD_compressBound(size_t);
unsigned ZSTD_isError(size_t);
unsigned ZSTD_versionNumber(void);

// ddtsim_zstd_new creates a compression context with ZFS's parameters
// (zfs_zstd_compress_impl): the library level, magicless frames, no checksum,
// no content size. It returns NULL on failure.
static ZSTD_CCtx *ddtsim_zstd_new(int level) {
	ZSTD_CCtx *c = ZSTD_createCCtx();
	if (c == NULL)
		return NULL;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_format, ZSTD_f_zstd1_magicless)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0))) {
		ZSTD_freeCCtx(c);
		return NULL;
	}
	return c;
}

// ddtsim_zstd_compress compresses src into dst as ZSTD_compress2 of libzstd
// 1.4.5 does in ZFS: reset the session (parameters are kept), then one
// ZSTD_compressStream2(ZSTD_e_end) with the library's own input and output
// buffers. Since ZFS's capacity is always below ZSTD_compressBound(slen),
// 1.4.5 never takes its shortcut of compressing the whole input straight into
// dst: it loads the input into the context's buffer (a ring of window + block
// size, so blocks of sources larger than the window see the older data as an
// external segment) and compresses each block into its own output buffer,
// copied out afterwards; the frame fits iff its length is at most dlen. The
// capacity passed on is limited to ZSTD_compressBound(slen) - 1 so that
// larger capacities take the same path (a frame is never that long). From
// 1.5.0 on, ZSTD_compress2 instead compresses straight into dst, which
// changes the output of sources larger than the window and needs a few
// bytes of slack at the end; ZSTD_compressStream2 keeps the old behaviour.
// It returns the frame length, or -1 on any error, including "does not fit"
// (zfs_zstd_compress_impl treats them all alike: the block is stored as is).
static long long ddtsim_zstd_compress(ZSTD_CCtx *c, void *dst, size_t dlen,
    const void *src, size_t slen) {
	size_t bound = ZSTD_compressBound(slen);
	ZSTD_outBuffer out = { dst, dlen < bound ? dlen : bound - 1, 0 };
	ZSTD_inBuffer in = { src, slen, 0 };
	size_t r;
	if (ZSTD_isError(ZSTD_CCtx_reset(c, ZSTD_reset_session_only)))
		return -1;
	r = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
	if (ZSTD_isError(r) || r != 0)
		return -1;
	return (long long)out.pos;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	_ "github.com/DataDog/zstd" // the C library, compiled by cgo
)

// Exact reports whether this build reproduces ZFS's zstd output byte for
// byte. In this build (the default wherever cgo is: a C compiler) it is
// true: the zstd 1.4.4 that
// github.com/DataDog/zstd v1.4.5 compiles gives, with ZFS's parameters, the
// same frames as the 1.4.5 ZFS bundles on every block of every zstd golden
// case (levels 1, 3, 19 and fast-1; 128K and 1M records; golden_test.go
// asserts it block by block).
const Exact = true

// Implementation names the zstd this build compresses with, for
// `ddtsim --version` and the reports.
const Implementation = "libzstd 1.4.4 (cgo, exact)"

// LibraryVersion is ZSTD_VERSION_NUMBER of the libzstd this build calls
// (0 in the pure-Go build): checked against the library linked in at
// start-up.
const LibraryVersion = int(C.DDTSIM_ZSTD_VERSION)

func init() {
	if v := int(C.ZSTD_versionNumber()); v != LibraryVersion {
		panic(fmt.Sprintf("zstd: the libzstd linked in is version %d, not the %d this package was measured with", v, LibraryVersion))
	}
}

// Compressor holds one libzstd compression context (C memory, freed when the
// Compressor becomes unreachable). Its session is reset for every call
// (parameters kept), which gives the same output as ZFS's fresh context. A Compressor is not safe
// for concurrent use; keep one per goroutine and reuse it: Compress performs
// no Go allocation.
type Compressor struct {
	level int
	enum  byte
	cctx  *C.ZSTD_CCtx
}

// New returns a compressor for a ZFS zstd level: 1..19 for zstd-N, or −N for
// zstd-fast-N (N = 1..10, 20, 30, …, 100, 500, 1000); an error otherwise.
func New(level int) (*Compressor, error) {
	enum, err := levelEnum(level)
	if err != nil {
		return nil, err
	}
	cctx := C.ddtsim_zstd_new(C.int(level))
	if cctx == nil {
		return nil, fmt.Errorf("zstd: cannot create a libzstd context at level %d", level)
	}
	c := &Compressor{level: level, enum: enum, cctx: cctx}
	runtime.AddCleanup(c, func(p *C.ZSTD_CCtx) { C.ZSTD_freeCCtx(p) }, cctx)
	return c, nil
}

// Level returns the level the Compressor was made for (1..19, or −N).
func (c *Compressor) Level() int { return c.level }

// Compress compresses src into dst, whose length is the capacity D in bytes
// (including ZFS's 8-byte header), exactly like zfs_zstd_compress_impl()
// (module/zstd/zfs_zstd.c) called with s_len = len(src), d_len = len(dst)
// and this level, without the early-abort pre-pass. It returns c = 8 + frame
// length in bytes, or ErrNoFit (D < 8, or libzstd failed, in practice because
// the frame did not fit in D − 8 bytes). The frame fits iff it is at most
// D − 8 bytes long, and its bytes do not depend on D (see
// ddtsim_zstd_compress). dst[:c] holds the header and the
// magicless frame; bytes of dst beyond c, and all of dst after ErrNoFit, are
// unspecified.
func (c *Compressor) Compress(dst, src []byte) (int, error) {
	if len(dst) < HeaderSize {
		return 0, ErrNoFit
	}
	out := dst[HeaderSize:]
	n := C.ddtsim_zstd_compress(c.cctx,
		unsafe.Pointer(unsafe.SliceData(out)), C.size_t(len(out)),
		unsafe.Pointer(unsafe.SliceData(src)), C.size_t(len(src)))
	runtime.KeepAlive(c)
	if n < 0 {
		return 0, ErrNoFit
	}
	putHeader(dst, int(n), c.enum)
	return HeaderSize + int(n), nil
}
