package ddtsize

import (
	"fmt"
	"strconv"
	"strings"
)

// ARC says whether a DDT of a given in-core size stays cached in the ARC
// of a Linux machine with RAM bytes of memory, under the defaults of the
// release modelled (no zfs_arc_max or zfs_arc_meta_limit set, no other
// pool). Sizes are bytes.
//
// Sources (OpenZFS tags, checked):
//   - zfs_arc_max default, module/os/linux/zfs/arc_os.c: arc_default_max(min,
//     allmem): MAX(allmem / 2, min) up to 2.2.x; from 2.3.0 (commit
//     6a629f3234, "arc_default_max on Linux should match FreeBSD")
//     MAX(allmem × 5 / 8, size), size being allmem − 1 GiB, or min under
//     1 GiB: so 5/8 of RAM up to 8/3 GiB, RAM − 1 GiB above, never less
//     than min. min is arc_c_min = MAX(allmem / 32, 32 MiB) (arc.c:
//     arc_set_limits()). 0.6.x computed the same half in arc.c: arc_init().
//   - metadata limit, module/zfs/arc.c: arc_init(): arc_meta_limit = 1/4
//     of zfs_arc_max in 0.6.0–0.6.2, 3/4 from 0.6.3 (zfs_arc_meta_limit_percent
//     = 75 from 0.7.0) through 2.1.x; 2.2.0 removed the limit (commit
//     a8d83e2a24, "More adaptive ARC eviction"): metadata may take the
//     whole ARC, balanced against data by zfs_arc_meta_balance (500).
//
// The DDT blocks are metadata. The verdict compares the table's in-core
// size (uncompressed, as zdb -DD and zpool status -D report it) with what
// the ARC lets metadata hold. With compressed ARC (0.7.0+, the default) the
// cached copies of the blocks can be as small as their compressed size,
// which makes a table somewhat above the limit work better than the
// verdict says; blocks the DDT code is using are held uncompressed.
type ARC struct {
	RAM       uint64 `json:"ram"`
	ARCMax    uint64 `json:"arc_max"` // the zfs_arc_max default
	ARCMaxIs  string `json:"arc_max_rule"`
	MetaLimit uint64 `json:"meta_limit"` // arc_meta_limit; 0: none (2.2.0+)
	MetaIs    string `json:"meta_limit_rule"`
	// Limit is what the table may take: MetaLimit, or ARCMax without one.
	Limit uint64 `json:"limit"`
	// InCore is the table's in-core size compared, and Share InCore / Limit.
	InCore uint64  `json:"in_core"`
	Share  float64 `json:"share"`
	// Verdict is "fits" (at most half of Limit), "tight" (up to Limit:
	// data and other metadata compete with it, some lookups will read from
	// disk) or "does not fit".
	Verdict string `json:"verdict"`
	Meaning string `json:"meaning"`
	// LogMax is the most the FDT dedup log holds in memory besides the ARC
	// (zfs_dedup_log_mem_max: 1% of RAM, at least 1 MiB; 2.3.0+), 0 before.
	LogMax uint64 `json:"log_max,omitempty"`
}

// Verdicts of ARC.
const (
	VerdictFits    = "fits"
	VerdictTight   = "tight"
	VerdictNoFit   = "does not fit"
	slowDedupWrite = "dedup writes then wait on DDT reads from disk and run several times slower (one published test: 848 MB/s with compression only, 186 MB/s with dedup)"
)

