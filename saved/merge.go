package saved

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// ModelError is the refusal to merge scans made with different models.
type ModelError struct {
	First string   // the file the others are compared with
	Diffs []string // per differing file: "FILE: property: first's value vs its value; ..."
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("the scans were made with different properties and cannot be merged (compared with %s):\n  %s",
		e.First, strings.Join(e.Diffs, "\n  "))
}

// Merged is the sum of several saved scans.
type Merged struct {
	// Scan is the combined scan: the first one's model and options, every
	// scan's paths and problems, the counters summed, Complete only if
	// every scan was. Files is empty and Table nil: the tables were
	// merged as streams into Histogram and Summary.
	Scan
	Histogram *ddt.Histogram
	Summary   ddt.Summary
	// Sample is the estimate for the whole data of scans made with
	// --sample (nil without): from every entry of the merged sample.
	Sample *ddt.SampleEstimate
	// ReadSample is, for scans made with --read (Header.Read), the merged
	// table of the records read tallied for the estimate
	// (estimate.Compute, with the summed counters); nil without.
	ReadSample *estimate.Tally
	// ReadGroups is, for scans made with a group plan (estimate.Plan.Groups),
	// the merged table of the records read gathered by content and group
	// (estimate.GroupSample); nil without.
	ReadGroups *estimate.GroupSample
	Partial    []string // the saved scans holding interrupted scans
	// Missing says, one sentence per sharded scan, which of its shards
	// were not given (also in Notes): the result covers the others'
	// shares only.
	Missing []string
	// Notes are warnings for the user: scans naming the same paths (which
	// merge adds all the same), releases or ddtsim versions that differ.
	Notes []string
	// Memory is what the merge's readers and buffers held at most,
	// bytes (an estimate: readerMemory per partition file open).
	Memory int64
}

// Result returns the merged scan as an analyzer result (without a table:
// TableBytes 0, where the readers' bound, or the inputs' peaks added up,
// said more than the process's peak RSS: found by a new user, "table
// 32 MiB at its peak, process 25.7 MiB peak RSS" for 8 shards).
func (m *Merged) Result() *analyzer.Analysis {
	c := m.Counters
	setTableCounters(&c, m.Summary)
	c.TableBytes, c.SpillRuns = 0, 0
	return &analyzer.Analysis{Histogram: m.Histogram, Counters: c}
}

// MergeOptions adjust Merge.
type MergeOptions struct {
	// Jobs bounds the partitions merged at once; ≤ 0 means GOMAXPROCS.
	Jobs int
	// Mem > 0 bounds the merge's memory, bytes: fewer partitions are
	// merged at once so that their readers fit (one at least, whatever
	// it takes: MinMergeMemory says how much that is). With a group
	// plan (--read) the groups read then go to sorted runs in TmpDir
	// ($TMPDIR when "") past Mem's worth (estimate.GroupSample.Spill);
	// closing Merged.ReadGroups removes them.
	Mem    int64
	TmpDir string
}

// readerMemory is what one open partition file takes while merged,
// bytes: measured (TestReaderMemory) with margin; pages are pageBytes.
const readerMemory = 2 << 20

// MinMergeMemory is the memory Merge needs for n saved scans of format
// version 2, bytes: one partition file of each open at once.
func MinMergeMemory(n int) int64 { return int64(n) * readerMemory }

// ErrSameScan is wrapped by Merge's refusal of one saved scan named twice
// (under one name or two).
var ErrSameScan = errors.New("are the same saved scan")

// Merge reads the saved scans at paths and adds them up: tables (refcnts
// of equal keys add) and counters. Scans with different models are
// refused with a *ModelError listing the differences, before any table is
// read. The tables of format version 2 are merged partition by partition
// as sorted streams (a k-way merge), so memory does not grow with the
// number of entries (MergeOptions.Mem); a scan of format version 1 is read
// into memory first.
func Merge(paths []string, opts MergeOptions) (*Merged, error) {
	m, scans, err := combine(paths)
	if err != nil {
		return nil, err
	}
	policy, err := m.Model.Policy()
	if err != nil {
		return nil, fmt.Errorf("%s: the saved model: %w", paths[0], err)
	}
	for i, in := range scans {
		if in.legacy {
			if err := in.load(paths[i]); err != nil {
				return nil, err
			}
			AddCounters(&m.Counters, &in.Counters)
		}
	}
	if err := m.mergeTables(scans, policy, opts); err != nil {
		return nil, err
	}
	return m, nil
}

