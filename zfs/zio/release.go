package zio

import (
	"fmt"
	"strconv"
	"strings"
)

// PsizeBand names one of the release-specific rule sets that turn a
// compressed size into PSIZE (zfs-semantics §4.3).
type PsizeBand int

// The PSIZE bands of zfs-semantics §4.3 (module/zfs/zio.c and
// zio_compress.c of each release).
const (
	// BandP1 (0.6.0–0.6.3): capacity (L − L/8) rounded down to 512 (none
	// for a 512-byte block); PSIZE = output rounded up to 512.
	BandP1 PsizeBand = 1
	// BandP2 (0.6.4): capacity L − L/8; PSIZE = output rounded up to 512;
	// uncompressed when that reaches LSIZE. Embedded blocks appear.
	BandP2 PsizeBand = 2
	// BandP3 (0.6.5–2.0.x): PSIZE = output rounded up to 2^(smallest
	// ashift) (commit c3520e7f1f).
	BandP3 PsizeBand = 3
	// BandP4 (2.1.x): PSIZE = output rounded up to a multiple of
	// spa_min_alloc (dRAID commit b2255edcc0).
	BandP4 PsizeBand = 4
	// BandP5 (2.2.x): PSIZE = spa_min_alloc when the output fits in it,
	// else the output rounded up to spa_gcd_alloc.
	BandP5 PsizeBand = 5
	// BandP6 (2.3.0+, zio.c: zio_get_compression_max_size()): as P5, but
	// the capacity is L − L/8 rounded down to spa_gcd_alloc (not for zle),
	// and 112 bytes when that falls below spa_min_alloc.
	BandP6 PsizeBand = 6
)

// version is a release number, up to four components (0.6.5.11).
type version [4]int

func (v version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
	if v[3] != 0 {
		s += fmt.Sprintf(".%d", v[3])
	}
	return s
}

func (v version) less(o version) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

// Release is one row of the release matrix (zfs-semantics §0.1): everything
// that makes one OpenZFS release store the same data differently from
// another. The model consults this table; it holds no release ifs of its own.
type Release struct {
	Name        string  // the row's name, as printed in reports
	First, Last version // the releases the row covers, inclusive
	Note        string  // what sets the row apart, for --release list

	Band PsizeBand
	// Embed: the embedded_data feature exists (0.6.4+): compressed output of
	// at most 112 bytes lives in the block pointer.
	Embed bool
	// EmbedWithDedup: tiny blocks are embedded even when dedup=on
	// (upstream 2.3.3 / 2.4.0, commit 602fecc316; carried by Debian's 2.3.2).
	EmbedWithDedup bool
	// ZeroHoleWithDedup: with compression=off and dedup=on, all-zero blocks
	// become holes (upstream 2.3.3 / 2.4.0, commit 4c8d0471fa).
	ZeroHoleWithDedup bool
	// OnMeans is the compressor that compression=on selects
	// (zio_compress_select()).
	OnMeans Compression
	// DefaultCompression is the compression property's default
	// (include/sys/zio.h: ZIO_COMPRESS_DEFAULT).
	DefaultCompression Compression
	// Zstd: the zstd compressor exists (2.0.0+).
	Zstd bool
	// ZstdEarlyAbort: zstd-3..19 on blocks ≥ 128 KiB first tries LZ4 and
	// zstd-1 (2.2.0+, module/zstd/zfs_zstd.c, zfs-semantics §4.5).
	ZstdEarlyAbort bool
	// NoLZ4: compression=lz4 does not exist yet (it came with 0.6.1).
	NoLZ4 bool
	// MaxRecordSize is zfs_max_recordsize, bytes.
	MaxRecordSize uint32
	// BytesSuffix: the DDT table's byte columns use zfs_nicebytes ("512B",
	// 0.7.0+) instead of plain numbers ("512").
	BytesSuffix bool
	// VolBlockSize is the volblocksize default, bytes
	// (include/sys/fs/zfs.h: ZVOL_DEFAULT_BLOCKSIZE: 8K, 16K from 2.2.0).
	VolBlockSize uint32
	// VolBlockSizeByPool: zfs create -V raises the default volblocksize
	// to the pool's allocation width (2.1.0+, cmd/zfs/zfs_main.c:
	// default_volblocksize(); see DefaultVolBlockSize).
	VolBlockSizeByPool bool
	// DDTLeaf32K: new DDT ZAPs get 32 KiB leaf and indirect blocks instead
	// of 4 KiB (2.2.0+, module/zfs/ddt_zap.c: ddt_zap_default_bs = 15,
	// commit 2b10e32561).
	DDTLeaf32K bool
	// FastDedup: a new pool's DDT is a fast-dedup table (FDT): flat
	// 72-byte entries and an in-memory log (2.3.0+, feature fast_dedup,
	// module/zfs/ddt.c, ddt_log.c).
	FastDedup bool
	// DDTLogPasses: the dedup log is flushed into the ZAPs over up to 8
	// sync passes of a txg, so that some DDT blocks are rewritten in pass 8
	// and stored uncompressed (2.3.0–2.3.3: ddt.c:
	// ddt_sync_flush_log_incremental(); from 2.3.4 the flush runs in pass 1
	// only, commit 661310ff5c).
	DDTLogPasses bool
	// ZPLDefaultQuotas: a new file system's master node also holds the six
	// default user/group/project (object) quota properties, 13 entries
	// where there were 7, so its microzap is 1 KiB instead of 512 bytes
	// (2.4.0+, commit 2a8d9d9607: zfs_ioctl.c: zfs_fill_zplprops_impl();
	// zfs_znode_os.c: zfs_create_fs(); zap_micro.c grows a microzap by
	// 512 bytes when full).
	ZPLDefaultQuotas bool
}

