// Package sweep runs several write policies ("lanes": the same release,
// pool, copies and dedup, with different recordsize and compression) over
// the same files from a single read of every byte: a sweep is N policies
// applied to one stream of files. The files come from package source (the
// walker the scan uses, with its rules for symlinks, hard links, block
// devices named, holes and changed files); each file is read once,
// sequentially, in chunks of the largest recordsize, and every lane cuts
// its own records out of the chunk.
//
// The per-record rules are the scan's: a file is cut into records as
// zio.FileRecords says (module/zfs/zfs_vnops.c: zfs_write()), and each lane
// accounts them with an analyzer.Lane (module/zfs/zio.c:
// zio_write_compress()): an all-zero record is a hole when the lane's
// policy makes it one (zio.Policy.ZeroIsHole) or the file is copied
// sparse; the other records are keyed by their BLAKE3 digest and only the
// first reference of a content is compressed. Whole chunks lying in a hole
// of a source file (source.File.Data) are not read.
//
// With Options.Zvol every file (or block device) is a volume, as a scan
// with --zvol stores it: cut into blocks of exactly the lane's
// volblocksize (zio.ZvolRecords, module/zfs/zvol.c), the last one
// zero-padded; the lanes then differ in volblocksize and compression.
//
// Limits of this version: there is no sampling, spilling or resume.
package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/input/guest"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Options configure a sweep.
type Options struct {
	// Lanes are the policies, each valid; they must share release,
	// vdev, copies and dedup (only RecordSize, Compression and Level
	// differ).
	Lanes  []*zio.Policy
	Sparse model.Sparse
	// Guest reads virtual-disk images as their guests' disks (guest.Open).
	Guest bool
	// Zvol stores each file as a volume (analyzer.Options.Zvol): every
	// lane's RecordSize is its volblocksize.
	Zvol bool
	// Jobs is the number of workers (files read at once); ≤ 0 means
	// GOMAXPROCS.
	Jobs int
	// Warn receives per-path problems, possibly from several goroutines at
	// once. Nil discards them (they are still counted).
	Warn func(path string, err error)
	// Progress, when set, is updated while the sweep runs, as a scan's
	// (analyzer.Options.Progress): files and bytes found by the walk,
	// bytes read or skipped in holes (once for all lanes).
	Progress *analyzer.Progress
	// KeepCache leaves what the sweep reads in the page cache; by default
	// the pages its reading brought in are dropped once read
	// (source.Walker.KeepCache).
	KeepCache bool
	// Faults, for tests only, are the walk's test seams (source.Faults):
	// files that change before they are opened, opens and reads that
	// fail or come back short. nil outside tests.
	Faults *source.Faults
}

// Counters describe what the sweep read.
type Counters struct {
	Files        uint64 `json:"files"`         // files counted (an inode once; see source.Counters.Files)
	Dirs         uint64 `json:"dirs"`          // directories walked
	Skipped      uint64 `json:"skipped"`       // symlinks, special files, repeated directories and inodes skipped
	Errors       uint64 `json:"errors"`        // paths that could not be read (fully)
	LogicalBytes uint64 `json:"logical_bytes"` // sum of the file sizes
	ReadBytes    uint64 `json:"read_bytes"`    // bytes read from the files, all lanes together
	// HoleBytes are file bytes inside holes of the source files (their
	// source.File.Data, whole chunks only): zeros, not read.
	// ReadBytes + HoleBytes = LogicalBytes for files read whole.
	HoleBytes uint64 `json:"hole_bytes"`
	// Changed counts the files that changed while they were read (a
	// warning each, wrapping source.ErrChanged; their figures are
	// approximate). Not errors.
	Changed uint64 `json:"changed,omitempty"`
}

// Lane is the result of one policy.
type Lane struct {
	Policy    *zio.Policy
	Table     *ddt.Table
	Histogram *ddt.Histogram
	Summary   ddt.Summary
	Records   uint64 // level-0 records, holes included
	Holes     uint64 // records not written
}

// Result is a finished sweep: one Lane per Options.Lanes, in that order.
type Result struct {
	Lanes    []Lane
	Counters Counters
}

