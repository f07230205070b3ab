package model

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Text is the text form of Settings, as a user types them: ddtsim's flags,
// and properties as zfs create -o takes them. Empty fields take the
// defaults.
type Text struct {
	Release string // --release: a version, a prefix of one, or "latest"
	// Properties are NAME=VALUE pairs (-o): recordsize (recsize),
	// volblocksize (volblock), compression (compress), copies, dedup,
	// each once, in lower case as zfs takes them (CheckCase).
	Properties []string
	Vdevs      []string // --vdev layouts, as zpool create names them with a disk count
	Ashift     string   // --ashift: 9 to 16
	Sparse     string   // --sparse: auto, always or never
	// VolBlockSize is --volblocksize SIZE: the files are volumes (as with
	// -o volblocksize=SIZE).
	VolBlockSize string
	Zvol         bool   // --zvol: volumes with the default volblocksize
	Sample       string // --sample: "1/N" or "N"
	Guest        bool   // --guest: images read as their guests' disks
}

// propertyAliases maps the short names of properties to their names.
var propertyAliases = map[string]string{"recsize": "recordsize", "compress": "compression", "volblock": "volblocksize"}

// Parse parses and checks settings given as text, in this order: the
// sample rate, the release, the ashift, the vdev layouts, each property
// as given, the volume flags; the first error is returned, in the words
// of the flag or property at fault ("-o recordsize=3K: invalid (accepted:
// ...)").
func Parse(t Text) (Settings, error) {
	var s Settings
	var err error
	if s.Sample, err = ParseSample(t.Sample); err != nil {
		return s, err
	}
	rel, version, err := zio.ResolveRelease(t.Release)
	if err != nil {
		return s, err
	}
	s.Release = t.Release
	ashift, err := strconv.Atoi(strings.TrimSpace(t.Ashift))
	if t.Ashift == "" {
		ashift, err = 12, nil
	}
	if err != nil || ashift < zio.MinAshift || ashift > zio.MaxAshift {
		return s, fmt.Errorf("--ashift %s: invalid (accepted: %d to %d, the sector size as a power of two)", t.Ashift, zio.MinAshift, zio.MaxAshift)
	}
	s.Ashift = ashift
	for _, v := range t.Vdevs {
		if v != strings.ToLower(v) {
			return s, fmt.Errorf("--vdev %s: invalid: zpool create takes vdev types in lower case (%s)", v, strings.ToLower(v))
		}
	}
	pool, err := zio.NewPool(t.Vdevs, ashift)
	if err != nil {
		return s, err
	}
	s.Vdevs = append([]string(nil), t.Vdevs...)
	volblock, volGiven := t.VolBlockSize, t.VolBlockSize != ""
	given := map[string]string{}
	for _, kv := range t.Properties {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return s, fmt.Errorf("-o %s: expected NAME=VALUE", kv)
		}
		if err := CheckCase(name, value); err != nil {
			return s, err
		}
		canon := name
		if full, ok := propertyAliases[canon]; ok {
			canon = full
		}
		if prev, ok := given[canon]; ok {
			return s, fmt.Errorf("-o %s: %s given twice (also -o %s), as zfs create would refuse", kv, canon, prev)
		}
		given[canon] = kv
		if canon != "volblocksize" {
			if err := s.Set(name, value); err != nil {
				return s, err
			}
			continue
		}
		if t.VolBlockSize != "" {
			a, errA := ParseSize(value)
			b, errB := ParseSize(t.VolBlockSize)
			if errA != nil || errB != nil || a != b {
				return s, fmt.Errorf("-o volblocksize=%s and --volblocksize %s disagree", value, t.VolBlockSize)
			}
		}
		volblock, volGiven = value, true
	}
	s.Zvol = t.Zvol || volGiven
	if s.Zvol {
		if _, ok := given["recordsize"]; ok {
			return s, fmt.Errorf("-o recordsize does not apply to volumes (--zvol, --volblocksize): their block size is the volblocksize")
		}
		s.RecordSize = 0
		if volGiven {
			n, err := ParseSize(volblock)
			if err == nil {
				err = zio.CheckVolBlockSize(n, rel)
			}
			if err != nil {
				how := "--volblocksize " + volblock
				if _, ok := given["volblocksize"]; ok {
					how = "-o volblocksize=" + volblock
				}
				return s, volBlockSizeError(how, &zio.Policy{Release: rel, Version: version, Vdev: pool})
			}
			s.VolBlockSize = uint32(n)
		}
	}
	if t.Sparse != "" {
		if s.Sparse, err = ParseSparse(t.Sparse); err != nil {
			return s, err
		}
	}
	s.Guest = t.Guest
	_, err = s.Policy()
	return s, err
}