// MergeHistogram is Merge with the histogram of the merged tables reduced
// elsewhere (an SQL engine running package histsql's query over the
// scans' Parquet files): it reads only the manifests of the scans at
// paths, checks and adds them up as Merge does, and takes h for the
// table. Scans made with --sample are refused: their estimate needs every
// entry (ddtsim merge computes it). Scans of format version 1 are refused
// too: engines cannot read their tables.
func MergeHistogram(paths []string, h *ddt.Histogram) (*Merged, error) {
	m, scans, err := combine(paths)
	if err != nil {
		return nil, err
	}
	if m.Model.Sample > 1 {
		return nil, fmt.Errorf("the scans were made with --sample %d: the estimate for the whole data needs every sampled entry, not a histogram: use ddtsim merge", m.Model.Sample)
	}
	if m.Read != nil {
		return nil, fmt.Errorf("the scans were made with --read (%s): the estimate for the whole data needs the sample's entries, not a histogram: use ddtsim merge", m.Read)
	}
	for i, in := range scans {
		if in.legacy {
			return nil, fmt.Errorf("%s: a saved scan of format version 1 has no Parquet table for an engine to read: save it again with ddtsim resume, or use ddtsim merge", paths[i])
		}
		m.Summary.EmbeddedRefs += in.Counters.Embedded
		m.Summary.EmbeddedLSize += in.Counters.EmbeddedLSize
		m.Summary.EmbeddedEntries += in.Counters.UniqueEmbedded
	}
	m.Histogram = h
	t := h.Total()
	m.Summary.Entries, m.Summary.Refs = t.Allocated.Blocks, t.Referenced.Blocks
	// Every stored block of every scan is one reference in the
	// histogram: a result of other scans, or one that read a scan twice
	// (a glob that matched a copy, or the temporary directory of a save
	// that was killed), does not add up.
	var stored uint64
	for _, in := range scans {
		stored += in.Counters.Stored
	}
	if stored != t.Referenced.Blocks {
		return nil, &HistogramError{fmt.Sprintf("the result counts %s, but the scans named stored %d: it is not the query's over exactly these scans (another set of scans, or a glob that also matched a copy of one, or the .NAME.*.tmp directory a killed save left)",
			english.Count(t.Referenced.Blocks, "referenced block"), stored)}
	}
	policy, err := m.Model.Policy()
	if err != nil {
		return nil, fmt.Errorf("%s: the saved model: %w", paths[0], err)
	}
	if err := checkHistogram(h, policy); err != nil {
		return nil, err
	}
	return m, nil
}

// checkHistogram refuses a histogram no table of the policy p could give:
// in a row, a block larger than the largest record (LSIZE) or than its
// LSIZE (PSIZE), a DSIZE beyond that of the largest record uncompressed,
// or less referenced than allocated. Found by a new user: DSIZE cells made
// 100 times larger gave "copies = 98.96" on a pool of one copy, exit 0.
func checkHistogram(h *ddt.Histogram, p *zio.Policy) error {
	maxL := uint64(p.RecordSize)
	maxD := p.DSize(maxL)
	for i, b := range h {
		for _, x := range []struct {
			what string
			s    ddt.Stat
		}{{"allocated", b.Allocated}, {"referenced", b.Referenced}} {
			switch {
			case x.s.LSize > x.s.Blocks*maxL:
				return &HistogramError{fmt.Sprintf("bucket %d: %s LSIZE %d for %s: more than %d bytes a block (the scans' largest record)", i, x.what, x.s.LSize, english.Count(x.s.Blocks, "block"), maxL)}
			case x.s.PSize > x.s.LSize:
				return &HistogramError{fmt.Sprintf("bucket %d: %s PSIZE %d above its LSIZE %d", i, x.what, x.s.PSize, x.s.LSize)}
			case x.s.DSize > x.s.Blocks*maxD:
				return &HistogramError{fmt.Sprintf("bucket %d: %s DSIZE %d for %s: more than %d bytes a block (the DSIZE of the largest record uncompressed on this pool)", i, x.what, x.s.DSize, english.Count(x.s.Blocks, "block"), maxD)}
			}
		}
		a, r := b.Allocated, b.Referenced
		if r.Blocks < a.Blocks || r.LSize < a.LSize || r.PSize < a.PSize || r.DSize < a.DSize {
			return &HistogramError{fmt.Sprintf("bucket %d: referenced %+v less than allocated %+v", i, r, a)}
		}
	}
	return nil
}

