package zio

import (
	"errors"
	"fmt"
)

// EmbeddedMax is BPE_PAYLOAD_SIZE (include/sys/spa.h): compressed output of
// at most this many bytes is stored inside the block pointer.
const EmbeddedMax = 112

// MinRecordSize is SPA_MINBLOCKSIZE, bytes.
const MinRecordSize = 512

// Policy is the write policy of one dataset on one pool: the dataset
// properties and pool layout that decide how a level-0 block is stored
// (dmu.c: dmu_write_policy(), zio.c: zio_write_compress()).
type Policy struct {
	Release     *Release
	RecordSize  uint32      // bytes, a power of two
	Compression Compression // resolved: Off or a real algorithm, never On/Inherit
	Copies      int         // 1..3 DVAs per block
	Dedup       bool        // the dedup property
	Vdev        Vdev        // the pool's (single kind of) top-level vdev
}

// Validate checks the policy's values and returns an error naming the
// offending property and the accepted values.
func (p *Policy) Validate() error {
	if p.Release == nil {
		return errors.New("no release")
	}
	rs := p.RecordSize
	if rs < MinRecordSize || rs > p.Release.MaxRecordSize || rs&(rs-1) != 0 {
		return fmt.Errorf("invalid recordsize %d (accepted: a power of two from 512 to %d)", rs, p.Release.MaxRecordSize)
	}
	if p.Copies < 1 || p.Copies > 3 {
		return fmt.Errorf("invalid copies %d (accepted: 1, 2, 3)", p.Copies)
	}
	switch p.Compression {
	case Off, LZ4:
	default:
		return fmt.Errorf("compression %v is not modelled", p.Compression)
	}
	if p.Vdev == nil {
		return errors.New("no vdev")
	}
	return nil
}

// ZeroIsHole reports whether ZFS itself turns an all-zero block into a hole:
// whenever compression is not off (zio.c: zio_write_compress(), the
// abd_cmp_zero() test), and with dedup=on where the release forces the
// "empty" compression.
func (p *Policy) ZeroIsHole() bool {
	return p.Compression != Off || (p.Dedup && p.Release.ZeroHoleWithDedup)
}

// minAlloc is spa_min_alloc and gcdAlloc spa_gcd_alloc, bytes; with one
// kind of top-level vdev both are its minimum allocation.
func (p *Policy) minAlloc() uint64 { return p.Vdev.MinAlloc() }
func (p *Policy) gcdAlloc() uint64 { return p.Vdev.MinAlloc() }

// MaxCompressedSize is the capacity D, bytes, given to the compressor for a
// block of lsize bytes (zio.c: zio_get_compression_max_size(), 2.3.0+):
// lsize − lsize/8, rounded down to the allocation granule unless the
// compressor is zle, and 112 when that is below the minimum allocation.
func (p *Policy) MaxCompressedSize(lsize uint64) uint64 {
	d := lsize - lsize/8
	if p.Compression != ZLE {
		d -= d % p.gcdAlloc()
		if d < p.minAlloc() {
			d = EmbeddedMax
		}
	}
	return d
}

// RoundPSize turns a compressed size c (bytes, headers included) into the
// PSIZE ZFS allocates for it (zio.c: zio_write_compress(), 2.2.0+ rounding):
// the minimum allocation when c fits in it, else c rounded up to the
// allocation granule.
func (p *Policy) RoundPSize(c uint64) uint64 {
	m, g := p.minAlloc(), p.gcdAlloc()
	if c <= m {
		return m
	}
	return (c + g - 1) / g * g
}

// DSize is the deflated allocated size of one block of psize bytes, summed
// over its copies (spa_misc.c: bp_get_dsize_sync()): per DVA,
// (ASIZE/512) × vdev_deflate_ratio.
func (p *Policy) DSize(psize uint64) uint64 {
	return uint64(p.Copies) * (p.Vdev.ASize(psize) >> 9) * p.Vdev.DeflateRatio()
}

// EmbedAllowed reports whether a tiny compressed block may be embedded in
// its block pointer under this policy (zio.c: zio_write_compress(); the
// embedded_data feature is assumed enabled, data not encrypted).
func (p *Policy) EmbedAllowed() bool {
	return !p.Dedup || p.Release.EmbedWithDedup
}
