package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Settings are what a user chooses: everything that decides how the
// blocks of the files scanned are accounted. The zero value of a field
// means the default zfs create (or zpool create) would give: the newest
// release, recordsize 128K, the release's default compression, one copy,
// dedup off, one disk, ashift 12.
//
// Settings are checked by Policy; Parse builds them from their text forms
// with messages in the words of the flags.
type Settings struct {
	// Release is the OpenZFS release modelled, as a version or a prefix
	// of one ("2.1.11", "2.2", "0.6.5.11"); "" or "latest" is the newest
	// (zio.ResolveRelease).
	Release string
	// RecordSize is the dataset's recordsize, bytes: a power of two from
	// 512 to the release's largest; 0 is 128K. Not with Zvol.
	RecordSize uint32
	// Zvol stores each file as a volume (zfs create -V): every block is
	// VolBlockSize bytes (zio.ZvolRecords).
	Zvol bool
	// VolBlockSize is the volumes' volblocksize, bytes; 0 is the default
	// zfs create -V picks for the release and pool
	// (zio.DefaultVolBlockSize). Only with Zvol.
	VolBlockSize uint32
	// Compression is the compression property as zfs get prints it or zfs
	// set takes it ("lz4", "gzip-6", "zstd-fast-1", "on", "off"); "" is
	// the release's default (zio.ParseCompression).
	Compression string
	// Copies is the copies property, 1 to 3; 0 is 1.
	Copies int
	// Dedup is the dedup property as given, lower-cased ("on", "verify",
	// "sha256,verify", ...); "" and "off" are off. Every other value turns
	// dedup on; which checksum it names does not change the figures
	// (blocks are keyed by their content).
	Dedup string
	// Vdevs are the pool's top-level vdevs as zpool create names them
	// with a disk count ("raidz2 6", "mirror 2", "draid2:4d:1s:11c");
	// none is one disk (zio.NewPool).
	Vdevs []string
	// Ashift is the pool's sector size as a power of two, 9 to 16; 0 is
	// 12.
	Ashift int
	// Sparse says how the files are copied onto the pool (cp --sparse).
	Sparse Sparse
	// Guest reads virtual-disk images (qcow2, VMDK, VHDX, VHD; detected
	// by content) as the disk their guest sees, as qemu-img convert -O raw
	// would write it to the pool: unallocated ranges are holes (package
	// guest). Raw files are read as they are either way.
	Guest bool
	// Sample N > 1 keeps 1/N of the block contents, chosen by hash
	// (ddt.InSample); 0 and 1 keep all.
	Sample uint64
}

// defaultRecordSize is the recordsize of a new dataset, bytes.
const defaultRecordSize = 128 << 10

// DedupOn reports whether the dedup property turns dedup on.
func (s *Settings) DedupOn() bool { return s.Dedup != "" && s.Dedup != "off" }

// SampleRate returns N of a 1/N sample, 1 without sampling.
func (s *Settings) SampleRate() uint64 { return max(s.Sample, 1) }

// AshiftValue returns the ashift in force (12 when Ashift is 0).
func (s *Settings) AshiftValue() int {
	if s.Ashift == 0 {
		return 12
	}
	return s.Ashift
}

// Policy returns the write policy the settings describe: for volumes its
// RecordSize is the volblocksize. It fails, saying which setting and why,
// on a release that is not modelled, an invalid value, or one the release
// does not have.
func (s *Settings) Policy() (*zio.Policy, error) {
	rel, version, err := zio.ResolveRelease(s.Release)
	if err != nil {
		return nil, err
	}
	ashift := s.AshiftValue()
	if ashift < zio.MinAshift || ashift > zio.MaxAshift {
		return nil, fmt.Errorf("ashift %d: invalid (accepted: %d to %d, the sector size as a power of two)", ashift, zio.MinAshift, zio.MaxAshift)
	}
	pool, err := zio.NewPool(s.Vdevs, ashift)
	if err != nil {
		return nil, err
	}
	p := &zio.Policy{
		Release:     rel,
		Version:     version,
		RecordSize:  defaultRecordSize,
		Compression: rel.DefaultCompression,
		Copies:      1,
		Vdev:        pool,
	}
	if s.Sparse < SparseAuto || s.Sparse > SparseNever {
		return nil, fmt.Errorf("sparse mode %d: invalid (accepted: SparseAuto, SparseAlways, SparseNever)", int(s.Sparse))
	}
	if s.RecordSize != 0 {
		if err := checkRecordSize(uint64(s.RecordSize), rel); err != nil {
			return nil, fmt.Errorf("recordsize=%d: invalid (accepted: a power of two from 512 to %d bytes)", s.RecordSize, rel.MaxRecordSize)
		}
		p.RecordSize = s.RecordSize
	}
	if err := CheckCase("compression", s.Compression); err != nil {
		return nil, err
	}
	if s.Compression != "" {
		if p.Compression, p.Level, err = zio.ParseCompression(s.Compression, rel); err != nil {
			return nil, err
		}
	}
	if s.Copies != 0 {
		if s.Copies < 1 || s.Copies > 3 {
			return nil, fmt.Errorf("copies=%d: invalid (accepted: 1, 2, 3)", s.Copies)
		}
		p.Copies = s.Copies
	}
	if s.Dedup != "" {
		if p.Dedup, err = parseDedup(s.Dedup, version); err != nil {
			return nil, err
		}
	}
	switch {
	case s.Zvol && s.RecordSize != 0:
		return nil, errors.New("-o recordsize does not apply to volumes (--zvol, --volblocksize): their block size is the volblocksize")
	case !s.Zvol && s.VolBlockSize != 0:
		return nil, errors.New("a volblocksize is for volumes only (Zvol)")
	case s.Zvol:
		p.RecordSize = zio.DefaultVolBlockSize(rel, pool)
		if s.VolBlockSize != 0 {
			if err := zio.CheckVolBlockSize(uint64(s.VolBlockSize), rel); err != nil {
				return nil, volBlockSizeError(fmt.Sprint("volblocksize ", s.VolBlockSize), p)
			}
			p.RecordSize = s.VolBlockSize
		}
	}
	return p, p.Validate()
}