// Set sets one dataset property as zfs set NAME=VALUE takes it, checked
// against the settings' release: recordsize (recsize), volblocksize
// (volblock: the files become volumes), compression (compress), copies,
// dedup; names, and compression and dedup values, in lower case
// (CheckCase). The error names the property and
// what is accepted ("-o copies=4: invalid (accepted: 1, 2, 3)").
func (s *Settings) Set(name, value string) error {
	rel, version, err := zio.ResolveRelease(s.Release)
	if err != nil {
		return err
	}
	if err := CheckCase(name, value); err != nil {
		return err
	}
	canon := name
	if full, ok := propertyAliases[canon]; ok {
		canon = full
	}
	switch canon {
	case "recordsize":
		n, err := ParseSize(value)
		if err != nil || checkRecordSize(n, rel) != nil {
			return fmt.Errorf("-o recordsize=%s: invalid (accepted: a power of two from 512 to %s, e.g. %s)", value,
				nicenum.Format(uint64(rel.MaxRecordSize), false), sizeExamples(uint64(rel.MaxRecordSize), 4<<10, 128<<10, 1<<20))
		}
		s.RecordSize = uint32(n)
	case "volblocksize":
		n, err := ParseSize(value)
		if err == nil {
			err = zio.CheckVolBlockSize(n, rel)
		}
		if err != nil {
			return volBlockSizeError("-o volblocksize="+value, &zio.Policy{Release: rel, Version: version})
		}
		s.Zvol, s.VolBlockSize = true, uint32(n)
	case "compression":
		if _, _, err := zio.ParseCompression(value, rel); err != nil {
			if nr := (*zio.NotInReleaseError)(nil); errors.As(err, &nr) {
				nr.Release = version // the release named, not its row of the table
			}
			return fmt.Errorf("-o %w", err)
		}
		s.Compression = value
	case "copies":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 3 {
			return fmt.Errorf("-o copies=%s: invalid (accepted: 1, 2, 3)", value)
		}
		s.Copies = n
	case "dedup":
		if _, err := parseDedup(value, version); err != nil {
			return err
		}
		s.Dedup = value
	default:
		return fmt.Errorf("-o %s=%s: property %q is not modelled (accepted: recordsize, volblocksize, compression, copies, dedup)", name, value, name)
	}
	return nil
}

// CheckCase refuses a property name, or a compression or dedup value,
// that is not lower case: zfs create refuses them ("invalid property",
// "must be one of"), and a plan checked here should run there. Sizes take
// any case (128k, 128K), as zfs takes them.
func CheckCase(name, value string) error {
	lname := strings.ToLower(name)
	switch {
	case name != lname:
		return fmt.Errorf("-o %s=%s: invalid property %q: zfs takes property names in lower case (%s)", name, value, name, lname)
	case (name == "compression" || name == "compress" || name == "dedup") && value != strings.ToLower(value):
		want := strings.ToLower(value)
		if name != "dedup" {
			// A sweep's list: each value once (found by a new user:
			// "lz4,LZ4" was told "lz4,lz4", which is refused as listed
			// twice).
			var seen []string
			for _, v := range strings.Split(want, ",") {
				if !slices.Contains(seen, v) {
					seen = append(seen, v)
				}
			}
			want = strings.Join(seen, ",")
		}
		return fmt.Errorf("-o %s=%s: invalid: zfs takes %s values in lower case (%s)", name, value, name, want)
	}
	return nil
}

// ParseSample parses a sampling rate: "1/N" or "N" (keep 1/N of the
// contents, N from 1 to 2^20); "" or "1" means no sampling (1).
func ParseSample(v string) (uint64, error) {
	if v == "" {
		return 1, nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(v), "1/"), 10, 64)
	if err != nil || n < 1 || n > 1<<20 {
		return 0, fmt.Errorf("--sample %s: invalid (accepted: 1/N with N from 1 to 1048576, e.g. 1/64)", v)
	}
	return n, nil
}

// ParseSize parses a ZFS size value: a whole number with an optional
// suffix K, M, G, T, P, E (also KB, KiB, ...; case-insensitive) in powers
// of 1024, returning bytes. It fails on anything else and on sizes beyond
// 2^64-1.
func ParseSize(v string) (uint64, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "IB"), "B")
	mult := uint64(1)
	if s != "" {
		if i := strings.IndexByte("KMGTPE", s[len(s)-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q", v)
	}
	if n > ^uint64(0)/mult {
		return 0, fmt.Errorf("size %q too large", v)
	}
	return n * mult, nil
}

// sizeExamples lists the sizes of examples that are at most max, for
// messages ("4K, 128K").
func sizeExamples(max uint64, examples ...uint64) string {
	var out []string
	for _, e := range examples {
		if e <= max {
			out = append(out, nicenum.Format(e, false))
		}
	}
	return strings.Join(out, ", ")
}
