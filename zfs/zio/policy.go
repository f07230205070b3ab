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
	Version     string      // the release asked for, resolved ("2.1" → "2.1.16"); for reports
	RecordSize  uint32      // bytes, a power of two
	Compression Compression // resolved: Off or a real algorithm, never On/Inherit
	Level       int         // zstd level: 1..19, or −N for zstd-fast-N; 0 otherwise
	Copies      int         // 1..3 DVAs per block
	Dedup       bool        // the dedup property
	// Vdev is the pool layout: one top-level vdev, or a *Pool of several
	// (whose first one receives every block; see Pool).
	Vdev Vdev
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
	switch {
	case p.Compression == Off, p.Compression == LZ4, p.Compression == LZJB, p.Compression == ZLE,
		p.Compression >= Gzip1 && p.Compression <= Gzip9:
	case p.Compression == Zstd:
		if !p.Release.Zstd || !(p.Level >= 1 && p.Level <= 19 || p.Level < 0 && fastLevel(-p.Level)) {
			return fmt.Errorf("invalid zstd level %d for release %s", p.Level, p.Release.Name)
		}
	default:
		return fmt.Errorf("compression %v is not modelled", p.Compression)
	}
	if p.Compression != Off {
		if _, err := NewCompressor(p.Compression, p.Level); err != nil {
			return err
		}
	}
	if p.Vdev == nil || p.Vdev.MinAlloc() == 0 {
		return errors.New("no vdev")
	}
	// dRAID arrived with 2.1.0 (commit b2255edcc0), which also started
	// the P4 band.
	if hasDRAID(p.Vdev) && p.Release.Band < BandP4 {
		return fmt.Errorf("dRAID needs OpenZFS 2.1.0 or later (release %s modelled)", p.Release.Name)
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

// minAlloc is spa_min_alloc and gcdAlloc spa_gcd_alloc, bytes: the minimum
// and the greatest common divisor of the top-level vdevs' minimum
// allocations (2^ashift; dRAID: data disks × 2^ashift). With one kind of
// top-level vdev both are its minimum allocation.
func (p *Policy) minAlloc() uint64 { return p.Vdev.MinAlloc() }
func (p *Policy) gcdAlloc() uint64 { return GCDAlloc(p.Vdev) }

// MaxCompressedSize is the capacity D, bytes, given to the compressor for a
// block of lsize bytes, by release band (zfs-semantics §4.3): lsize −
// lsize/8; in P1 rounded down to 512; in P6 (zio.c:
// zio_get_compression_max_size()) rounded down to the allocation granule
// unless the compressor is zle, and 112 when that is below the minimum
// allocation. 0 means the block is not even tried (P1, 512-byte blocks).
func (p *Policy) MaxCompressedSize(lsize uint64) uint64 {
	d := lsize - lsize/8
	switch p.Release.Band {
	case BandP1:
		d &^= 511
	case BandP6:
		if p.Compression != ZLE {
			d -= d % p.gcdAlloc()
			if d < p.minAlloc() {
				d = EmbeddedMax
			}
		}
	}
	return d
}

// RoundPSize turns a compressed size c (bytes, headers included) into the
// PSIZE ZFS allocates for it, by release band (zio.c: zio_write_compress()):
// P1, P2: c rounded up to 512; P3: to 2^(smallest ashift); P4: to a
// multiple of spa_min_alloc; P5, P6: spa_min_alloc when c fits in it, else
// c rounded up to spa_gcd_alloc. The caller stores the block uncompressed
// when the result is not smaller than LSIZE.
func (p *Policy) RoundPSize(c uint64) uint64 {
	up := func(c, g uint64) uint64 { return (c + g - 1) / g * g }
	m, g := p.minAlloc(), p.gcdAlloc()
	switch p.Release.Band {
	case BandP1, BandP2:
		return up(c, 512)
	case BandP3, BandP4:
		// P3 rounds to 2^(smallest ashift), which equals spa_min_alloc
		// for every layout that existed then (dRAID came with 2.1).
		return up(c, m)
	}
	if c <= m {
		return m
	}
	return up(c, g)
}

// DSize is the deflated allocated size of one block of psize bytes, summed
// over its copies (spa_misc.c: bp_get_dsize_sync()): per DVA,
// (ASIZE/512) × vdev_deflate_ratio. Every copy is assumed to land on a
// top-level vdev shaped like the first (exact when all are alike).
func (p *Policy) DSize(psize uint64) uint64 {
	return (p.ASize(psize) >> minBlockShift) * p.Vdev.DeflateRatio()
}

// LeastRatio is the least LSIZE/DSIZE a block of this policy can have:
// over every LSIZE from 512 bytes up to maxLSize in steps of 512 (a
// record's LSIZE is one of them), LSIZE over the DSIZE of the block
// stored uncompressed (PSIZE = LSIZE: a compressed block takes no more).
// 0 when maxLSize is under 512. A 512-byte block at ashift 12, one copy:
// 1/8.
func (p *Policy) LeastRatio(maxLSize uint64) float64 {
	var least float64
	for l := uint64(512); l <= maxLSize; l += 512 {
		if d := p.DSize(l); d > 0 {
			if r := float64(l) / float64(d); least == 0 || r < least {
				least = r
			}
		}
	}
	return least
}

// ASize is the raw allocated size of one block of psize bytes summed over
// its copies, bytes: the sectors it occupies, parity and padding included
// (a mirror's extra sides are not: see Mirror).
func (p *Policy) ASize(psize uint64) uint64 {
	return uint64(p.Copies) * p.Vdev.ASize(psize)
}

// RawSize turns a sum of DSize values of this policy back into the sum of
// the corresponding ASize values, bytes. Every DSize is a whole multiple of
// the deflate ratio, so this is exact: dsize / ratio × 512.
func (p *Policy) RawSize(dsize uint64) uint64 {
	return dsize / p.Vdev.DeflateRatio() << minBlockShift
}

// EmbedAllowed reports whether a tiny compressed block may be embedded in
// its block pointer under this policy (zio.c: zio_write_compress(); the
// embedded_data feature is assumed enabled, data not encrypted).
func (p *Policy) EmbedAllowed() bool {
	return p.Release.Embed && (!p.Dedup || p.Release.EmbedWithDedup)
}
