package zstd

// The klauspost/compress/zstd configuration of the pure-Go build. It is
// compiled in every build so that the libzstd build's tests can re-measure
// the mapping (TestLevelMap).

import (
	"math/bits"

	kzstd "github.com/klauspost/compress/zstd"
)

// setting is how a ZFS level is approximated with klauspost/compress/zstd.
type setting struct {
	level     kzstd.EncoderLevel
	noEntropy bool // literals stored raw (libzstd does so at negative levels)
	allLit    bool // Huffman-code literals even in blocks without matches
	window    int  // match window in bytes; 0: libzstd's (windowLog)
}

// settingFor returns the klauspost encoder setting for a ZFS level (1..19,
// or −N).
//
// klauspost/compress/zstd has four strengths (Fastest ≈ zstd 1, Default ≈ 3,
// Better ≈ 7, Best ≈ 11) and nothing faster than Fastest, so the mapping is
// coarse. Each ZFS level got the setting whose total PSIZE came closest to
// libzstd's over the ~755 stored 128 KiB blocks of the golden input tree (ZFS
// 2.3.2 rules, ashift 12; reference: libzstd 1.4.4 of the libzstd build, whose
// frames are ZFS's own on every zstd golden block, and the golden pools for
// zstd-1 (1 MiB records), zstd-3, zstd-19 and zstd-fast-1). Resulting total
// PSIZE error against it at 128 KiB (TestLevelMap in the libzstd build
// re-measures it):
//
//	zstd-1 +0.74% (chosen for the 1 MiB golden pool, −0.14% there)
//	zstd-2 −0.01%, zstd-3 −0.12%, zstd-4 +0.30%, zstd-5 −0.69%
//	zstd-6 … 12: −0.04% … +0.32%
//	zstd-13 +0.60%, zstd-14 … 19: +1.6% … +1.9% (libzstd's btopt/btultra
//	  parsers compress better than any klauspost setting)
//	zstd-fast-1 +0.40% (also against the golden pool), zstd-fast-2 −0.59%,
//	  zstd-fast-3 … 10: −0.56% … +0.13%, then from −3.6% (fast-20) down to
//	  −17.1% (fast-1000)
//
// libzstd's negative levels skip input positions (acceleration), which no
// klauspost setting does; at full window even Fastest compresses far better
// (fast-3 −2.2% … fast-1000 −24%). A small match window stands in for the
// acceleration: it is the knob that brought the totals closest, chosen per
// level from 1 KiB to 16 KiB. It is an empirical fit to this mix of text and
// programs, not a model of the algorithm: data whose repeats lie farther
// apart than the window (duplicated pages, for one) will compress less here
// than with libzstd. From zstd-fast-20 on no setting gets close; the
// prediction is too optimistic there.
//
// Literals are stored raw at negative levels, as libzstd 1.4.5 does there
// (ZSTD_disableLiteralsCompression: strategy fast with targetLength > 0).
func settingFor(level int) setting {
	switch {
	case level == -1:
		return setting{level: kzstd.SpeedDefault, noEntropy: true, window: 16 << 10}
	case level == -2:
		return setting{level: kzstd.SpeedDefault, noEntropy: true, window: 16 << 10}
	case level < 0:
		// Fitted per level (TestLevelMap); from fast-10 on, Fastest with
		// a 1 KiB window, the closest though far off.
		switch level {
		case -3:
			return setting{level: kzstd.SpeedFastest, noEntropy: true}
		case -4:
			return setting{level: kzstd.SpeedDefault, noEntropy: true, window: 4 << 10}
		case -5:
			return setting{level: kzstd.SpeedFastest, noEntropy: true, window: 16 << 10}
		case -6:
			return setting{level: kzstd.SpeedDefault, noEntropy: true, window: 2 << 10}
		case -7, -8:
			return setting{level: kzstd.SpeedFastest, noEntropy: true, window: 4 << 10}
		case -9:
			return setting{level: kzstd.SpeedDefault, noEntropy: true, window: 1 << 10}
		case -10:
			return setting{level: kzstd.SpeedFastest, noEntropy: true, window: 2 << 10}
		}
		return setting{level: kzstd.SpeedFastest, noEntropy: true, window: 1 << 10}
	case level == 1:
		return setting{level: kzstd.SpeedFastest, allLit: true}
	case level == 2:
		return setting{level: kzstd.SpeedDefault}
	case level <= 4:
		return setting{level: kzstd.SpeedBetterCompression, allLit: true}
	case level == 5:
		return setting{level: kzstd.SpeedBestCompression}
	default:
		return setting{level: kzstd.SpeedBestCompression, allLit: true}
	}
}