// HistogramError is MergeHistogram's refusal of a histogram that does not
// fit the scans named.
type HistogramError struct{ Msg string }

func (e *HistogramError) Error() string { return e.Msg }

// combine reads the headers of the saved scans at paths, refuses a scan
// named twice and scans of different models, and adds up what is not the
// table: paths, problems, counters (of format 1 scans: when loaded),
// notes.
func combine(paths []string) (*Merged, []*input, error) {
	if len(paths) == 0 {
		return nil, nil, fmt.Errorf("no saved scan to merge")
	}
	for i, a := range paths {
		for _, b := range paths[:i] {
			fa, ea := os.Stat(a)
			fb, eb := os.Stat(b)
			if ea == nil && eb == nil && os.SameFile(fa, fb) {
				return nil, nil, fmt.Errorf("%s and %s %w: merging it with itself would count its files twice", escape.Path(b), escape.Path(a), ErrSameScan)
			}
		}
	}
	scans := make([]*input, len(paths))
	hdrs := make([]*Header, len(paths))
	for i, p := range paths {
		in, err := openInput(p)
		if err != nil {
			return nil, nil, err
		}
		scans[i], hdrs[i] = in, &in.Header
	}
	var diffs []string
	for i := 1; i < len(paths); i++ {
		if d := hdrs[0].Model.Diff(hdrs[i].Model); len(d) > 0 {
			diffs = append(diffs, paths[i]+": "+strings.Join(d, "; "))
		}
	}
	for i := 1; i < len(paths); i++ {
		if d := planDiff(hdrs[0].Read, hdrs[i].Read); d != "" {
			diffs = append(diffs, paths[i]+": "+d)
		}
	}
	if diffs != nil {
		return nil, nil, &ModelError{First: paths[0], Diffs: diffs}
	}
	group, shardNotes, err := shardGroups(paths, hdrs)
	if err != nil {
		return nil, nil, err
	}
	m := &Merged{}
	m.Notes = append(m.Notes, differing(hdrs, "OpenZFS releases", func(h *Header) string { return h.Model.Release },
		"they follow the same rules; the report names "+hdrs[0].Model.Release)...)
	m.Notes = append(m.Notes, differing(hdrs, "ddtsim versions", func(h *Header) string { return h.Ddtsim },
		"their figures may differ where ddtsim changed")...)
	m.Notes = append(m.Notes, overlaps(paths, hdrs, group)...)
	m.Notes = append(m.Notes, shardNotes...)
	m.Missing = shardNotes
	m.Header = *hdrs[0]
	m.Shard = nil
	m.Files = nil
	m.Complete = true
	m.Paths, m.Problems = nil, nil
	for i, in := range scans {
		if !in.Complete {
			m.Complete = false
			m.Partial = append(m.Partial, paths[i])
		}
		if group[i] < 0 || group[i] == i { // a sharded scan's paths once
			m.Paths = append(m.Paths, in.Paths...)
		}
		m.Problems = append(m.Problems, in.Problems...)
		if !in.legacy {
			AddCounters(&m.Counters, &in.Counters)
		}
	}
	return m, scans, nil
}