// Contains reports whether release v (e.g. "2.1.11") falls in the row.
func (r *Release) Contains(v string) bool {
	ver, n, err := parseVersion(v)
	if err != nil || n < 3 {
		return false
	}
	return !ver.less(r.First) && !r.Last.less(ver)
}

// Releases lists the modelled releases, oldest first (zfs-semantics §0.1).
// The last row is the default.
var Releases = []Release{
	{Name: "0.6.0", First: version{0, 6, 0}, Last: version{0, 6, 0, 99}, Note: "P1 rounding to 512, no embedded blocks, on = lzjb, no lz4, max recordsize 128K",
		Band: BandP1, OnMeans: LZJB, DefaultCompression: Off, MaxRecordSize: 128 << 10, NoLZ4: true, VolBlockSize: 8 << 10},
	{Name: "0.6.1", First: version{0, 6, 1}, Last: version{0, 6, 3, 99}, Note: "as 0.6.0, with lz4 (a pool feature)",
		Band: BandP1, OnMeans: LZJB, DefaultCompression: Off, MaxRecordSize: 128 << 10, VolBlockSize: 8 << 10},
	{Name: "0.6.4", First: version{0, 6, 4}, Last: version{0, 6, 4, 99}, Note: "P2 rounding to 512, embedded blocks, on = lzjb",
		Band: BandP2, Embed: true, OnMeans: LZJB, DefaultCompression: Off, MaxRecordSize: 128 << 10, VolBlockSize: 8 << 10},
	{Name: "0.6.5", First: version{0, 6, 5}, Last: version{0, 6, 5, 99}, Note: "P3 rounding to the sector, on = lz4, large blocks (1M), plain byte numbers (512)",
		Band: BandP3, Embed: true, OnMeans: LZ4, DefaultCompression: Off, MaxRecordSize: 1 << 20, VolBlockSize: 8 << 10},
	{Name: "0.7", First: version{0, 7, 0}, Last: version{0, 8, 6, 99}, Note: "as 0.6.5, byte columns with a B suffix (512B); 0.8 adds encryption (not modelled)",
		Band: BandP3, Embed: true, OnMeans: LZ4, DefaultCompression: Off, MaxRecordSize: 1 << 20, BytesSuffix: true, VolBlockSize: 8 << 10},
	{Name: "2.0", First: version{2, 0, 0}, Last: version{2, 0, 7, 99}, Note: "zstd (no early abort)",
		Band: BandP3, Embed: true, OnMeans: LZ4, DefaultCompression: Off, Zstd: true, MaxRecordSize: 1 << 20, BytesSuffix: true, VolBlockSize: 8 << 10},
	{Name: "2.1", First: version{2, 1, 0}, Last: version{2, 1, 16, 99}, Note: "P4 rounding to a multiple of spa_min_alloc (dRAID)",
		Band: BandP4, Embed: true, OnMeans: LZ4, DefaultCompression: Off, Zstd: true, MaxRecordSize: 1 << 20, BytesSuffix: true, VolBlockSize: 8 << 10, VolBlockSizeByPool: true},
	{Name: "2.2", First: version{2, 2, 0}, Last: version{2, 2, 11, 99}, Note: "P5 rounding (min alloc, then gcd), compression on (lz4) by default, zstd early abort, recordsize up to 16M",
		Band: BandP5, Embed: true, OnMeans: LZ4, DefaultCompression: LZ4, Zstd: true, ZstdEarlyAbort: true, MaxRecordSize: 16 << 20, BytesSuffix: true,
		VolBlockSize: 16 << 10, VolBlockSizeByPool: true, DDTLeaf32K: true},
	{Name: "2.3.0", First: version{2, 3, 0}, Last: version{2, 3, 1, 99}, Note: "P6: the 12.5% saving must hold after rounding; upstream 2.3.0-2.3.2",
		Band: BandP6, Embed: true, OnMeans: LZ4, DefaultCompression: LZ4, Zstd: true, ZstdEarlyAbort: true, MaxRecordSize: 16 << 20, BytesSuffix: true,
		VolBlockSize: 16 << 10, VolBlockSizeByPool: true, DDTLeaf32K: true, FastDedup: true, DDTLogPasses: true},
	{Name: "2.3.2", First: version{2, 3, 2}, Last: version{2, 3, 2, 99}, Note: "as built by Debian (2.3.2-2~bpo12+2, the golden cases): embeds tiny blocks with dedup=on, stores zero blocks with compression=off",
		Band: BandP6, Embed: true, EmbedWithDedup: true, OnMeans: LZ4, DefaultCompression: LZ4, Zstd: true, ZstdEarlyAbort: true, MaxRecordSize: 16 << 20, BytesSuffix: true,
		VolBlockSize: 16 << 10, VolBlockSizeByPool: true, DDTLeaf32K: true, FastDedup: true, DDTLogPasses: true},
	{Name: "2.3.3", First: version{2, 3, 3}, Last: version{2, 3, 3, 99}, Note: "embeds with dedup=on; zero blocks are holes with dedup=on even when compression=off",
		Band: BandP6, Embed: true, EmbedWithDedup: true, ZeroHoleWithDedup: true, OnMeans: LZ4, DefaultCompression: LZ4, Zstd: true, ZstdEarlyAbort: true, MaxRecordSize: 16 << 20, BytesSuffix: true,
		VolBlockSize: 16 << 10, VolBlockSizeByPool: true, DDTLeaf32K: true, FastDedup: true, DDTLogPasses: true},
	{Name: "2.3.4", First: version{2, 3, 4}, Last: version{2, 3, 9, 99}, Note: "2.3.4-2.3.x: as 2.3.3, the dedup log flushed in one sync pass",
		Band: BandP6, Embed: true, EmbedWithDedup: true, ZeroHoleWithDedup: true, OnMeans: LZ4, DefaultCompression: LZ4, Zstd: true, ZstdEarlyAbort: true, MaxRecordSize: 16 << 20, BytesSuffix: true,
		VolBlockSize: 16 << 10, VolBlockSizeByPool: true, DDTLeaf32K: true, FastDedup: true},
	{Name: "2.4", First: version{2, 4, 0}, Last: version{2, 4, 4, 99}, Note: "as 2.3.4, a new file system's master node 1K (default quota properties)",
		Band: BandP6, Embed: true, EmbedWithDedup: true, ZeroHoleWithDedup: true, OnMeans: LZ4, DefaultCompression: LZ4, Zstd: true, ZstdEarlyAbort: true, MaxRecordSize: 16 << 20, BytesSuffix: true,
		VolBlockSize: 16 << 10, VolBlockSizeByPool: true, DDTLeaf32K: true, FastDedup: true, ZPLDefaultQuotas: true},
}

