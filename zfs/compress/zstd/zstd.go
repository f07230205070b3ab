package zstd

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrNoFit: the output did not fit in the capacity D. It corresponds to
// ZSTD_compress2() failing (in practice with dstSize_tooSmall) or D being
// smaller than the header, upon which zfs_zstd_compress_impl() returns s_len
// and ZFS stores the block uncompressed.
var ErrNoFit = errors.New("zstd: output does not fit")

// HeaderSize is the size of ZFS's zfs_zstdhdr_t in bytes.
const HeaderSize = 8

// Version is the libzstd version ZFS records in every header
// (ZSTD_VERSION_NUMBER of the bundled zstd 1.4.5).
const Version = 10405

// Enum values of enum zio_zstd_levels (include/sys/zstd/zstd.h).
const (
	levelReserve = 101 // ZIO_ZSTD_LEVEL_RESERVE
	levelFast    = 102 // ZIO_ZSTD_LEVEL_FAST; ZIO_ZSTD_LEVEL_FAST_1 = 103
)

// FastLevels are the N of the zstd-fast-N values ZFS accepts, in enum order
// (module/zstd/zfs_zstd.c: zstd_levels[]).
var FastLevels = [...]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 500, 1000}

// levelEnum returns the ZFS level enum stored in header byte 4 for a level
// as New takes it (1..19, or −N for zstd-fast-N).
func levelEnum(level int) (byte, error) {
	if level >= 1 && level <= 19 {
		return byte(level), nil
	}
	for i, n := range FastLevels {
		if level == -n {
			return byte(levelFast + 1 + i), nil
		}
	}
	return 0, fmt.Errorf("zstd: level %d is not a ZFS zstd level (1..19, or −N for zstd-fast-N with N in 1..10, 20, 30, …, 100, 500, 1000)", level)
}

// putHeader writes zfs_zstdhdr_t for a frame of frameLen bytes.
func putHeader(dst []byte, frameLen int, enum byte) {
	binary.BigEndian.PutUint32(dst[0:4], uint32(frameLen))
	binary.BigEndian.PutUint32(dst[4:8], uint32(enum)<<24|Version)
}