// planDiff says how two scans' read plans (Header.Read) differ: "" when
// they are the same. Merge adds the samples of scans that read with one
// plan, and computes the estimate once; samples of other fractions or
// seeds are not one sample, and a sample is not a full scan.
func planDiff(a, b *estimate.Plan) string {
	desc := func(p *estimate.Plan) string {
		if p == nil {
			return "every record (no --read)"
		}
		return p.String()
	}
	if (a == nil) == (b == nil) && (a == nil || *a == *b) {
		return ""
	}
	return "--read: " + desc(a) + " vs " + desc(b) + ": only the samples of one read plan add up"
}

// input is one saved scan to merge.
type input struct {
	Header
	Counters analyzer.Counters
	dir      string // format version 2: the directory
	parts    []Part
	legacy   bool    // format version 1: rows holds its table
	rows     [][]Row // per partition, sorted (legacy)
}

// openInput reads the header (and manifest) of the saved scan at path.
func openInput(path string) (*input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a directory or a regular file (%s)", escape.Path(path), ErrNotScan, st.Mode().Type())
	}
	if !st.IsDir() {
		s, err := Read(path, DecodeOptions{HeaderOnly: true})
		if err != nil {
			return nil, err
		}
		return &input{Header: s.Header, legacy: true}, nil
	}
	mf, err := ReadManifest(path)
	if err != nil {
		return nil, err
	}
	return &input{Header: mf.Header, Counters: mf.Counters, dir: path, parts: mf.Parts}, nil
}

// load reads a scan of format version 1 into sorted rows per partition.
func (in *input) load(path string) error {
	s, err := Read(path, DecodeOptions{})
	if err != nil {
		return err
	}
	in.Header, in.Counters = s.Header, s.Counters
	in.rows = make([][]Row, Partitions)
	s.Table.Range(func(k ddt.Key, e ddt.Entry) bool {
		r := rowOf(&k, &e)
		in.rows[Partition(&r.Key)] = append(in.rows[Partition(&r.Key)], r)
		return true
	})
	if err := s.Table.Err(); err != nil {
		return err
	}
	for _, rs := range in.rows {
		slices.SortFunc(rs, func(a, b Row) int { return bytes.Compare(a.Key[:], b.Key[:]) })
	}
	return nil
}

// rowSource yields one scan's rows of one partition in key order; nil at
// the end.
type rowSource interface {
	next() (*Row, error)
	close()
}

type memSource struct {
	rows []Row
	i    int
}

func (s *memSource) next() (*Row, error) {
	if s.i == len(s.rows) {
		return nil, nil
	}
	s.i++
	return &s.rows[s.i-1], nil
}

func (s *memSource) close() {}

// partResult is what merging one partition gives.
type partResult struct {
	hist     ddt.Histogram
	sum      ddt.Summary
	sampled  []ddt.Entry           // with a sample: every stored entry
	tally    *estimate.Tally       // with a read plan: the entries tallied
	groups   *estimate.GroupSample // with a group plan: the entries by content and group
	disagree uint64                // keys whose PSIZE differs between scans
}