// knownPatches lists, per major.minor series, the last patch release (and,
// for 0.6.4 and 0.6.5, the last fourth component) that was tagged upstream,
// so that a release that never existed is refused rather than modelled.
var knownPatches = map[[2]int]int{
	{0, 6}: 5, {0, 7}: 13, {0, 8}: 6, {2, 0}: 7, {2, 1}: 16, {2, 2}: 11, {2, 3}: 9, {2, 4}: 4,
}

var knownFourth = map[[3]int]int{{0, 6, 4}: 2, {0, 6, 5}: 11}

// exists reports whether v, given with n components, names a real release.
func (v version) exists(n int) bool {
	last, ok := knownPatches[[2]int{v[0], v[1]}]
	if !ok || n < 2 && v[1] != 0 {
		return ok
	}
	if n >= 3 && v[2] > last {
		return false
	}
	if n == 4 && v[3] > knownFourth[[3]int{v[0], v[1], v[2]}] {
		return false
	}
	return true
}

// newest returns the newest real release that v (n components given)
// names: "2.1" → 2.1.16, "0.6" → 0.6.5.11.
func (v version) newest(n int) version {
	if n < 2 {
		best := version{}
		for k := range knownPatches {
			if k[0] == v[0] && (best == version{} || best[1] < k[1]) {
				best = version{k[0], k[1]}
			}
		}
		v, n = best, 2
	}
	if n < 3 {
		v[2] = knownPatches[[2]int{v[0], v[1]}]
	}
	if n < 4 {
		v[3] = knownFourth[[3]int{v[0], v[1], v[2]}]
	}
	return v
}