// windowLog is libzstd 1.4.5's windowLog for the level when the source is
// larger than 256 KiB (ZSTD_defaultCParameters[0]; for smaller sources
// libzstd shrinks the window to the source size, which never limits
// matches): matches reach at most 2^windowLog bytes back. It matters for
// blocks larger than 512 KiB only.
func windowLog(level int) int {
	switch {
	case level <= 1: // negative levels use row 0, also 19
		return 19
	case level == 2:
		return 20
	case level <= 8:
		return 21
	case level <= 16:
		return 22
	default:
		return 23
	}
}

// newEncoder returns a klauspost encoder configured for a ZFS level: the
// setting of settingFor, libzstd's window, 128 KiB blocks, no checksum, no
// single-segment flag (libzstd sets it only with a content size), one
// goroutine.
func newEncoder(level int) (*kzstd.Encoder, error) {
	s := settingFor(level)
	w := 1 << windowLog(level)
	if s.window != 0 {
		w = s.window
	}
	return kzstd.NewWriter(nil,
		// The window first: WithEncoderLevel would otherwise also cut the
		// block size of SpeedFastest to 64 KiB (libzstd: 128 KiB).
		kzstd.WithWindowSize(w),
		kzstd.WithEncoderLevel(s.level),
		kzstd.WithEncoderConcurrency(1),
		kzstd.WithEncoderCRC(false),
		kzstd.WithSingleSegment(false),
		kzstd.WithZeroFrames(true),
		kzstd.WithNoEntropyCompression(s.noEntropy),
		kzstd.WithAllLitEntropyCompression(s.allLit),
	)
}

// Frame_Header_Descriptor bits (RFC 8878 §3.1.1.1.1).
const (
	fhdFCSFlag       = 0xC0
	fhdSingleSegment = 0x20
	fhdChecksum      = 0x04
	fhdDictIDFlag    = 0x03
)

// reframe rewrites a zstd frame f made by klauspost's EncodeAll for a
// source of srcLen bytes into out in the shape libzstd produces for ZFS: a
// magicless 2-byte frame header (descriptor 0x00: no single-segment flag, no
// content size, no dictionary ID, no checksum; then the window descriptor)
// followed by f's blocks. It returns the new frame's length, or false when
// that exceeds len(out).
func reframe(out, f []byte, srcLen int) (int, bool) {
	// f: magic (4), descriptor, [window descriptor], [dictionary ID],
	// [content size], blocks, [checksum].
	fhd := f[4]
	p := 5
	var wd byte
	if fhd&fhdSingleSegment == 0 {
		wd = f[p]
		p++
	} else {
		// Not expected (WithSingleSegment(false)); derive a window
		// descriptor covering the whole source.
		wl := max(10, bits.Len(uint(max(srcLen, 1)-1)))
		wd = byte(wl-10) << 3
	}
	p += [4]int{0, 1, 2, 4}[fhd&fhdDictIDFlag]
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && fhd&fhdSingleSegment != 0 {
		fcs = 1
	}
	p += fcs
	body := f[p:]
	if fhd&fhdChecksum != 0 {
		body = body[:len(body)-4]
	}
	n := 2 + len(body)
	if n > len(out) {
		return 0, false
	}
	out[0] = 0
	out[1] = wd
	copy(out[2:], body)
	return n, true
}
