// Package zio models the OpenZFS write path for level-0 file data: which
// compressor runs with which capacity, when a block becomes a hole or an
// embedded block pointer, how PSIZE is rounded, and how much space (ASIZE,
// DSIZE) it takes on a vdev. Its names follow module/zfs/zio.c and
// module/zfs/vdev*.c.
package zio

import (
	"fmt"
	"strings"
)

// PsizeBand names one of the release-specific rule sets that turn a
// compressed size into PSIZE (zfs-semantics §4.3).
type PsizeBand int

// The PSIZE bands of zfs-semantics §4.3. Only P6 is modelled so far.
const (
	// BandP6 (2.3.0+, zio.c: zio_get_compression_max_size()): the capacity
	// is L − L/8 rounded down to the allocation granule (112 bytes when
	// that falls below the minimum allocation); PSIZE is the minimum
	// allocation when the output fits in it, else the output rounded up to
	// the granule; a result ≥ LSIZE is stored uncompressed.
	BandP6 PsizeBand = 6
)

// Release is one row of the release matrix (zfs-semantics §0.1): everything
// that makes one OpenZFS release store the same data differently from
// another. The model consults this table; it holds no release ifs of its own.
type Release struct {
	Name string // as given to --release, e.g. "2.3.2"
	Note string // what the row models, for --release list and errors

	Band PsizeBand
	// EmbedWithDedup: tiny compressed blocks (≤ 112 bytes) are embedded even
	// when dedup=on (upstream 2.3.3 / 2.4.0, commit 602fecc316; carried by
	// Debian's 2.3.2 build).
	EmbedWithDedup bool
	// ZeroHoleWithDedup: with compression=off and dedup=on, all-zero blocks
	// become holes (upstream 2.3.3 / 2.4.0, commit 4c8d0471fa).
	ZeroHoleWithDedup bool
	// OnMeans is the compressor that compression=on selects.
	OnMeans Compression
	// DefaultCompression is the compression property's default.
	DefaultCompression Compression
	// MaxRecordSize is zfs_max_recordsize, bytes.
	MaxRecordSize uint32
	// BytesSuffix: the DDT table's byte columns use zfs_nicebytes ("512B",
	// 0.7.0+) instead of plain numbers ("512").
	BytesSuffix bool
}

// Releases lists the modelled releases, newest first. The first is the
// default.
var Releases = []Release{
	{
		Name:               "2.3.2",
		Note:               "OpenZFS 2.3.2 as built by Debian (zfs 2.3.2-2~bpo12+2): embeds tiny blocks with dedup=on, stores zero blocks with compression=off",
		Band:               BandP6,
		EmbedWithDedup:     true,
		ZeroHoleWithDedup:  false,
		OnMeans:            LZ4,
		DefaultCompression: LZ4,
		MaxRecordSize:      16 << 20,
		BytesSuffix:        true,
	},
}

// LookupRelease returns the release row named name. An unknown name is an
// error listing the modelled releases.
func LookupRelease(name string) (*Release, error) {
	var names []string
	for i := range Releases {
		if Releases[i].Name == name {
			return &Releases[i], nil
		}
		names = append(names, Releases[i].Name)
	}
	return nil, fmt.Errorf("release %q is not modelled (modelled: %s)", name, strings.Join(names, ", "))
}