// mergeTables merges the tables partition by partition, several at once
// as opts allow.
func (m *Merged) mergeTables(scans []*input, policy *zio.Policy, opts MergeOptions) error {
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	files := 0
	for _, in := range scans {
		if !in.legacy {
			files++
		}
	}
	per := MinMergeMemory(files)
	if opts.Mem > 0 && per > 0 {
		jobs = min(jobs, max(1, int(opts.Mem/per)))
	}
	jobs = min(jobs, Partitions)
	m.Memory = int64(jobs) * per
	sample := m.Model.Sample > 1
	// A group plan's groups in strata, from the counters of all the scans.
	var strata *estimate.Strata
	if m.Read != nil && m.Read.Groups {
		strata = m.Counters.Strata(*m.Read, m.Model.Records, policy.DSize)
	}
	results := make([]*partResult, Partitions)
	if err := eachPartition(jobs, func(p int) (err error) {
		results[p], err = mergePartition(p, scans, policy, sample, m.Read != nil, m.Read != nil && m.Read.Groups, func() *estimate.GroupSample { return newGroups(opts, jobs, strata) })
		return err
	}); err != nil {
		for _, r := range results {
			if r != nil && r.groups != nil {
				r.groups.Close() // the runs on disk of the partitions merged
			}
		}
		return err
	}
	m.Histogram = &ddt.Histogram{}
	var disagree uint64
	var sampled []ddt.Entry
	for _, r := range results {
		m.Histogram.Merge(&r.hist)
		m.Summary.Add(r.sum)
		disagree += r.disagree
		sampled = append(sampled, r.sampled...)
		if r.tally != nil {
			if m.ReadSample == nil {
				m.ReadSample = estimate.NewTally()
			}
			m.ReadSample.Merge(r.tally) // the partitions' keys are disjoint
		}
		if r.groups != nil {
			if m.ReadGroups == nil {
				m.ReadGroups = newGroups(opts, jobs, strata)
			}
			m.ReadGroups.Merge(r.groups)
		}
	}
	if m.ReadGroups != nil {
		// The tables' keys are (content, group): their histogram and
		// entries are by content, from the group sample.
		h, sum := m.ReadGroups.Histogram()
		m.Histogram, m.Summary = h, sum
		if err := m.ReadGroups.SpillErr(); err != nil {
			m.Notes = append(m.Notes, fmt.Sprintf("the --read sample's groups could not be written to disk under --mem (%v): they were kept in memory", err))
		}
	}
	if sample {
		m.Sample = ddt.EstimateSample(func(f func(ddt.Entry) bool) {
			for _, e := range sampled {
				if !f(e) {
					return
				}
			}
		}, m.Model.Sample)
	}
	if disagree > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%d blocks have different compressed sizes in different scans (made by different ddtsim versions?): the first scan's size is counted", disagree))
	}
	return nil
}

// newGroups returns a group sample of the given strata that spills its
// groups under opts.Mem, shared by jobs partitions at once and the merged
// sample.
func newGroups(opts MergeOptions, jobs int, strata *estimate.Strata) *estimate.GroupSample {
	gs := estimate.NewGroupSample(strata)
	if opts.Mem > 0 {
		dir := opts.TmpDir
		if dir == "" {
			dir = os.TempDir()
		}
		gs.Spill(dir, max(opts.Mem/int64(jobs+1), 1024*estimate.GroupBytes))
	}
	return gs
}