// Run walks paths and feeds every lane. It fails only on invalid options
// or when ctx is cancelled (then with the partial result).
func Run(ctx context.Context, paths []string, opts Options) (*Result, error) {
	if len(opts.Lanes) == 0 {
		return nil, errors.New("sweep: no lanes")
	}
	first := opts.Lanes[0]
	var chunk uint32
	for _, p := range opts.Lanes {
		if err := p.Validate(); err != nil {
			return nil, err
		}
		if p.Release != first.Release || p.Copies != first.Copies || p.Dedup != first.Dedup || p.Vdev != first.Vdev {
			return nil, errors.New("sweep: lanes must share release, vdev, copies and dedup")
		}
		chunk = max(chunk, p.RecordSize)
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	s := &sweep{opts: opts, chunk: chunk, zero: ddt.NewZeroKeys()}
	s.lanes = make([]*lane, len(opts.Lanes))
	for i, p := range opts.Lanes {
		s.lanes[i] = &lane{p: p, table: ddt.NewTable(p.DSize)}
	}
	files := make(chan *source.File, 4*jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.worker(ctx, files)
		}()
	}
	w := &source.Walker{Paths: paths, Openers: jobs, KeepCache: opts.KeepCache, Faults: opts.Faults}
	if opts.Guest {
		w.Guest, w.GuestParts = guest.Open, guest.Parts
	}
	var src source.Source = w
	walked := src.Walk(ctx, func(f *source.File) {
		if p := opts.Progress; p != nil {
			p.Files.Add(1)
			p.BytesPending.Add(int64(f.Size))
		}
		select {
		case files <- f:
		case <-ctx.Done():
			f.Close()
		}
	}, s.walkWarn)
	if p := opts.Progress; p != nil && ctx.Err() == nil {
		p.Walked.Store(true)
	}
	close(files)
	wg.Wait()

	res := &Result{Counters: Counters{Files: walked.Files, Dirs: walked.Dirs, LogicalBytes: walked.LogicalBytes,
		Skipped: walked.Symlinks + walked.Special + walked.HardLinks + walked.RepeatedDirs + walked.RepeatedFiles + walked.OtherFS + walked.ImageParts}}
	res.Counters.ReadBytes = uint64(s.read.Load())
	res.Counters.HoleBytes = uint64(s.holeBytes.Load())
	res.Counters.Errors = uint64(s.errors.Load())
	res.Counters.Changed = uint64(s.changed.Load())
	for _, l := range s.lanes {
		h, st := l.table.Summarize()
		res.Lanes = append(res.Lanes, Lane{Policy: l.p, Table: l.table, Histogram: h, Summary: st,
			Records: uint64(l.records.Load()), Holes: uint64(l.holes.Load())})
	}
	return res, ctx.Err()
}

// lane is one policy's shared state: its table and record counts.
type lane struct {
	p       *zio.Policy
	table   *ddt.Table
	records atomic.Int64
	holes   atomic.Int64
}

type sweep struct {
	opts  Options
	chunk uint32
	zero  *ddt.ZeroKeys // the zero block's key per LSIZE
	lanes []*lane

	read, errors, changed, holeBytes atomic.Int64
}

func (s *sweep) warn(path string, err error) {
	s.errors.Add(1)
	if s.opts.Warn != nil {
		s.opts.Warn(path, err)
	}
}

// walkWarn is warn for the walk's problems; a special file named is worded
// as a sweep has always worded it.
func (s *sweep) walkWarn(path string, err error) {
	var se *source.SkippedError
	if errors.As(err, &se) {
		err = fmt.Errorf("skipped: not a regular file, a block device or a directory (%s)", se.Kind)
	}
	s.warn(path, err)
}

