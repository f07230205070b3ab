package gzip

import (
	"errors"
	"fmt"
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

// levelMap gives the github.com/klauspost/compress/zlib level used for each
// ZFS gzip level (index 1..9). Go's deflate encoders compress a little less
// than zlib's at the same nominal level, so each ZFS level maps to the library
// level whose total PSIZE came closest to C zlib 1.2.13 at that level over the
// ~755 stored 128 KiB blocks of the golden input tree (ZFS 2.3.2 rules,
// ashift 12), measured with -tags zlib. Total PSIZE error of the chosen level
// vs C zlib: gzip-1 +0.17%, 2 +0.11%, 3 +0.26%, 4 +0.40%, 5 −0.01%,
// 6 +0.02%, 7 +0.12%, 8 +0.13%, 9 +0.15% (klauspost beat the standard
// library's compress/zlib, whose best choices were off by −0.97%, −0.28%,
// −0.10%, −0.02%, −0.02%, +0.09%, +0.19%, +0.20% and +0.22%).
var levelMap = [MaxLevel + 1]int{0, 3, 4, 5, 6, 7, 9, 9, 9, 9}

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

// zlibHeader returns the 2-byte zlib header C zlib's deflate writes for a
// stream with windowBits 15 at compression level: CMF 0x78, FLG with FLEVEL
// 0 (level 1), 1 (2..5), 2 (6) or 3 (7..9) and the FCHECK bits (deflate.c:
// deflate(), "Write the zlib header").
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
