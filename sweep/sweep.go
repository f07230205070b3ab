// Package sweep runs several write policies ("lanes": the same release,
// pool, copies and dedup, with different recordsize and compression) over
// the same files from a single read of every byte: each file is read once,
// sequentially, in chunks of the largest recordsize, and every lane cuts
// its own records out of the chunk.
//
// The per-record rules are the analyzer's (package analyzer): a file no
// larger than the recordsize is one block of its size rounded up to 512,
// a larger one records of exactly recordsize with the tail zero-padded; an
// all-zero record is a hole when the lane's policy makes it one
// (zio.Policy.ZeroIsHole) or the file is copied sparse; the other records
// are keyed by their BLAKE3 digest and only the first reference of a
// content is compressed.
//
// Limits of this version: holes of the source files are read as zeros (no
// SEEK_DATA), symlinks inside directories are not followed, hard links are
// counted once, block devices and volumes (volblocksize) are not handled,
// and there is no sampling, spilling or resume.
package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/ddt"
	"github.com/ddtsim/ddtsim/zio"
)

// Options configure a sweep.
type Options struct {
	// Lanes are the policies, each valid; they must share release,
	// vdev, copies and dedup (only RecordSize, Compression and Level
	// differ).
	Lanes  []*zio.Policy
	Sparse analyzer.Sparse
	// Jobs is the number of workers (files read at once); ≤ 0 means
	// GOMAXPROCS.
	Jobs int
	// Warn receives per-path problems, possibly from several goroutines at
	// once. Nil discards them (they are still counted).
	Warn func(path string, err error)
}

// Counters describe what the sweep read.
type Counters struct {
	Files        uint64 `json:"files"`         // regular files counted (an inode once)
	Dirs         uint64 `json:"dirs"`          // directories walked
	Skipped      uint64 `json:"skipped"`       // symlinks, special files and repeated inodes skipped
	Errors       uint64 `json:"errors"`        // paths that could not be read (fully)
	LogicalBytes uint64 `json:"logical_bytes"` // sum of the file sizes
	ReadBytes    uint64 `json:"read_bytes"`    // bytes read from the files, all lanes together
	// HoleBytes are file bytes inside holes of the source files (found
	// with SEEK_DATA, whole chunks only): zeros, not read. ReadBytes +
	// HoleBytes = LogicalBytes for files read whole.
	HoleBytes uint64 `json:"hole_bytes"`
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
	s := &sweep{opts: opts, chunk: chunk, seen: map[devIno]bool{}, dirs: map[devIno]bool{}, zero: ddt.NewZeroKeys()}
	s.lanes = make([]*lane, len(opts.Lanes))
	for i, p := range opts.Lanes {
		s.lanes[i] = &lane{p: p, table: ddt.NewTable(p.DSize)}
	}
	files := make(chan string, 4*jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.worker(ctx, files)
		}()
	}
	s.walk(ctx, paths, files)
	close(files)
	wg.Wait()

	res := &Result{Counters: s.c}
	res.Counters.ReadBytes = uint64(s.read.Load())
	res.Counters.HoleBytes = uint64(s.holeBytes.Load())
	res.Counters.LogicalBytes = uint64(s.logical.Load())
	res.Counters.Files = uint64(s.files.Load())
	res.Counters.Errors = uint64(s.errors.Load())
	for _, l := range s.lanes {
		h, st := l.table.Summarize()
		res.Lanes = append(res.Lanes, Lane{Policy: l.p, Table: l.table, Histogram: h, Summary: st,
			Records: uint64(l.records.Load()), Holes: uint64(l.holes.Load())})
	}
	return res, ctx.Err()
}

type devIno struct{ dev, ino uint64 }

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

	// walker only
	c    Counters
	seen map[devIno]bool
	dirs map[devIno]bool

	read, logical, files, errors, holeBytes atomic.Int64
}

func (s *sweep) warn(path string, err error) {
	s.errors.Add(1)
	if s.opts.Warn != nil {
		s.opts.Warn(path, err)
	}
}

// walk sends every regular file below paths once per inode. A path named
// is followed if it is a symlink; symlinks inside directories are not.
func (s *sweep) walk(ctx context.Context, paths []string, out chan<- string) {
	for _, p := range paths {
		if ctx.Err() != nil {
			return
		}
		fi, err := os.Stat(p)
		if err != nil {
			s.warn(p, err)
			continue
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			s.c.Skipped++
			s.warn(p, errors.New("skipped: not a regular file or a directory (a sweep reads regular files only)"))
			continue
		}
		s.visit(ctx, p, fi, out)
	}
}

