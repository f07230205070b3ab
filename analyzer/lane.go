package analyzer

import (
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Lane is the per-record accounting of one write policy in one table: what
// becomes of a record (a hole, a reference to a content, the first
// reference of a content, which is then compressed and settled), as
// module/zfs/zio.c: zio_write_compress() and the DDT decide it. The scan's
// workers each hold one; a sweep holds one per policy and worker.
//
// A Lane with its fields set is ready for use; it makes its zio.Writer at
// the first content it compresses. It is not safe for concurrent use (the
// Writer holds compressor state); several Lanes may share a Table and a
// ZeroKeys.
type Lane struct {
	Policy *zio.Policy   // valid (zio.Policy.Validate)
	Table  *ddt.Table    // made for Policy
	Zero   *ddt.ZeroKeys // the zero block's key per LSIZE
	// Sample N > 1 keeps only the contents in 1/N of the hash space
	// (ddt.InSample); see Options.Sample.
	Sample uint64
	// Stages, when set, sums the time spent hashing, compressing and in
	// the table (Options.Stages).
	Stages *Stages
	w      *zio.Writer
	// embedded is whether the last record Record took New was embedded.
	embedded bool
}

// Outcome is what became of a record in a Lane.
type Outcome uint8

const (
	// Hole: an all-zero record not written (compression on, or copied
	// sparse); not in the table.
	Hole Outcome = iota
	// Unsampled: left out of the sample; not in the table.
	Unsampled
	// Ref: a further reference to a content already in the table.
	Ref
	// New: the first reference of a content; it was compressed (unless
	// all zeros) and its PSIZE settled.
	New
)

// Record accounts one record: data is its LSIZE bytes (zero-padded), zero
// says they are all zeros, copyHoles that the file is copied sparse (its
// zero records arrive as holes). It returns the record's key (zero for a
// hole) and what became of it.
func (l *Lane) Record(data []byte, zero, copyHoles bool) (ddt.Key, Outcome) {
	return l.record(data, zero, copyHoles, nil)
}

// RecordInGroup is Record for a record of group g of a group plan's
// sample (estimate.Plan.Groups): its content is keyed in the table with
// its group (ddt.GroupKey), and the key returned is that one.
func (l *Lane) RecordInGroup(data []byte, zero, copyHoles bool, g uint64) (ddt.Key, Outcome) {
	return l.record(data, zero, copyHoles, &g)
}

func (l *Lane) record(data []byte, zero, copyHoles bool, group *uint64) (ddt.Key, Outcome) {
	lsize := uint32(len(data))
	if zero && (l.Policy.ZeroIsHole() || copyHoles) {
		return ddt.Key{}, Hole
	}
	var k ddt.Key
	st := l.Stages
	t := st.now()
	if zero {
		k = l.Zero.Get(lsize)
	} else {
		k = ddt.KeyOf(data)
		t = st.since(StageHash, t)
	}
	if group != nil {
		k = ddt.GroupKey(k, *group)
	}
	if l.Sample > 1 && !ddt.InSample(k, l.Sample) {
		return k, Unsampled
	}
	first := l.Table.Ref(k, lsize)
	t = st.since(StageTable, t)
	if !first {
		return k, Ref
	}
	// The first reference settles the entry. An all-zero block reaching
	// the table is stored uncompressed (ZFS turns it into a hole whenever
	// it compresses).
	b := zio.Block{Kind: zio.Stored, PSize: uint64(lsize), Compression: zio.Off}
	if !zero {
		if l.w == nil {
			l.w = zio.NewWriter(l.Policy)
		}
		b = l.w.Write(data)
		t = st.since(StageCompress, t)
	}
	l.embedded = b.Kind == zio.Embedded
	if l.embedded {
		l.Table.Set(k, 0)
	} else {
		l.Table.Set(k, uint32(b.PSize))
	}
	st.since(StageTable, t)
	return k, New
}

// HoleInGroup counts a record of group g of a group plan's sample that
// Record (RecordInGroup) found a hole, of lsize bytes, in the table under
// ddt.HoleGroupKey(g): the group's sums are then its entries'
// (estimate.GroupSample). It is no block: summaries by content leave it
// out.
func (l *Lane) HoleInGroup(lsize uint32, g uint64) {
	k := ddt.HoleGroupKey(g)
	if l.Table.Ref(k, lsize) {
		l.Table.Set(k, 0)
	}
}

// Embedded reports whether the record Record just took (data, not all
// zeros, key k, outcome o: New or Ref) is stored in its block pointer:
// from that call for New; for Ref from the table where it holds the
// content's PSIZE in memory, else (spilled, or its first reference still
// being compressed by another worker) by compressing data again, which
// gives what the first reference gave (compression is deterministic).
func (l *Lane) Embedded(data []byte, k ddt.Key, o Outcome) bool {
	switch o {
	case New:
		return l.embedded
	case Ref:
		if ps, ok := l.Table.Settled(k); ok {
			return ps == 0
		}
		if l.w == nil {
			l.w = zio.NewWriter(l.Policy)
		}
		return l.w.Write(data).Kind == zio.Embedded
	}
	return false
}

// ZeroRun accounts n all-zero records of lsize bytes at once (a run lying
// wholly in a hole of the source file), as n calls of Record would: holes,
// or n references to the zero block. A run of exabytes costs no more than
// one record.
func (l *Lane) ZeroRun(lsize uint32, n uint64, copyHoles bool) (ddt.Key, Outcome) {
	return l.zeroRun(lsize, n, copyHoles, nil)
}

// ZeroRunInGroup is ZeroRun for n records of group g of a group plan's
// sample (RecordInGroup).
func (l *Lane) ZeroRunInGroup(lsize uint32, n uint64, copyHoles bool, g uint64) (ddt.Key, Outcome) {
	return l.zeroRun(lsize, n, copyHoles, &g)
}

func (l *Lane) zeroRun(lsize uint32, n uint64, copyHoles bool, group *uint64) (ddt.Key, Outcome) {
	if l.Policy.ZeroIsHole() || copyHoles {
		return ddt.Key{}, Hole
	}
	k := l.Zero.Get(lsize)
	if group != nil {
		k = ddt.GroupKey(k, *group)
	}
	if l.Sample > 1 && !ddt.InSample(k, l.Sample) {
		return k, Unsampled
	}
	if !l.Table.RefN(k, lsize, n) {
		return k, Ref
	}
	l.Table.Set(k, lsize)
	return k, New
}