// ARCFor returns the ARC verdict for a table of inCore bytes on release
// version (e.g. "2.1.16", "0.6.5.11") with ram bytes of RAM; fdt says
// whether the table is a fast-dedup table with a log.
func ARCFor(version string, ram, inCore uint64, fdt bool) ARC {
	v := parseRelease(version)
	a := ARC{RAM: ram, InCore: inCore}
	const gib = 1 << 30
	cMin := max(ram/32, 32<<20)
	switch {
	case !v.less(2, 3, 0):
		// arc_default_max(min, allmem): size = allmem − 1 GiB, or
		// min (arc_c_min) under 1 GiB; MAX(allmem × 5 / 8, size).
		size := cMin
		if ram >= gib {
			size = ram - gib
		}
		a.ARCMax = max(ram/8*5+ram%8*5/8, size) // ram × 5 / 8 without overflow
		switch {
		case a.ARCMax == size && ram >= gib && size > 0:
			a.ARCMaxIs = "RAM − 1 GiB, more than 5/8 × RAM: the Linux default from 2.3.0, max(5/8 × RAM, RAM − 1 GiB)"
		case a.ARCMax == size && ram < gib:
			a.ARCMaxIs = "arc_c_min = max(RAM/32, 32 MiB), more than 5/8 × RAM: the Linux default from 2.3.0 under 1 GiB of RAM, max(5/8 × RAM, arc_c_min)"
		case ram < gib:
			a.ARCMaxIs = "5/8 × RAM: the Linux default from 2.3.0 under 1 GiB of RAM, max(5/8 × RAM, arc_c_min)"
		default:
			a.ARCMaxIs = "5/8 × RAM, more than RAM − 1 GiB: the Linux default from 2.3.0, max(5/8 × RAM, RAM − 1 GiB)"
		}
	default:
		// arc_default_max(min, allmem): MAX(allmem / 2, min).
		a.ARCMax = max(ram/2, cMin)
		a.ARCMaxIs = "RAM/2: the Linux default before 2.3.0"
		if a.ARCMax > ram/2 {
			a.ARCMaxIs = "arc_c_min = max(RAM/32, 32 MiB), more than RAM/2: the Linux default before 2.3.0, max(RAM/2, arc_c_min)"
		}
	}
	switch {
	case !v.less(2, 2, 0):
		a.MetaIs = "no separate limit since 2.2.0, it may fill the ARC, balanced against data by zfs_arc_meta_balance"
		a.Limit = a.ARCMax
	case !v.less(0, 6, 3):
		a.MetaLimit = a.ARCMax / 4 * 3
		a.MetaIs = "3/4 of the ARC (arc_meta_limit, 0.6.3 to 2.1.x)"
		a.Limit = a.MetaLimit
	default:
		a.MetaLimit = a.ARCMax / 4
		a.MetaIs = "1/4 of the ARC (arc_meta_limit, 0.6.0 to 0.6.2)"
		a.Limit = a.MetaLimit
	}
	if fdt {
		a.LogMax = max(ram/100, 1<<20)
	}
	if a.Limit > 0 {
		a.Share = float64(inCore) / float64(a.Limit)
	}
	switch {
	case a.Share <= 0.5:
		a.Verdict = VerdictFits
		a.Meaning = "the table stays cached: dedup lookups are memory lookups"
	case a.Share <= 1:
		a.Verdict = VerdictTight
		a.Meaning = "the table fits only if little else is cached; data and other metadata compete with it, and each DDT block evicted must be read back: " + slowDedupWrite
	default:
		a.Verdict = VerdictNoFit
		a.Meaning = "the table cannot stay cached: " + slowDedupWrite
	}
	return a
}

// release is a parsed version: major, minor, patch.
type release [3]int

func (r release) less(a, b, c int) bool {
	o := release{a, b, c}
	for i := range r {
		if r[i] != o[i] {
			return r[i] < o[i]
		}
	}
	return false
}

// parseRelease reads "2.1.16", "0.6.5.11", "2.3"; what it cannot read
// counts as 0. An empty version is the newest modelled.
func parseRelease(s string) release {
	if s == "" {
		return release{99}
	}
	var r release
	for i, p := range strings.SplitN(strings.TrimPrefix(s, "zfs-"), ".", 4) {
		if i >= len(r) {
			break
		}
		r[i], _ = strconv.Atoi(p)
	}
	return r
}

// String describes the verdict in one line.
func (a ARC) String() string {
	return fmt.Sprintf("%s: %.0f%% of %d bytes", a.Verdict, 100*a.Share, a.Limit)
}
