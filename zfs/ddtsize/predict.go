package ddtsize

import (
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Prediction is the size of the real dedup table a pool would build for a
// histogram (Estimate: entries, on disk and in core as zdb -DD / zpool
// status -D print them, the model's basis, the 320 B/entry rule of thumb),
// for the release modelled, and with a RAM size whether it stays in the
// ARC. Sizes are bytes.
type Prediction struct {
	Release   string `json:"release"`   // the OpenZFS version, as named (see ARCFor)
	Unique    uint64 `json:"unique"`    // entries referenced once (DDT-…-zap-unique)
	Duplicate uint64 `json:"duplicate"` // entries referenced more often (DDT-…-zap-duplicate)
	Result
	ARC *ARC `json:"arc,omitempty"` // nil without a RAM size
}

// EstimateHistogram models the DDT of histogram h written under policy p
// (its release, vdev layout and copies): the refcnt-1 row gives the unique
// entries, the other rows the duplicate ones (Classes), and their sizes
// the blocks the entries point to (ShapeOf). dataBytes is the allocated
// DSIZE of the data, bytes (Params.DataBytes).
func EstimateHistogram(h *ddt.Histogram, p *zio.Policy, dataBytes uint64) Result {
	unique, dup := Classes(h)
	return Estimate(unique.Blocks, dup.Blocks, Params{Release: p.Release, Vdev: p.Vdev, Copies: p.Copies,
		DataBytes: dataBytes, Unique: ShapeOf(unique), Duplicate: ShapeOf(dup)})
}

// Predict is EstimateHistogram with the entries of each class, for the
// release named version (e.g. "2.1.16", as ARCFor reads it; it should be
// the one p.Release models). ram > 0 (bytes of RAM) adds the ARC verdict.
func Predict(h *ddt.Histogram, p *zio.Policy, version string, dataBytes, ram uint64) Prediction {
	unique, dup := Classes(h)
	pr := Prediction{Release: version, Unique: unique.Blocks, Duplicate: dup.Blocks, Result: EstimateHistogram(h, p, dataBytes)}
	if ram > 0 {
		a := ARCFor(version, ram, pr.InCore, pr.Format == FormatFDT)
		pr.ARC = &a
	}
	return pr
}

// Leaves is the expected number of leaf blocks over all objects.
func (r *Result) Leaves() float64 {
	var n float64
	for _, o := range r.Objects {
		n += o.Leaves
	}
	return n
}