// DefaultRelease is the release modelled when none is named: the newest.
var DefaultRelease = &Releases[len(Releases)-1]

// parseVersion parses "2", "2.1", "2.1.11" or "0.6.5.11", returning the
// number of components given.
func parseVersion(s string) (version, int, error) {
	var v version
	parts := strings.Split(strings.TrimPrefix(strings.TrimPrefix(s, "zfs-"), "v"), ".")
	if len(parts) > 4 || s == "" {
		return v, 0, fmt.Errorf("invalid release %q", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, 0, fmt.Errorf("invalid release %q", s)
		}
		v[i] = n
	}
	return v, len(parts), nil
}

// LookupRelease returns the row modelling release name: a full version
// ("2.1.11", "0.6.5.11"), or a prefix ("2.1", "0.7", "2"), which means the
// newest release of that series (2.1.16, 0.7.13, 2.4.4); "latest" is the
// default row. It also returns the release the name resolved to, for
// reports. Releases that never existed, or are not modelled, are errors
// listing what is modelled.
func LookupRelease(name string) (*Release, error) {
	r, _, err := ResolveRelease(name)
	return r, err
}

// ResolveRelease is LookupRelease that also returns the full version the
// name stands for ("2.1" → "2.1.16").
func ResolveRelease(name string) (*Release, string, error) {
	if name == "latest" || name == "" {
		name = "2.4"
	}
	v, n, err := parseVersion(name)
	if err == nil && v.exists(n) {
		full := v.newest(n)
		for i := len(Releases) - 1; i >= 0; i-- {
			r := &Releases[i]
			if !full.less(r.First) && !r.Last.less(full) {
				return r, full.String(), nil
			}
		}
	}
	return nil, "", fmt.Errorf("release %q is not modelled (modelled: the OpenZFS releases %s; see --release list)", name, ReleaseRanges())
}

// ReleaseRanges describes the modelled range of releases for messages.
func ReleaseRanges() string {
	return fmt.Sprintf("%s to %s", Releases[0].First, Releases[len(Releases)-1].Last.trim())
}

func (v version) trim() string {
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}

// Covers describes the releases of the row, e.g. "2.1.0-2.1.16".
func (r *Release) Covers() string {
	if r.First.trim() == r.Last.trim() {
		return r.First.trim()
	}
	return r.First.trim() + "-" + r.Last.trim()
}

// VersionLess reports whether release version a is older than b
// ("0.6.5.11" < "0.7.0", "2.1" < "2.1.5"); a version that does not parse
// counts as 0.0.0.
func VersionLess(a, b string) bool {
	va, _, _ := parseVersion(a)
	vb, _, _ := parseVersion(b)
	return va.less(vb)
}