// mergePartition merges partition p of every scan: a k-way merge of
// sorted streams, adding the refcnts of equal keys. With sample every
// entry is kept, with read they are tallied; with groups they are gathered
// by content and group (in a sample of newGroups: estimate.GroupSample).
func mergePartition(p int, scans []*input, policy *zio.Policy, sample, read, groups bool, newGroups func() *estimate.GroupSample) (_ *partResult, err error) {
	var h mergeHeap
	res := &partResult{}
	defer func() {
		for _, s := range h.srcs {
			s.src.close()
		}
		if err != nil && res.groups != nil {
			res.groups.Close() // its runs on disk
		}
	}()
	for _, in := range scans {
		var src rowSource
		if in.legacy {
			src = &memSource{rows: in.rows[p]}
		} else {
			pr, err := openPart(in.dir, p, in.parts[p], true)
			if err != nil {
				return nil, err
			}
			src = &checkedSource{pr, policy}
		}
		r, err := src.next()
		if err != nil {
			src.close()
			return nil, err
		}
		if r == nil {
			src.close()
			continue
		}
		hs := &heapSrc{src: src}
		hs.set(r)
		h.srcs = append(h.srcs, hs)
	}
	h.init()
	switch {
	case groups:
		res.groups = newGroups()
	case read:
		res.tally = estimate.NewTally()
	}
	for len(h.srcs) > 0 {
		top := h.srcs[0]
		cur, hi, lo := top.row, top.hi, top.lo
		ref := uint64(cur.Refcnt)
		if err := h.advance(); err != nil {
			return nil, err
		}
		for len(h.srcs) > 0 && h.srcs[0].hi == hi && h.srcs[0].lo == lo {
			o := &h.srcs[0].row
			if o.LSize != cur.LSize {
				return nil, fmt.Errorf("%w: key %x has lsize %d in one scan and %d in another: they cannot be of the same model", ErrCorrupt, cur.Key, cur.LSize, o.LSize)
			}
			if o.PSize != cur.PSize {
				res.disagree++
			}
			if ref+uint64(o.Refcnt) < ref || ref+uint64(o.Refcnt) > math.MaxInt64 {
				return nil, fmt.Errorf("%w: key %x: its refcnts add up beyond 2^63 (a damaged or crafted table)", ErrCorrupt, cur.Key)
			}
			ref += uint64(o.Refcnt)
			if err := h.advance(); err != nil {
				return nil, err
			}
		}
		if cur.PSize == 0 {
			res.sum.EmbeddedEntries++
			res.sum.EmbeddedRefs += ref
			res.sum.EmbeddedLSize += ref * uint64(cur.LSize)
			if sample {
				res.sampled = append(res.sampled, ddt.Entry{Refcnt: ref, LSize: uint32(cur.LSize)})
			}
			if groups {
				res.groups.AddEntry(hi, lo, ddt.Entry{Refcnt: ref, LSize: uint32(cur.LSize)}) // embedded: counted by content
			}
			continue
		}
		res.sum.Entries++
		res.sum.Refs += ref
		res.hist.Add(ref, uint64(cur.LSize), uint64(cur.PSize), uint64(cur.DSize))
		switch e := (ddt.Entry{Refcnt: ref, LSize: uint32(cur.LSize), PSize: uint32(cur.PSize), DSize: uint64(cur.DSize)}); {
		case groups:
			res.groups.AddEntry(hi, lo, e) // the key: (content, group)
		case read:
			res.tally.Add(e)
		}
		if sample {
			res.sampled = append(res.sampled, ddt.Entry{Refcnt: ref, LSize: uint32(cur.LSize), PSize: uint32(cur.PSize), DSize: uint64(cur.DSize)})
		}
	}
	return res, nil
}

// checkedSource is a partition file's rows with their DSIZE checked
// against the model.
type checkedSource struct {
	pr     *partReader
	policy *zio.Policy
}

func (c *checkedSource) next() (*Row, error) {
	r, err := c.pr.next()
	if err == nil && r != nil {
		err = checkModel(c.pr, r, c.policy)
	}
	return r, err
}

func (c *checkedSource) close() { c.pr.close() }

// heapSrc is a source and its current row, with its key as two
// big-endian numbers (compared faster than bytes).
type heapSrc struct {
	src    rowSource
	row    Row
	hi, lo uint64
}

func (s *heapSrc) set(r *Row) {
	s.row = *r
	s.hi = binary.BigEndian.Uint64(r.Key[:8])
	s.lo = binary.BigEndian.Uint64(r.Key[8:])
}

// mergeHeap orders the sources by their current key.
type mergeHeap struct{ srcs []*heapSrc }

func (h *mergeHeap) less(i, j int) bool {
	a, b := h.srcs[i], h.srcs[j]
	return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo)
}

func (h *mergeHeap) init() {
	for i := len(h.srcs)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) down(i int) {
	n := len(h.srcs)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h.srcs[i], h.srcs[c] = h.srcs[c], h.srcs[i]
		i = c
	}
}

// advance moves the top source to its next row (dropping it at its end).
func (h *mergeHeap) advance() error {
	top := h.srcs[0]
	r, err := top.src.next()
	if err != nil {
		return err
	}
	if r == nil {
		top.src.close()
		last := len(h.srcs) - 1
		h.srcs[0] = h.srcs[last]
		h.srcs = h.srcs[:last]
	} else {
		top.set(r)
	}
	if len(h.srcs) > 0 {
		h.down(0)
	}
	return nil
}

