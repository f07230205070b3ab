package analyzer

import (
	"sort"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Stopping and resuming.
//
// A chunk of records, once a worker has started it, is finished even after
// the scan's context is cancelled (a chunk is at most 8 MiB, one record at
// larger recordsizes): what the table and the counters hold is then always
// exactly the records reported to Options.Done, so that an interrupted scan
// can be saved and continued (Options.Resume) to the result an
// uninterrupted scan gives.

// FileInfo identifies a file as a scan read it: a resumed scan skips the
// records an earlier scan did in a file only while it is unchanged.
type FileInfo struct {
	Path    string // as the walk reached it (under the path named)
	Arg     int    // index of the path named under which it was found (source.File.Arg)
	Dev     uint64 // st_dev
	Ino     uint64 // st_ino
	Size    uint64 // bytes, when opened
	Mtime   int64  // modification time when opened, nanoseconds since the epoch
	Records uint64 // level-0 records of the file, holes included
}

// Position is f's place in the walk's order.
func (f *FileInfo) Position() source.Position { return source.Position{Arg: f.Arg, Path: f.Path} }

// Span is a run of records [First, End) of a file.
type Span struct{ First, End uint64 }

// covers reports whether the sorted, merged runs cover records [0, n).
func covers(runs []Span, n uint64) bool {
	return n == 0 || len(runs) > 0 && runs[0].First == 0 && runs[0].End >= n
}

// subtractSpans returns the parts of the sorted, disjoint runs a that lie
// outside the sorted, disjoint runs b.
func subtractSpans(a, b []Span) []Span {
	if len(b) == 0 {
		return a
	}
	var out []Span
	for _, r := range a {
		pos := r.First
		i := sort.Search(len(b), func(i int) bool { return b[i].End > pos })
		for ; i < len(b) && b[i].First < r.End; i++ {
			if b[i].First > pos {
				out = append(out, Span{pos, b[i].First})
			}
			pos = max(pos, b[i].End)
		}
		if pos < r.End {
			out = append(out, Span{pos, r.End})
		}
	}
	return out
}

// Resume continues an earlier, interrupted scan of the same paths with the
// same options: records the earlier scan did are not read again.
type Resume struct {
	// Table is the earlier scan's table; the scan adds to it. It must have
	// been made for the same policy.
	Table *ddt.Table
	// Counters are the earlier scan's. The counts of records (records,
	// holes, bytes read, compressor runs, ...) and of files that changed
	// while read are added to this scan's. What the walk counts (files,
	// directories, links, logical bytes, errors) is counted again by this
	// scan's walk, which lists everything again.
	Counters Counters
	// Done returns the runs of records of f that the earlier scan did
	// (sorted, disjoint, within [0, f.Records)); none for a file it did
	// not reach. An error (typically: the file changed since, when part of
	// it was done) skips the file: the error is a warning on the path,
	// counted in Errors, and what the earlier scan took of the file stays
	// in the result.
	Done func(f FileInfo) ([]Span, error)
	// Saved, when set, returns what the earlier scan did of the file at
	// path, whatever is there now: the runs of records done, and the
	// file's inode and records then (ok false: none). A sharded scan asks
	// it when Done refuses a split file: when the runs cover the shard's
	// share of the file as it was, the share was done, and the file is
	// skipped whatever happened to it since, as a file done completely
	// is.
	Saved func(path string) (done []Span, ino, records uint64, ok bool)
	// Tally, when set, returns the block-pointer tally the earlier scan
	// had of f, a file Done gave records of (nil: none kept), so that
	// the file's indirect blocks are accounted as an uninterrupted scan
	// accounts them (State.Pending, Analysis.Pending). Without it they
	// are counted from the records this scan reads.
	Tally func(f FileInfo) *BPTally
}

// segment is a run of records of a file: data to read, or wholly in a hole
// of the source file (accounted by the walker without reading).
type segment struct {
	first, end uint64
	data       bool
}

// segments cuts fl's records into hole and data segments in file order,
// leaving out the records in done (sorted, disjoint).
func (fl *file) segments(done []Span) []segment {
	var segs []segment
	prev := uint64(0)
	for _, r := range fl.dataRuns() {
		if prev < r.first {
			segs = append(segs, segment{prev, r.first, false})
		}
		segs = append(segs, segment{r.first, r.end, true})
		prev = r.end
	}
	if prev < fl.nrec {
		segs = append(segs, segment{prev, fl.nrec, false})
	}
	if len(done) == 0 {
		return segs
	}
	var out []segment
	for _, sg := range segs {
		// The done spans that may overlap sg start at the first one
		// ending after sg.first.
		i := sort.Search(len(done), func(i int) bool { return done[i].End > sg.first })
		pos := sg.first
		for ; i < len(done) && done[i].First < sg.end; i++ {
			if done[i].First > pos {
				out = append(out, segment{pos, done[i].First, sg.data})
			}
			pos = max(pos, min(done[i].End, sg.end))
		}
		if pos < sg.end {
			out = append(out, segment{pos, sg.end, sg.data})
		}
	}
	return out
}

// spanBytes is the logical bytes of records [first, end) of fl.
func (fl *file) spanBytes(first, end uint64) uint64 {
	l := uint64(fl.lsize)
	return min(end*l, fl.src.Size) - min(first*l, fl.src.Size)
}

// done reports records [first, end) of fl as fully accounted.
func (s *run) done(fl *file, first, end uint64) {
	if s.opts.Done != nil && first < end {
		s.opts.Done(fl.info, first, end)
	}
}

// resumed asks Options.Resume which records of fl are done already. It
// returns false when the file is to be skipped (warned about).
func (s *run) resumed(fl *file, others []Span) ([]Span, bool) {
	r := s.opts.Resume
	if r == nil || r.Done == nil {
		return nil, true
	}
	done, err := r.Done(fl.info)
	if err != nil && fl.src.Chunk > 0 && r.Saved != nil {
		if was, ino, nrec, ok := r.Saved(fl.src.Path); ok && covers(unionSpans(was, fl.othersShare(ino, nrec)), nrec) {
			done, err = []Span{{0, max(nrec, fl.nrec)}}, nil // this shard's share was done
		}
	}
	if err != nil {
		s.warn(fl.src.Path, err)
		return nil, false
	}
	if p := s.opts.Progress; p != nil {
		var b uint64
		for _, d := range subtractSpans(done, others) {
			b += fl.spanBytes(min(d.First, fl.nrec), min(d.End, fl.nrec))
		}
		p.BytesDone.Add(int64(b))
	}
	return done, true
}
