package zio

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
)

// Compression is the block-pointer compression enum, as stored on disk
// (include/sys/zio_compress.h: enum zio_compress). A block whose compression
// failed or did not pay off is recorded as Off. All zstd levels share Zstd;
// the level lives in the zstd header inside the data.
type Compression uint8

// Compression values, numbered as on disk.
const (
	Inherit Compression = 0
	On      Compression = 1
	Off     Compression = 2
	LZJB    Compression = 3
	Empty   Compression = 4
	Gzip1   Compression = 5 // gzip-N is Gzip1 + N − 1
	Gzip9   Compression = 13
	ZLE     Compression = 14
	LZ4     Compression = 15
	Zstd    Compression = 16
)

// String returns the property value name ("lz4", "off", "gzip-6", ...).
func (c Compression) String() string {
	switch {
	case c == Inherit:
		return "inherit"
	case c == On:
		return "on"
	case c == Off:
		return "off"
	case c == LZJB:
		return "lzjb"
	case c == Empty:
		return "empty"
	case c >= Gzip1 && c <= Gzip9:
		return fmt.Sprintf("gzip-%d", c-Gzip1+1)
	case c == ZLE:
		return "zle"
	case c == LZ4:
		return "lz4"
	case c == Zstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// CompressionValues is the list of accepted compression property values,
// for messages.
const CompressionValues = "on, off, lz4, lzjb, zle, gzip, gzip-1 … gzip-9, zstd, zstd-1 … zstd-19, zstd-fast, zstd-fast-1 … zstd-fast-10, zstd-fast-20 … zstd-fast-100 (by 10), zstd-fast-500, zstd-fast-1000"

// ParseCompression resolves a compression property value the way
// zio_compress_select() and the property table do for release r: "on" →
// r.OnMeans, "gzip" → gzip-6, "zstd" → zstd-3, "zstd-fast" → zstd-fast-1.
// For zstd the level is returned too: 1..19, or −N for zstd-fast-N; it is 0
// for every other compressor. Unknown values, and zstd on releases without
// it, are errors listing the accepted values.
func ParseCompression(value string, r *Release) (c Compression, level int, err error) {
	v := strings.ToLower(strings.TrimSpace(value))
	bad := func() (Compression, int, error) {
		return 0, 0, fmt.Errorf("compression=%s: invalid (accepted: %s)", value, CompressionValues)
	}
	switch v {
	case "off":
		return Off, 0, nil
	case "on":
		return r.OnMeans, 0, nil
	case "lz4":
		if r.NoLZ4 {
			return 0, 0, &NotInReleaseError{Value: "compression=lz4", Name: "lz4", Release: r.Name, Since: "0.6.1"}
		}
		return LZ4, 0, nil
	case "lzjb":
		return LZJB, 0, nil
	case "zle":
		return ZLE, 0, nil
	case "gzip":
		return Gzip1 + 5, 0, nil
	case "zstd":
		v = "zstd-3"
	case "zstd-fast":
		v = "zstd-fast-1"
	}
	switch {
	case strings.HasPrefix(v, "gzip-"):
		n, err := strconv.Atoi(v[5:])
		if err != nil || n < 1 || n > 9 {
			return bad()
		}
		return Gzip1 + Compression(n-1), 0, nil
	case strings.HasPrefix(v, "zstd-fast-"):
		n, err := strconv.Atoi(v[10:])
		if err != nil || !fastLevel(n) {
			return bad()
		}
		level = -n
	case strings.HasPrefix(v, "zstd-"):
		n, err := strconv.Atoi(v[5:])
		if err != nil || n < 1 || n > 19 {
			return bad()
		}
		level = n
	default:
		return bad()
	}
	if !r.Zstd {
		return 0, 0, &NotInReleaseError{Value: "compression=" + value, Name: "zstd", Release: r.Name, Since: "2.0.0"}
	}
	return Zstd, level, nil
}

// NotInReleaseError is a property value the release modelled does not
// have (zstd before 2.0, lz4 in 0.6.0).
type NotInReleaseError struct {
	Value   string // as given: "compression=zstd"
	Name    string // what is missing: "zstd"
	Release string // the release, or the row of the release table
	Since   string // the first release that has it
}

func (e *NotInReleaseError) Error() string {
	return fmt.Sprintf("%s does not exist in release %s (%s came with %s)", e.Value, e.Release, e.Name, e.Since)
}

func fastLevel(n int) bool {
	for _, l := range zstd.FastLevels {
		if l == n {
			return true
		}
	}
	return false
}

// CompressionName is the property value of a compression and zstd level, as
// `zfs get compression` prints it ("lz4", "gzip-6", "zstd-3", "zstd-fast-1").
func CompressionName(c Compression, level int) string {
	if c != Zstd {
		return c.String()
	}
	if level < 0 {
		return fmt.Sprintf("zstd-fast-%d", -level)
	}
	return fmt.Sprintf("zstd-%d", level)
}