// ShardError is Merge's refusal of shards that do not add up to one
// scan: a shard given twice, or shards made with different options.
type ShardError struct{ Msg string }

func (e *ShardError) Error() string { return e.Msg }

// shardGroups finds the shards of one sharded scan (scan --shard i/N)
// among the saved scans: those with the same count and the same paths.
// Each must be given once and made with the same options, and shards of
// the same paths with the same count; missing ones are noted (the merge covers the shares given). group[i] is the index
// of the first scan of scan i's group, -1 for a scan that is not a shard.
func shardGroups(paths []string, hdrs []*Header) (group []int, notes []string, err error) {
	group = make([]int, len(hdrs))
	first := map[string]int{}
	byPaths := map[string]int{} // the first shard of each set of paths
	var order []int
	for i, h := range hdrs {
		group[i] = -1
		if h.Shard == nil || !h.Shard.Sharded() {
			continue
		}
		named := strings.Join(absPaths(h), "\x00")
		if o, ok := byPaths[named]; !ok {
			byPaths[named] = i
		} else if c := hdrs[o].Shard.Count; c != h.Shard.Count {
			// Found by a new user: 0/2 and 1/3 merged, PARTIAL, with
			// files counted twice.
			return nil, nil, &ShardError{fmt.Sprintf("%s is shard %s and %s shard %s of the scan of %s: shards of different counts do not add up to one scan (merge the N shards of one --shard i/N run)",
				escape.Path(paths[o]), hdrs[o].Shard, escape.Path(paths[i]), h.Shard, escape.Path(strings.Join(Strings(h.Paths), " ")))}
		}
		key := fmt.Sprintf("%d\x00%s", h.Shard.Count, named)
		f, ok := first[key]
		if !ok {
			f = i
			first[key] = i
			order = append(order, i)
		}
		group[i] = f
	}
	for _, f := range order {
		h0 := hdrs[f]
		named := escape.Path(strings.Join(Strings(h0.Paths), " "))
		count := h0.Shard.Count
		seen := map[uint32]int{}
		n := 0
		for i, h := range hdrs {
			if group[i] != f {
				continue
			}
			n++
			if o, ok := seen[h.Shard.Index]; ok {
				return nil, nil, &ShardError{fmt.Sprintf("%s and %s are both shard %s of the scan of %s: merging both would count its files twice",
					escape.Path(paths[o]), escape.Path(paths[i]), h.Shard, named)}
			}
			seen[h.Shard.Index] = i
			if h.Options != h0.Options {
				return nil, nil, &ShardError{fmt.Sprintf("%s and %s are shards of the scan of %s made with different options (--follow, --count-links, -x): their shares do not add up to one scan",
					escape.Path(paths[f]), escape.Path(paths[i]), named)}
			}
		}
		var missing []string
		for i := uint32(0); i < count; i++ {
			if _, ok := seen[i]; !ok {
				missing = append(missing, fmt.Sprintf("%d/%d", i, count))
			}
		}
		if len(missing) > 0 {
			if len(missing) > 10 {
				missing = append(missing[:10], fmt.Sprintf("and %d more", len(missing)-10))
			}
			notes = append(notes, fmt.Sprintf("%d of the %d shards of the scan of %s are missing (%s): the result covers the shares of the %d given only",
				int(count)-n, count, named, strings.Join(missing, ", "), n))
		}
	}
	return group, notes, nil
}

// absPaths are a scan's paths made absolute (from its working directory)
// and clean: how shards of one tree named differently (data, data/,
// /home/a/data) are told to be the same.
func absPaths(h *Header) []string {
	out := make([]string, len(h.Paths))
	for i, p := range h.Paths {
		s := string(p)
		if !filepath.IsAbs(s) {
			s = filepath.Join(string(h.Dir), s)
		}
		out[i] = filepath.Clean(s)
	}
	return out
}

