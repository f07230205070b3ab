package zio

import (
	"fmt"

	"github.com/ddtsim/ddtsim/zfs/compress/gzip"
	"github.com/ddtsim/ddtsim/zfs/compress/lz4"
	"github.com/ddtsim/ddtsim/zfs/compress/lzjb"
	"github.com/ddtsim/ddtsim/zfs/compress/zle"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
)

// Kind says how a block ends up on disk.
type Kind uint8

const (
	// Stored blocks are allocated and counted by zdb -S.
	Stored Kind = iota
	// Embedded blocks live inside their block pointer; zdb -S skips them.
	Embedded
	// Hole blocks are not allocated at all.
	Hole
)

func (k Kind) String() string {
	switch k {
	case Stored:
		return "stored"
	case Embedded:
		return "embedded"
	case Hole:
		return "hole"
	}
	return "?"
}

// Block is the outcome of writing one non-hole level-0 block.
type Block struct {
	Kind        Kind
	PSize       uint64      // bytes; LSIZE when stored uncompressed; 0 unless Stored
	Compression Compression // Off when stored uncompressed
}

// Compressor is one compression algorithm as ZFS runs it: it compresses
// src (LSIZE bytes) into dst, whose length is the capacity D in bytes, and
// returns the output length c in bytes, ZFS's own headers included, or an
// error when the output does not fit (zio_compress.c: zio_compress_data()).
type Compressor interface {
	Compress(dst, src []byte) (int, error)
}

// Sizer is implemented by compressors that can tell the output length
// without producing the output (lz4, lzjb, zle): Size returns the length in
// bytes that Compress would return for a dst of capacity limit bytes, or
// ok = false exactly where Compress fails. ZFS's decision needs only that
// length, so Writer uses Size when the compressor has it.
type Sizer interface {
	Size(src []byte, limit int) (n int, ok bool)
}

type zleCompressor struct{}

func (zleCompressor) Compress(dst, src []byte) (int, error) { return zle.Compress(dst, src) }

func (zleCompressor) Size(src []byte, limit int) (int, bool) { return zle.Size(src, limit) }

// NewCompressor returns a fresh compressor for compression c (and zstd
// level), or an error when this build cannot run it.
func NewCompressor(c Compression, level int) (Compressor, error) {
	switch c {
	case LZ4:
		return &lz4.Compressor{}, nil
	case LZJB:
		return &lzjb.Compressor{}, nil
	case ZLE:
		return zleCompressor{}, nil
	}
	switch {
	case c >= Gzip1 && c <= Gzip9:
		return gzip.New(int(c-Gzip1) + 1)
	case c == Zstd:
		return zstd.New(level)
	}
	return nil, fmt.Errorf("compression %s is not available in this build", CompressionName(c, level))
}

// Writer runs the compression step for one goroutine; it holds the
// compressor state and output buffer so that the per-block path allocates
// nothing. Not safe for concurrent use.
type Writer struct {
	p     *Policy
	comp  Compressor
	sizer Sizer           // comp as a Sizer, or nil
	lz4   *lz4.Compressor // zstd early abort, first pass (Size only)
	zstd1 Compressor      // zstd early abort, second pass
	out   []byte          // output buffer of the compressors that are not Sizers
}

// NewWriter returns a Writer for p. p must be valid (Validate checks that
// its compressor is available).
func NewWriter(p *Policy) *Writer {
	w := &Writer{p: p}
	if p.Compression != Off {
		var err error
		if w.comp, err = NewCompressor(p.Compression, p.Level); err != nil {
			panic("zio: " + err.Error())
		}
		w.sizer, _ = w.comp.(Sizer)
	}
	if p.earlyAbort() {
		w.lz4 = &lz4.Compressor{}
		var err error
		if w.zstd1, err = NewCompressor(Zstd, 1); err != nil {
			panic("zio: " + err.Error())
		}
	}
	if w.comp != nil && (w.sizer == nil || w.zstd1 != nil) {
		w.out = make([]byte, p.RecordSize)
	}
	return w
}

// earlyAbort reports whether zstd's early-abort heuristic can apply:
// release 2.2+, zstd level ≥ 3 (zstd-fast levels are negative)
// (module/zstd/zfs_zstd.c: zfs_zstd_compress_buf(), zstd_cutoff_level).
func (p *Policy) earlyAbort() bool {
	return p.Compression == Zstd && p.Release.ZstdEarlyAbort && p.Level >= 3
}

// zstdAbortSize is zstd_abort_size: early abort is tried on blocks of at
// least this many bytes.
const zstdAbortSize = 128 << 10

// Write decides how a non-hole block is stored: data holds exactly LSIZE
// bytes (zero-padded). It models zio_write_compress(): compress with the
// capacity MaxCompressedSize, embed output of at most 112 bytes when
// allowed, round to PSIZE, and store uncompressed when that does not save
// space. All-zero blocks are the caller's business (see ZeroIsHole). Only
// the compressed length matters, so a compressor that is a Sizer (and the
// LZ4 pass of zstd's early abort) only measures it.
func (w *Writer) Write(data []byte) Block {
	lsize := uint64(len(data))
	uncompressed := Block{Kind: Stored, PSize: lsize, Compression: Off}
	if w.p.Compression == Off {
		return uncompressed
	}
	d := w.p.MaxCompressedSize(lsize)
	if d == 0 {
		return uncompressed
	}
	if w.lz4 != nil && lsize >= zstdAbortSize {
		// zfs-semantics §4.5: when LZ4 cannot get under the capacity and
		// zstd-1 cannot fit in it, the block is stored uncompressed
		// without trying the requested level.
		if c, ok := w.lz4.Size(data, int(d)); !ok || uint64(c) >= d {
			if c, err := w.zstd1.Compress(w.buffer(d), data); err != nil || uint64(c) > d {
				return uncompressed
			}
		}
	}
	if w.sizer != nil {
		c, ok := w.sizer.Size(data, int(d))
		return w.p.Outcome(lsize, uint64(c), ok && uint64(c) <= d)
	}
	c, err := w.comp.Compress(w.buffer(d), data)
	return w.p.Outcome(lsize, uint64(c), err == nil && uint64(c) <= d)
}

// buffer returns the output buffer with capacity d bytes, growing it if
// needed.
func (w *Writer) buffer(d uint64) []byte {
	if uint64(len(w.out)) < d {
		w.out = make([]byte, d)
	}
	return w.out[:d]
}

// Outcome is the end of the compression step: how a block of lsize bytes
// whose compressed output is c bytes is stored. fits is false when the
// compressor failed or its output exceeds the capacity. Output of at most
// 112 bytes is embedded when allowed; otherwise PSIZE is c rounded by the
// release's band, and a PSIZE not smaller than lsize means the block is
// stored uncompressed (zio.c: zio_write_compress()).
func (p *Policy) Outcome(lsize, c uint64, fits bool) Block {
	if !fits {
		return Block{Kind: Stored, PSize: lsize, Compression: Off}
	}
	if c <= EmbeddedMax && p.EmbedAllowed() {
		return Block{Kind: Embedded, Compression: p.Compression}
	}
	r := p.RoundPSize(c)
	if r >= lsize {
		return Block{Kind: Stored, PSize: lsize, Compression: Off}
	}
	return Block{Kind: Stored, PSize: r, Compression: p.Compression}
}
