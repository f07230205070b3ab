package report

import (
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// EstimateSpace predicts what zfs list and zpool list will show once the
// data is copied (package space): with dedup as the policy has it, and the
// other way (Space.Other). Call it after EstimateDDT (with dedup on, the
// DDT's size is part of it), and after SetVolume for volumes (one a file,
// children of an empty root file system); a sampled scan's figures are
// estimates like the rest.
func (s *Report) EstimateSpace(p *zio.Policy) {
	if s.NothingSampled() {
		s.Space = nil // nothing to estimate the data from (found by a new user: JSON had metadata alone)
		return
	}
	c := s.Counters
	in := space.Input{Policy: p, Data: s.Total, EmbeddedLSize: c.EmbeddedLSize, Objects: c.Files + c.Dirs + c.Symlinks + c.Special,
		Indirect: c.Indirect, Dirs: c.DirZAPs}
	if s.Properties["type"] == "volume" {
		in.Volumes = c.Files - min(c.Files, c.EmptyFiles) // zfs create -V refuses a size of 0
	}
	if s.DDT != nil {
		// zfs list right after the copy: on a fast-dedup pool most of the
		// table still in the dedup log; the flushed table beside it.
		h := s.ddtHistogram()
		objects := in.Objects
		if in.Volumes > 0 {
			objects = 0
		}
		in.DDTOnDisk = ddtsize.ListedHistogram(&h, p, s.Total.Allocated.DSize, in.Volumes, objects).OnDisk
		in.DDTFlushed = s.DDT.OnDisk
	}
	pr := &space.Prediction{Figures: space.Predict(in)}
	other := *p
	other.Dedup = !p.Dedup
	in.Policy = &other
	o := space.Predict(in)
	pr.Other = &o
	s.Space = pr
}
