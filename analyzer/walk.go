package analyzer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/ddt"
	"github.com/ddtsim/ddtsim/zio"
)

// chunkBytes is how much of one file one work item covers: large files are
// split so that all workers help with a single big image.
const chunkBytes = 8 << 20

type scan struct {
	opts     Options
	table    *ddt.Table
	zero     *zeroKeys
	counters Counters // the walker's own counters
	errors   atomic.Int64
	seen     map[devIno]struct{}
}

type devIno struct{ dev, ino uint64 }

// file is one regular file being scanned; its chunks share it.
type file struct {
	path      string
	f         *os.File
	size      uint64 // bytes
	lsize     uint32 // block size of every record, bytes
	nrec      uint64 // records
	copyHoles bool   // all-zero records arrive as holes (cp --sparse=always)
	data      []extent
	refs      atomic.Int32 // chunks not yet done; the last one closes f
	failed    atomic.Bool
}

// extent is a range of a source file holding data, [off, end) in bytes.
type extent struct{ off, end uint64 }

// chunk is one work item: records [first, end) of a file.
type chunk struct {
	f          *file
	first, end uint64
}

func (s *scan) warn(path string, err error) {
	s.errors.Add(1)
	if s.opts.Warn != nil {
		s.opts.Warn(path, err)
	}
}

// walk lists every path and sends the chunks of every regular file.
func (s *scan) walk(ctx context.Context, paths []string, out chan<- chunk) {
	s.seen = make(map[devIno]struct{})
	for _, p := range paths {
		if ctx.Err() != nil {
			return
		}
		// A path named on the command line is followed if it is a
		// symlink (as find -H does); links found inside directories are
		// not.
		fi, err := os.Stat(p)
		if err != nil {
			s.warn(p, err)
			continue
		}
		if !fi.IsDir() {
			s.visit(ctx, p, fi, out)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return filepath.SkipAll
			}
			if err != nil {
				s.warn(path, err)
				return nil
			}
			if d.IsDir() {
				s.counters.Dirs++
				return nil
			}
			info, err := d.Info()
			if err != nil {
				s.warn(path, err)
				return nil
			}
			s.visit(ctx, path, info, out)
			return nil
		})
		if err != nil {
			s.warn(p, err)
		}
	}
}

// visit handles one non-directory entry.
func (s *scan) visit(ctx context.Context, path string, fi fs.FileInfo, out chan<- chunk) {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		s.counters.Symlinks++
		return
	case !fi.Mode().IsRegular():
		s.counters.Special++
		return
	}
	f, err := s.open(path)
	if err != nil {
		s.warn(path, err)
		return
	}
	fl, err := s.prepare(path, f)
	if err != nil || fl == nil {
		f.Close()
		if err != nil {
			s.warn(path, err)
		}
		return
	}
	nchunks := s.chunkCount(fl)
	fl.refs.Store(int32(nchunks))
	per := (fl.nrec + uint64(nchunks) - 1) / uint64(nchunks)
	for first := uint64(0); first < fl.nrec; first += per {
		end := min(first+per, fl.nrec)
		select {
		case out <- chunk{f: fl, first: first, end: end}:
		case <-ctx.Done():
			// Release the chunks that will never be sent.
			for ; first < fl.nrec; first += per {
				fl.release()
			}
			return
		}
	}
}

func (s *scan) chunkCount(fl *file) int {
	per := uint64(chunkBytes / uint64(fl.lsize))
	if per == 0 {
		per = 1
	}
	return int((fl.nrec + per - 1) / per)
}

// open opens path read-only without updating its access time where the
// kernel permits it (O_NOATIME needs ownership or CAP_FOWNER).
func (s *scan) open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOATIME|unix.O_NOFOLLOW, 0)
	if err != nil && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL)) {
		f, err = os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	}
	return f, err
}

// prepare stats an open file and works out its records. It returns nil
// without error for files that need no work (empty, or a name of an inode
// already scanned).
func (s *scan) prepare(path string, f *os.File) (*file, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		s.counters.Special++
		return nil, nil
	}
	id := devIno{uint64(st.Dev), st.Ino}
	if _, dup := s.seen[id]; dup {
		s.counters.HardLinks++
		return nil, nil
	}
	s.seen[id] = struct{}{}
	s.counters.Files++
	size := uint64(st.Size)
	s.counters.LogicalBytes += size
	if p := s.opts.Progress; p != nil {
		p.Files.Add(1)
		p.BytesPending.Add(int64(size))
	}
	if size == 0 {
		return nil, nil
	}
	lsize, nrec := Records(size, s.opts.Policy.RecordSize)
	looksSparse := uint64(st.Blocks)*512 < size
	fl := &file{path: path, f: f, size: size, lsize: lsize, nrec: nrec}
	switch s.opts.Sparse {
	case SparseAlways:
		fl.copyHoles = true
	case SparseAuto:
		fl.copyHoles = looksSparse
	}
	if looksSparse {
		fl.data = dataExtents(f, size)
	}
	return fl, nil
}

// Records returns the block size (bytes) and record count of a file of size
// bytes on a dataset with the given recordsize (zfs-semantics §3.1): a file
// no larger than recordsize is one block of its size rounded up to 512; a
// larger one is ceil(size/recordsize) blocks of exactly recordsize.
func Records(size uint64, recordsize uint32) (lsize uint32, nrec uint64) {
	rs := uint64(recordsize)
	if size <= rs {
		return uint32((size + zio.MinRecordSize - 1) &^ (zio.MinRecordSize - 1)), 1
	}
	return recordsize, (size + rs - 1) / rs
}

// dataExtents maps the data regions of f with SEEK_DATA/SEEK_HOLE. On any
// error (a file system without hole reporting) it returns nil: all data.
func dataExtents(f *os.File, size uint64) []extent {
	fd := int(f.Fd())
	var ext []extent
	off := int64(0)
	for uint64(off) < size {
		d, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err != nil {
			if errors.Is(err, unix.ENXIO) { // no data after off
				break
			}
			return nil
		}
		h, err := unix.Seek(fd, d, unix.SEEK_HOLE)
		if err != nil {
			return nil
		}
		if h <= d {
			return nil
		}
		ext = append(ext, extent{uint64(d), min(uint64(h), size)})
		off = h
	}
	if ext == nil {
		ext = []extent{} // all hole
	}
	return ext
}

// hasData reports whether [off, end) intersects a data extent.
func (fl *file) hasData(off, end uint64) bool {
	if fl.data == nil {
		return true
	}
	i := sort.Search(len(fl.data), func(i int) bool { return fl.data[i].end > off })
	return i < len(fl.data) && fl.data[i].off < end
}

// release marks one chunk done and closes the file after the last.
func (fl *file) release() {
	if fl.refs.Add(-1) == 0 {
		fl.f.Close()
	}
}

// zeroKeys caches the key of an all-zero block per LSIZE.
type zeroKeys struct {
	mu sync.Mutex
	m  map[uint32]ddt.Key
}

func newZeroKeys() *zeroKeys { return &zeroKeys{m: make(map[uint32]ddt.Key)} }

func (z *zeroKeys) get(lsize uint32, hash func([]byte) ddt.Key) ddt.Key {
	z.mu.Lock()
	defer z.mu.Unlock()
	k, ok := z.m[lsize]
	if !ok {
		k = hash(make([]byte, lsize))
		z.m[lsize] = k
	}
	return k
}

var errChanged = fmt.Errorf("file shrank while it was read; the missing bytes were counted as zeros")
