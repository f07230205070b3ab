package estimate

import (
	"cmp"
	"math/bits"
	"slices"
)

// Strata sort a group plan's groups (Plan.Groups) by the most records a
// group can hold, the files of its size (a file of one record: 1), and by
// its records' LSIZE. The bounds of the sizes and of the Unseen program's
// rows are taken stratum by stratum, each over groups of its own largest
// (Stratum.Cap records of Stratum.MaxLSize), and added up (a union bound
// over the strata): a few files of one size then widen the ranges by
// their own share only, where one bound over all the groups took every
// group as large as the largest (20 unrelated files of 2 MiB among 1.2 GB
// made the compression ratio's range 1.00 to 256 at 5%), and small files
// are bounded by their own LSIZE, not the recordsize.
//
// A group's stratum comes from its table group (Plan.TableGroup), whose
// bits name its files' size (a hash of it: the size's tag); sizes of one
// tag share their groups, whose capacity is then the sum of theirs; and
// from its records' LSIZE. Nil is one stratum of every group (Compute's
// bounds as before strata).
type Strata struct {
	// List are the strata: by capacity class (1, 2, 3–4, 5–8, …), then by
	// LSIZE class (512, 1K, 1.5–2K, 2.5–4K, …).
	List []Stratum
	// tags are the size tags of capacity above 1 and their stratum; a
	// group of another is of capacity 1, in the stratum of its LSIZE
	// (lsize).
	tags  map[uint64]int
	lsize map[int]int // LSIZE class → stratum of capacity 1
}

// Stratum is one stratum of Strata: what the metadata says of its groups.
type Stratum struct {
	// Cap is the most records a group of it can hold, MaxLSize the largest
	// LSIZE of one, and MaxDSize the DSIZE of an uncompressed block of
	// MaxLSize (bytes): the bounds' units.
	Cap, MaxLSize, MaxDSize uint64
	// Groups are its groups in the data, at most (some may lie wholly in
	// holes): the bounds' finite-population factor.
	Groups uint64
	// Records are the population's records in it (Input.Records'), and
	// LSize their LSIZE, bytes: known exactly, they weigh the stratum's
	// ratios in the whole's.
	Records, LSize uint64
}

// SizeCount is what the walk counted of the files of more than one record
// of one size: Files, and Holes, their records lying wholly in holes that
// ZFS leaves holes (not in the population).
type SizeCount struct{ Files, Holes uint64 }

// tagBits are the bits of a table group (Plan.TableGroup) of a file of
// more than one record below its size's tag: its record index.
const tagBits = 40

// sizeTag is the size tag of the table groups of a file whose FileKey is
// fileKey (a file of more than one record under a group plan).
func sizeTag(fileKey uint64) uint64 { return fileKey >> (tagBits + 1) }

// groupTag is the size tag of table group g of a file of more than one
// record.
func groupTag(g uint64) uint64 { return (g &^ oneRecord) >> tagBits }

// lsizeClass is the class of an LSIZE, bytes: 0 for 512, 1 for 1K, 2 for
// 1.5–2K, 3 for 2.5–4K, …
func lsizeClass(lsize uint64) int { return bits.Len64(max(lsize, 512)/512 - 1) }

// stratumKey names a stratum: the class of its groups' capacity (0: 1;
// c: 2^(c−1) < capacity ≤ 2^c) and of their LSIZE (lsizeClass).
type stratumKey struct{ cap, lsize int }

// keyOf is the stratum of groups of capacity cap whose largest LSIZE is
// lsize, bytes.
func keyOf(cap, lsize uint64) stratumKey {
	return stratumKey{bits.Len64(max(cap, 1) - 1), lsizeClass(lsize)}
}