// worker reads the files it receives, one at a time, and feeds every lane.
func (s *sweep) worker(ctx context.Context, files <-chan *source.File) {
	buf := make([]byte, s.chunk)
	zeros := make([]byte, s.chunk)
	lanes := make([]*analyzer.Lane, len(s.lanes))
	for i, l := range s.lanes {
		lanes[i] = &analyzer.Lane{Policy: l.p, Table: l.table, Zero: s.zero}
	}
	for f := range files {
		if ctx.Err() == nil {
			if err := s.file(f, buf, zeros, lanes); err != nil {
				s.warn(f.Path, err)
			} else if err := f.Changed(); err != nil {
				s.changed.Add(1)
				if s.opts.Warn != nil {
					s.opts.Warn(f.Path, err)
				}
			}
		}
		f.Close()
	}
}

// file reads f in chunks of the largest recordsize and feeds every lane;
// the whole chunks in a hole of f are zeros, not read.
func (s *sweep) file(f *source.File, buf, zeros []byte, lanes []*analyzer.Lane) error {
	size := f.Size
	copyHoles := false
	switch s.opts.Sparse {
	case model.SparseAlways:
		copyHoles = true
	case model.SparseAuto:
		copyHoles = f.LooksSparse
	}
	C := uint64(s.chunk)
	for off := uint64(0); off < size; {
		want := min(C, size-off)
		if next := f.NextData(off); next >= off+want {
			// The whole chunks up to the next data (or the end) at once:
			// a terabyte hole costs no more than a small one.
			end := size
			if next < size {
				end = off + (next-off)/C*C
			}
			s.holeBytes.Add(int64(end - off))
			s.done(end - off)
			for i, l := range s.lanes {
				s.zeroRun(l, lanes[i], size, end-off, copyHoles)
			}
			off = end
			continue
		}
		got, err := f.ReadAt(buf[:want], int64(off))
		s.read.Add(int64(got))
		clear(buf[got:])
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read at offset %d: %w", off+uint64(got), err)
		}
		for i, l := range s.lanes {
			s.lane(l, lanes[i], size, off, buf, zeros, copyHoles)
		}
		s.done(uint64(got))
		if uint64(got) < want {
			return fmt.Errorf("file shrank while read (%d bytes at offset %d)", got, off)
		}
		off += want
	}
	return nil
}

// done counts n more file bytes done in Options.Progress.
func (s *sweep) done(n uint64) {
	if p := s.opts.Progress; p != nil {
		p.BytesDone.Add(int64(n))
	}
}

// zeroRun accounts, in lane l, the records of a file of size bytes in n
// bytes of whole chunks, all zeros (a hole of the source), as lane would
// for the zeros read.
func (s *sweep) zeroRun(l *lane, al *analyzer.Lane, size, n uint64, copyHoles bool) {
	lsize := s.lsize(l, size)
	ls := uint64(lsize)
	recs := (n + ls - 1) / ls
	l.records.Add(int64(recs))
	if _, o := al.ZeroRun(lsize, recs, copyHoles); o == analyzer.Hole {
		l.holes.Add(int64(recs))
	}
}

// lane accounts, in lane l, the records of a file of size bytes that lie
// in the chunk buf read at offset off (zero-padded to the chunk size).
func (s *sweep) lane(l *lane, al *analyzer.Lane, size, off uint64, buf, zeros []byte, copyHoles bool) {
	lsize := s.lsize(l, size)
	ls := uint64(lsize)
	var records, holes int64
	for r := uint64(0); r < uint64(len(buf)) && off+r < size; r += ls {
		data := buf[r : r+ls]
		records++
		if _, o := al.Record(data, bytes.Equal(data, zeros[:ls]), copyHoles); o == analyzer.Hole {
			holes++
		}
	}
	l.records.Add(records)
	l.holes.Add(holes)
}

// lsize is the size of the records lane l cuts a file of size bytes into:
// as a file (zio.FileRecords), or with Options.Zvol as a volume
// (zio.ZvolRecords: every block the volblocksize). The chunk, a multiple
// of every lane's block, holds whole blocks, the last zero-padded.
func (s *sweep) lsize(l *lane, size uint64) uint32 {
	if s.opts.Zvol {
		lsize, _ := zio.ZvolRecords(size, l.p.RecordSize)
		return lsize
	}
	lsize, _ := zio.FileRecords(size, l.p.RecordSize)
	return lsize
}