func (s *sweep) visit(ctx context.Context, path string, fi fs.FileInfo, out chan<- string) {
	if ctx.Err() != nil {
		return
	}
	var id devIno
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = devIno{uint64(st.Dev), st.Ino}
	}
	switch {
	case fi.IsDir():
		if s.dirs[id] {
			s.c.Skipped++
			return
		}
		s.dirs[id] = true
		s.c.Dirs++
		entries, err := os.ReadDir(path)
		if err != nil {
			s.warn(path, err)
		}
		for _, e := range entries {
			full := filepath.Join(path, e.Name())
			if e.Type()&fs.ModeSymlink != 0 {
				s.c.Skipped++
				continue
			}
			info, err := e.Info()
			if err != nil {
				s.warn(full, err)
				continue
			}
			s.visit(ctx, full, info, out)
		}
	case fi.Mode().IsRegular():
		if s.seen[id] {
			s.c.Skipped++
			return
		}
		s.seen[id] = true
		out <- path
	default:
		s.c.Skipped++
	}
}

// worker reads the files it receives, one at a time, and feeds every lane.
func (s *sweep) worker(ctx context.Context, files <-chan string) {
	buf := make([]byte, s.chunk)
	zeros := make([]byte, s.chunk)
	writers := make([]*zio.Writer, len(s.lanes))
	for i, l := range s.lanes {
		writers[i] = zio.NewWriter(l.p)
	}
	for path := range files {
		if ctx.Err() != nil {
			continue
		}
		if err := s.file(path, buf, zeros, writers); err != nil {
			s.warn(path, err)
		}
	}
}

func (s *sweep) file(path string, buf, zeros []byte, writers []*zio.Writer) error {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("no longer a regular file")
	}
	size := uint64(st.Size)
	s.files.Add(1)
	s.logical.Add(int64(size))
	copyHoles := false
	switch s.opts.Sparse {
	case analyzer.SparseAlways:
		copyHoles = true
	case analyzer.SparseAuto:
		copyHoles = uint64(st.Blocks)*512 < size
	}
	C := uint64(s.chunk)
	nextData := uint64(0) // the first data at or after the offsets up to it (SEEK_DATA)
	seek := true
	for off := uint64(0); off < size; {
		want := min(C, size-off)
		if seek && off >= nextData {
			// Where the next data is: a chunk wholly before it is a hole
			// of the source, zeros that need no reading.
			nd, err := unix.Seek(int(f.Fd()), int64(off), unix.SEEK_DATA)
			switch {
			case errors.Is(err, unix.ENXIO):
				nextData = size // only a hole from here on
			case err != nil:
				seek = false // no SEEK_DATA here: read everything
			default:
				nextData = uint64(nd)
			}
		}
		if seek && nextData >= off+want {
			// The whole chunks up to the next data (or the end) at once:
			// a terabyte hole costs no more than a small one.
			end := size
			if nextData < size {
				end = off + (nextData-off)/C*C
			}
			s.holeBytes.Add(int64(end - off))
			for i, l := range s.lanes {
				s.zeroRun(l, writers[i], size, end-off, zeros, copyHoles)
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
			s.lane(l, writers[i], size, off, buf, zeros, copyHoles)
		}
		if uint64(got) < want {
			return fmt.Errorf("file shrank while read (%d bytes at offset %d)", got, off)
		}
		off += want
	}
	return nil
}

// zeroRun accounts, in lane l, the records of a file of size bytes in n
// bytes of whole chunks, all zeros (a hole of the source): holes when the
// lane makes zero records holes, else one zero block referenced once per
// record, as lane would for the zeros read.
func (s *sweep) zeroRun(l *lane, w *zio.Writer, size, n uint64, zeros []byte, copyHoles bool) {
	lsize, _ := zio.FileRecords(size, l.p.RecordSize)
	ls := uint64(lsize)
	recs := (n + ls - 1) / ls
	l.records.Add(int64(recs))
	if l.p.ZeroIsHole() || copyHoles {
		l.holes.Add(int64(recs))
		return
	}
	k := s.zero.Get(lsize)
	if l.table.RefN(k, lsize, recs) {
		analyzer.StoreFirst(l.table, w, k, zeros[:ls], true)
	}
}

// lane accounts, in lane l, the records of a file of size bytes that lie
// in the chunk buf read at offset off (zero-padded to the chunk size).
func (s *sweep) lane(l *lane, w *zio.Writer, size, off uint64, buf, zeros []byte, copyHoles bool) {
	lsize, _ := zio.FileRecords(size, l.p.RecordSize)
	ls := uint64(lsize)
	for r := uint64(0); r < uint64(len(buf)) && off+r < size; r += ls {
		data := buf[r : r+ls]
		l.records.Add(1)
		zero := bytes.Equal(data, zeros[:ls])
		if zero && (l.p.ZeroIsHole() || copyHoles) {
			l.holes.Add(1)
			continue
		}
		var k ddt.Key
		if zero {
			k = s.zero.Get(lsize)
		} else {
			k = ddt.KeyOf(data)
		}
		if l.table.Ref(k, lsize) {
			analyzer.StoreFirst(l.table, w, k, data, zero)
		}
	}
}