// NewStrata sorts the groups of a group plan's data into strata, from what
// the walk counted: sizes, per size of the files of more than one record
// (their files and records in holes); oneRecord, the population's records
// in files of one record per LSIZE (bytes: their count); records, the
// records and their LSIZE (bytes) of a file of a size (zio.FileRecords or
// zio.ZvolRecords); dsize, the DSIZE of an uncompressed block of an LSIZE
// (zio.Policy.DSize); population and lsize, the population's records and
// their LSIZE (Input.Records, Input.LSize). It returns nil (one stratum:
// the bounds as before strata) where the counts do not add up to the
// population, as in one shard of a sharded scan (a shard counts a file
// split between shards, and the records of its own pieces): the strata
// need every record placed.
func NewStrata(plan Plan, sizes map[uint64]SizeCount, oneRecord map[uint64]uint64, records func(size uint64) (lsize uint32, n uint64),
	dsize func(lsize uint64) uint64, population, lsize uint64) *Strata {
	strata := map[stratumKey]*Stratum{}
	stratum := func(k stratumKey) *Stratum {
		st := strata[k]
		if st == nil {
			st = &Stratum{}
			strata[k] = st
		}
		return st
	}
	var recs, ls uint64
	for l, n := range oneRecord {
		st := stratum(keyOf(1, l))
		st.Cap = 1
		st.MaxLSize = max(st.MaxLSize, l)
		st.Groups += n
		st.Records += n
		st.LSize += n * l
		recs += n
		ls += n * l
	}
	// The sizes by tag: the sizes of one tag share their groups.
	type tagged struct{ cap, groups, records, lsize, maxL uint64 }
	tags := map[uint64]*tagged{}
	for size, c := range sizes {
		l, n := records(size)
		if n <= 1 || c.Holes > c.Files*n {
			return nil
		}
		k := sizeTag(plan.FileKey("", size, n))
		t := tags[k]
		if t == nil {
			t = &tagged{}
			tags[k] = t
		}
		// Record indexes past 2^40 share the groups of those below.
		t.cap += c.Files * ((n + 1<<tagBits - 1) >> tagBits)
		t.groups += n
		r := c.Files*n - c.Holes
		t.records += r
		t.lsize += r * uint64(l)
		t.maxL = max(t.maxL, uint64(l))
		recs += r
		ls += r * uint64(l)
	}
	if recs != population || ls != lsize {
		return nil
	}
	tagKey := map[uint64]stratumKey{}
	for k, t := range tags {
		sk := keyOf(t.cap, t.maxL)
		st := stratum(sk)
		st.Cap = max(st.Cap, t.cap)
		st.MaxLSize = max(st.MaxLSize, t.maxL)
		st.Groups += t.groups
		st.Records += t.records
		st.LSize += t.lsize
		if sk.cap > 0 {
			tagKey[k] = sk
		}
	}
	keys := make([]stratumKey, 0, len(strata))
	for k := range strata {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b stratumKey) int { return cmp.Or(cmp.Compare(a.cap, b.cap), cmp.Compare(a.lsize, b.lsize)) })
	s := &Strata{tags: map[uint64]int{}, lsize: map[int]int{}}
	at := map[stratumKey]int{}
	for i, k := range keys {
		at[k] = i
		st := strata[k]
		st.MaxDSize = dsize(st.MaxLSize)
		s.List = append(s.List, *st)
		if k.cap == 0 {
			s.lsize[k.lsize] = i
		}
	}
	for k, sk := range tagKey {
		s.tags[k] = at[sk]
	}
	return s
}

// Of returns the index in List of the stratum of table group g
// (Plan.TableGroup) whose records are of LSIZE lsize, bytes. A group
// NewStrata did not count (none, where it returned strata) is taken in the
// last stratum, of the largest groups: the safe side.
func (s *Strata) Of(g, lsize uint64) int {
	if s == nil {
		return 0
	}
	if !OneRecordGroup(g) {
		if i, ok := s.tags[groupTag(g)]; ok {
			return i
		}
	}
	if i, ok := s.lsize[lsizeClass(lsize)]; ok {
		return i
	}
	return len(s.List) - 1
}
