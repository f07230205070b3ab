package zio

import (
	"fmt"
	"strings"
)

// Compression is the block-pointer compression enum, as stored on disk
// (include/sys/zio_compress.h: enum zio_compress). A block whose compression
// failed or did not pay off is recorded as Off.
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

// modelled lists the compression property values this build can simulate.
var modelled = []string{"off", "lz4", "on"}

// ParseCompression resolves a compression property value the way
// zio_compress_select() does for release r ("on" → r.OnMeans). Values ZFS
// knows but ddtsim does not model yet, and unknown values, are errors that
// list the accepted values.
func ParseCompression(value string, r *Release) (Compression, error) {
	switch strings.ToLower(value) {
	case "off":
		return Off, nil
	case "lz4":
		return LZ4, nil
	case "on":
		return r.OnMeans, nil
	case "lzjb", "zle", "gzip", "zstd", "zstd-fast":
		return 0, fmt.Errorf("compression=%s is valid in ZFS but not modelled yet (accepted: %s)", value, strings.Join(modelled, ", "))
	}
	v := strings.ToLower(value)
	if strings.HasPrefix(v, "gzip-") || strings.HasPrefix(v, "zstd-") {
		return 0, fmt.Errorf("compression=%s is valid in ZFS but not modelled yet (accepted: %s)", value, strings.Join(modelled, ", "))
	}
	return 0, fmt.Errorf("invalid compression %q (accepted: %s)", value, strings.Join(modelled, ", "))
}