// differing notes when the scans differ in what value gives.
func differing(hdrs []*Header, what string, value func(*Header) string, consequence string) []string {
	seen := map[string]bool{}
	var vals []string
	for _, h := range hdrs {
		if v := value(h); !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	if len(vals) < 2 {
		return nil
	}
	return []string{fmt.Sprintf("the scans were made with different %s (%s): %s", what, strings.Join(vals, ", "), consequence)}
}

// overlaps notes the paths two scans share (the same path, or one inside
// the other). Merge cannot tell whether they hold the same files (another
// host, a shared mount, files changed in between): it adds them.
func overlaps(files []string, hdrs []*Header, group []int) []string {
	// A scan's paths follow the rules of the system that made it: a
	// working directory from the root ("/home/a") is a Unix system's,
	// its paths slash paths wherever they are merged (on Windows too);
	// the others are this system's.
	unix := func(h *Header) bool { return strings.HasPrefix(string(h.Dir), "/") }
	abs := func(h *Header, p Path) string {
		s := string(p)
		if unix(h) {
			if !path.IsAbs(s) {
				s = path.Join(string(h.Dir), s)
			}
			return path.Clean(s)
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(string(h.Dir), s)
		}
		return filepath.Clean(s)
	}
	inside := func(a, b string) bool { // a is b or inside it
		if a == b {
			return true
		}
		for _, sep := range []string{"/", string(filepath.Separator)} {
			if strings.HasPrefix(a, strings.TrimSuffix(b, sep)+sep) {
				return true
			}
		}
		return false
	}
	var notes []string
	for i := range hdrs {
		for j := i + 1; j < len(hdrs); j++ {
			if group[i] >= 0 && group[i] == group[j] {
				continue // shards of one scan: the same paths, not the same files
			}
			for _, p := range hdrs[i].Paths {
				for _, q := range hdrs[j].Paths {
					a, b := abs(hdrs[i], p), abs(hdrs[j], q)
					if !inside(a, b) && !inside(b, a) {
						continue
					}
					shared := a
					if len(b) > len(a) {
						shared = b
					}
					if hdrs[i].Host == hdrs[j].Host {
						notes = append(notes, fmt.Sprintf("%s and %s both scanned %s on host %s: merge adds them, so the files they share count twice",
							escape.Path(files[i]), escape.Path(files[j]), escape.Path(shared), escape.Path(hdrs[i].Host)))
					} else {
						notes = append(notes, fmt.Sprintf("%s (host %s) and %s (host %s) both name %s: merge adds them; if that is the same storage, its files count twice",
							escape.Path(files[i]), escape.Path(hdrs[i].Host), escape.Path(files[j]), escape.Path(hdrs[j].Host), escape.Path(shared)))
					}
				}
			}
		}
	}
	return notes
}

// AddCounters adds every counter of src to dst (for scans of different
// files, every counter adds up), but MaxLSize, the largest of the two.
func AddCounters(dst, src *analyzer.Counters) {
	maxL := max(dst.MaxLSize, src.MaxLSize)
	defer func() { dst.MaxLSize = maxL }()
	d := reflect.ValueOf(dst).Elem()
	s := reflect.ValueOf(src).Elem()
	for i := 0; i < d.NumField(); i++ {
		if f := d.Field(i); f.Kind() == reflect.Uint64 && f.CanSet() {
			f.SetUint(f.Uint() + s.Field(i).Uint())
		}
	}
	dst.Indirect.Add(src.Indirect)
	dst.DirZAPs.Add(src.DirZAPs)
	// A group plan's files per size (each file counted by one shard).
	for size, n := range src.SizeFiles {
		if dst.SizeFiles == nil {
			dst.SizeFiles = map[uint64]uint64{}
		}
		dst.SizeFiles[size] += n
	}
	for l, n := range src.OneRecordSizes {
		if dst.OneRecordSizes == nil {
			dst.OneRecordSizes = map[uint64]uint64{}
		}
		dst.OneRecordSizes[l] += n
	}
	for size, n := range src.SizeHoles {
		if dst.SizeHoles == nil {
			dst.SizeHoles = map[uint64]uint64{}
		}
		dst.SizeHoles[size] += n
	}
}
