package estimate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Plan is which records a scan reads: each record that holds data,
// independently of the others, with probability Fraction, chosen by a
// hash of Seed, the file's path and the record's index (see the package
// comment for why not runs); with Groups, each group of records so. The
// same plan over the same files reads the same records, in one run or in
// shards.
// In a saved scan's manifest it is {"fraction": F, "seed": S}.
//
// With Groups the plan reads groups of records, not single records: the
// records of one index in the files of one size (files of more than one
// record: clones of an image, a file unchanged between backups) are one
// group, read together or not at all; a file of one record is a group of
// its own. The records' groups (Group) then key the sample's table beside
// their contents (estimate.GroupSample).
type Plan struct {
	Fraction float64 `json:"fraction"` // (0, 1]; 1 reads every record
	Seed     uint64  `json:"seed"`
	Groups   bool    `json:"groups,omitempty"`
}

// String describes the plan in messages: "5% of the records, seed 1"
// ("5% of the groups of records, seed 1" with Groups).
func (p Plan) String() string {
	what := "records"
	if p.Groups {
		what = "groups of records"
	}
	return fmt.Sprintf("%g%% of the %s, seed %d", 100*p.Fraction, what, p.Seed)
}

// Active reports whether the plan leaves records unread (0 < Fraction < 1).
func (p Plan) Active() bool { return p.Fraction > 0 && p.Fraction < 1 }

// FileKey is the part of the choice that depends on the file: a hash of
// the seed and the path (as the walk names it); with Groups, for a file of
// more than one record (records: its records, holes included; size: its
// size, bytes), a hash of the seed and the size instead, so that the files
// of one size share their records' groups.
func (p Plan) FileKey(path string, size, records uint64) uint64 {
	// FNV-1a (hash/fnv's New64a), inline: the walk asks it of every file,
	// and hash/fnv through its interface allocated the path's bytes.
	h := uint64(fnvOffset64)
	if p.Groups && records > 1 {
		h = (h ^ 0xff) * fnvPrime64 // a path of these 9 bytes would only share the groups of that size
		for i := range 8 {
			h = (h ^ uint64(byte(size>>(8*i)))) * fnvPrime64
		}
	} else {
		for i := 0; i < len(path); i++ {
			h = (h ^ uint64(path[i])) * fnvPrime64
		}
	}
	return mix(h ^ mix(p.Seed+0x9e3779b97f4a7c15))
}

// The parameters of 64-bit FNV-1a (hash/fnv).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Group is the group of record blkid of the file whose FileKey is
// fileKey: a 64-bit hash, the same for the records of one group (under a
// plan of single records, each record's own).
func (p Plan) Group(fileKey, blkid uint64) uint64 {
	return mix(fileKey + blkid*0xbf58476d1ce4e5b9)
}

// oneRecord is the bit of a table group (TableGroup) that says it is a
// file of one record.
const oneRecord = 1 << 63

// TableGroup is the group that keys record blkid of a file of records
// records (holes included) whose FileKey is fileKey in a group plan's
// sample table (ddt.GroupKey). For a file of one record (a group of its
// own, whose one entry the sample counts at once: GroupSample), it is
// Group with its top bit set. For others, its top bit is clear, the next
// 23 bits are its size's tag (from fileKey: the files of one size share
// it) and the low 40 the record index (modulo 2^40), so that the group's
// stratum is known from it (Strata.Of); the sizes of one tag (one in 2^23
// pairs of sizes) share their groups, which Strata counts.
func (p Plan) TableGroup(fileKey, blkid, records uint64) uint64 {
	if records <= 1 {
		return p.Group(fileKey, blkid) | oneRecord
	}
	return sizeTag(fileKey)<<tagBits | blkid&(1<<tagBits-1)
}

// OneRecordGroup reports whether a table group (TableGroup) is a file of
// one record.
func OneRecordGroup(g uint64) bool { return g&oneRecord != 0 }

// Reads reports whether the plan reads record blkid of the file whose
// FileKey is fileKey: whether it reads the record's group.
func (p Plan) Reads(fileKey, blkid uint64) bool {
	if p.Fraction >= 1 {
		return true
	}
	return float64(p.Group(fileKey, blkid)>>11)*(1.0/(1<<53)) < p.Fraction
}

// mix is splitmix64's finaliser: a bijection of 64 bits whose outputs for
// neighbouring inputs look independent.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// MinFraction is the smallest fraction ParseFraction accepts: 1 record in
// a million.
const MinFraction = 1e-6

// ParseFraction parses the fraction of the records to read: "5%", "0.5%"
// or "0.05"; it must lie in [MinFraction, 1].
func ParseFraction(v string) (float64, error) {
	s := strings.TrimSpace(v)
	div := 1.0
	if t, ok := strings.CutSuffix(s, "%"); ok {
		s, div = t, 100
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil {
		f /= div
	}
	if err != nil || math.IsNaN(f) || f < MinFraction || f > 1 {
		return 0, fmt.Errorf("invalid (accepted: a percentage from 0.0001%% to 100%%, e.g. 5%%, or a fraction such as 0.05)")
	}
	return f, nil
}