// checkRecordSize checks a recordsize, bytes, against the release.
func checkRecordSize(n uint64, rel *zio.Release) error {
	if n > uint64(rel.MaxRecordSize) || n < zio.MinRecordSize || n&(n-1) != 0 {
		return errors.New("invalid")
	}
	return nil
}

// volBlockSizeError explains an invalid volblocksize; given is how it was
// given ("-o volblocksize=3K", "--volblocksize 3K"): a new user was told
// of a --volblocksize they had not written.
func volBlockSizeError(given string, p *zio.Policy) error {
	large := "above 128K the pool needs large_blocks, which new pools have"
	if p.Release.MaxRecordSize <= 128<<10 {
		large = "release " + p.Version + " has no large blocks (they came with 0.6.5)"
	}
	return fmt.Errorf("%s: invalid (accepted: a power of two from 512 to %s, e.g. 8K, 16K, 64K; %s)",
		given, nicenum.Format(uint64(p.Release.MaxRecordSize), false), large)
}

// Model describes the settings as resolved by their policy p (from
// Policy): what a saved scan records, and what Diff and Equal compare.
func (s *Settings) Model(p *zio.Policy) Model {
	version := p.Version
	if version == "" {
		version = p.Release.Name
	}
	pl, ok := p.Vdev.(*zio.Pool)
	if !ok {
		pl = zio.PoolOf(p.Vdev)
	}
	m := Model{
		Release:     version,
		Rules:       p.Release.Name,
		RecordSize:  p.RecordSize,
		Compression: zio.CompressionName(p.Compression, p.Level),
		Copies:      p.Copies,
		Dedup:       p.Dedup,
		Vdevs:       append([]string{}, s.Vdevs...),
		Pool:        pl.String(),
		Ashift:      s.AshiftValue(),
		Sparse:      s.Sparse.String(),
		Sample:      s.SampleRate(),
		Guest:       s.Guest,
	}
	if s.Zvol {
		m.RecordSize, m.VolBlockSize = 0, p.RecordSize
	}
	return m
}

// dedupChecksums are the checksums -o dedup=NAME[,verify] names, with the
// release each came with ("" for all releases). ddtsim keys blocks by
// their content, so which one is named does not change the figures.
var dedupChecksums = map[string]string{"sha256": "", "sha512": "0.7.0", "skein": "0.7.0", "edonr": "0.7.0", "blake3": "2.2.0"}

// parseDedup parses a lower-cased dedup value as zfs set dedup=VALUE takes
// it (module/zcommon/zfs_prop.c: dedup_table) and reports whether it turns
// dedup on.
func parseDedup(v, version string) (bool, error) {
	switch v {
	case "off":
		return false, nil
	case "on", "verify":
		return true, nil
	}
	alg, verify := strings.CutSuffix(v, ",verify")
	since, ok := dedupChecksums[alg]
	switch {
	case !ok:
		return false, fmt.Errorf("-o dedup=%s: invalid (accepted: on, off, verify, sha256, sha512, skein, blake3, the last four also with ,verify, and edonr,verify)", v)
	case alg == "edonr" && !verify:
		return false, fmt.Errorf("-o dedup=edonr: invalid: zfs takes edonr for dedup only with verify (dedup=edonr,verify)")
	case since != "" && zio.VersionLess(version, since):
		return false, fmt.Errorf("-o dedup=%s: %s does not exist in release %s (it came with %s)", v, alg, version, since)
	}
	return true, nil
}
