package analyzer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/ddt"
)

// chunkBytes is how much of one file one work item covers: large files are
// split so that all workers help with a single big image.
const chunkBytes = 8 << 20

type scan struct {
	opts     Options
	table    *ddt.Table
	zero     *ddt.ZeroKeys
	counters Counters // the walker's own counters
	errors   atomic.Int64
	zeros    []byte              // recordsize zero bytes, read-only
	seen     map[devIno]struct{} // inodes of files scanned
	dirs     map[devIno]struct{} // directories walked
	skip     map[devIno]struct{} // Options.SkipDirs

	changedFiles atomic.Int64
	arg          int // index of the path being walked (walker only)
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
	refs      atomic.Int64 // chunks not yet done; the last one closes f
	failed    atomic.Bool
	mtime     unix.Timespec // at open, to notice changes
	regular   bool          // a regular file (not a block device)
	tag       int           // what Options.OnFile returned
	info      FileInfo      // for Options.Done and Options.Resume
	// incomplete: some chunks were left undone (the scan was cancelled,
	// or a read failed), so the file is not checked for changes.
	incomplete atomic.Bool
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

// changed reports a file that changed while it was read: a warning, not
// an error; the result is marked.
func (s *scan) changed(path string, err error) {
	s.changedFiles.Add(1)
	if s.opts.Warn != nil {
		s.opts.Warn(path, err)
	}
}

// walk lists every path and sends the chunks of every regular file.
func (s *scan) walk(ctx context.Context, paths []string, out chan<- chunk) {
	s.seen = make(map[devIno]struct{})
	s.dirs = make(map[devIno]struct{})
	s.skip = make(map[devIno]struct{})
	for _, d := range s.opts.SkipDirs {
		if fi, err := os.Stat(d); err == nil {
			st := statOf(fi)
			s.skip[devIno{uint64(st.Dev), st.Ino}] = struct{}{}
		}
	}
	for i, p := range paths {
		if ctx.Err() != nil {
			return
		}
		s.arg = i
		// A path named on the command line is followed if it is a
		// symlink (as find -H does); links found inside directories are
		// followed only with Options.Follow.
		fi, err := os.Stat(p)
		if err != nil {
			s.warn(p, err)
			continue
		}
		if fi.IsDir() {
			s.enterDir(ctx, p, fi, statOf(fi).Dev, out)
			continue
		}
		s.visit(ctx, p, fi, true, out)
	}
}

func statOf(fi fs.FileInfo) *syscall.Stat_t {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st
	}
	return &syscall.Stat_t{}
}

// enterDir walks directory path unless it was walked already (a repeated
// argument, a bind mount, or a symlink loop with Follow) or, with
// OneFileSystem, it lies on another file system than rootDev.
func (s *scan) enterDir(ctx context.Context, path string, fi fs.FileInfo, rootDev uint64, out chan<- chunk) {
	st := statOf(fi)
	if s.opts.OneFileSystem && uint64(st.Dev) != rootDev {
		s.counters.OtherFS++
		return
	}
	id := devIno{uint64(st.Dev), st.Ino}
	if _, skip := s.skip[id]; skip {
		return // ddtsim's own (Options.SkipDirs)
	}
	if _, dup := s.dirs[id]; dup {
		s.counters.RepeatedDirs++
		return
	}
	s.dirs[id] = struct{}{}
	s.counters.Dirs++
	entries, err := os.ReadDir(path)
	if err != nil {
		// ReadDir returns what it read before the error; go on with it.
		s.warn(path, err)
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return
		}
		full := filepath.Join(path, e.Name())
		var info fs.FileInfo
		if e.Type()&fs.ModeSymlink != 0 {
			if !s.opts.Follow {
				s.counters.Symlinks++
				continue
			}
			info, err = os.Stat(full)
			if err != nil {
				s.warn(full, fmt.Errorf("following symlink: %w", err))
				continue
			}
		} else if info, err = e.Info(); err != nil {
			s.warn(full, err)
			continue
		}
		if info.IsDir() {
			s.enterDir(ctx, full, info, rootDev, out)
			continue
		}
		s.visit(ctx, full, info, false, out)
	}
}

// visit handles one non-directory entry. explicit is true for a path named
// by the caller: block devices are read only then.
func (s *scan) visit(ctx context.Context, path string, fi fs.FileInfo, explicit bool, out chan<- chunk) {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		s.counters.Symlinks++
		return
	case mode.IsRegular():
	case mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0 && explicit:
		// A block device named explicitly is read like a file.
	default:
		s.counters.Special++
		if explicit {
			s.warn(path, fmt.Errorf("skipped: %s is not a regular file or a block device", fileKind(mode)))
		}
		return
	}
	f, err := s.open(path, explicit || s.opts.Follow)
	if err != nil {
		s.warn(path, err)
		if mode.IsRegular() && !errors.Is(err, fs.ErrNotExist) {
			// Unreadable (permissions, I/O): its bytes, as listed, are
			// file data the result does not cover. A file gone since
			// it was listed is not data any more.
			s.counters.Files++
			s.counters.LogicalBytes += uint64(fi.Size())
		}
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
	done, ok := s.resumed(fl)
	if !ok {
		fl.f.Close()
		return
	}
	segs := fl.segments(done)
	per := uint64(chunkBytes / uint64(fl.lsize))
	if per == 0 {
		per = 1
	}
	var nchunks int64
	for _, sg := range segs {
		if sg.data {
			nchunks += int64((sg.end - sg.first + per - 1) / per)
		}
	}
	fl.refs.Store(nchunks)
	sent := int64(0)
	for _, sg := range segs {
		if !sg.data {
			s.holeRun(fl, sg.first, sg.end)
			continue
		}
		for first := sg.first; first < sg.end; first += per {
			select {
			case out <- chunk{f: fl, first: first, end: min(first+per, sg.end)}:
				sent++
			case <-ctx.Done():
				// Release the chunks that will never be sent.
				fl.incomplete.Store(true)
				for ; sent < nchunks; sent++ {
					s.release(fl)
				}
				return
			}
		}
	}
	if nchunks == 0 {
		fl.f.Close()
	}
}

// recordRun is a range of records [first, end) of a file.
type recordRun struct{ first, end uint64 }

// dataRuns lists the runs of records that touch data; the records between
// them lie wholly in holes of the source file and need no reading.
func (fl *file) dataRuns() []recordRun {
	if fl.data == nil {
		return []recordRun{{0, fl.nrec}}
	}
	l := uint64(fl.lsize)
	var runs []recordRun
	for _, e := range fl.data {
		r := recordRun{e.off / l, min((e.end+l-1)/l, fl.nrec)}
		if n := len(runs); n > 0 && r.first <= runs[n-1].end {
			runs[n-1].end = max(runs[n-1].end, r.end)
			continue
		}
		runs = append(runs, r)
	}
	return runs
}

// holeRun accounts records [a, b) of fl, which lie wholly in a hole of the
// source file, in one step: they are holes, or all-zero blocks when the
// copy writes zeros and ZFS stores them (compression=off). A file of
// exabytes of holes costs no more than its data.
func (s *scan) holeRun(fl *file, a, b uint64) {
	if a >= b {
		return
	}
	n := b - a
	c := &s.counters
	c.Records += n
	c.SourceHoles += n
	bytes := fl.spanBytes(a, b)
	c.ScannedBytes += bytes
	if p := s.opts.Progress; p != nil {
		p.BytesDone.Add(int64(bytes))
	}
	p := s.opts.Policy
	hole := p.ZeroIsHole() || fl.copyHoles
	var k ddt.Key
	if hole {
		c.Holes += n
	} else {
		c.ZeroBlocks += n
		k = s.zero.Get(fl.lsize)
		if !s.sampled(k) {
			c.Unsampled += n
		} else if s.table.RefN(k, fl.lsize, n) {
			s.table.Set(k, fl.lsize)
		}
	}
	if s.opts.OnBlock != nil && s.opts.BlockRuns {
		s.opts.OnBlock(BlockEvent{Path: fl.path, BlkID: a, LSize: fl.lsize, Hole: hole, Key: k, Zero: true, Tag: fl.tag, Count: n})
	} else if s.opts.OnBlock != nil {
		for i := a; i < b; i++ {
			s.opts.OnBlock(BlockEvent{Path: fl.path, BlkID: i, LSize: fl.lsize, Hole: hole, Key: k, Zero: true, Tag: fl.tag, Count: 1})
		}
	}
	s.done(fl, a, b)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// open opens path read-only without updating its access time where the
// kernel permits it (O_NOATIME needs ownership or CAP_FOWNER).
func (s *scan) open(path string, follow bool) (*os.File, error) {
	if testBeforeOpen != nil {
		testBeforeOpen(path)
	}
	flags := os.O_RDONLY
	if !follow {
		// The entry was a regular file when listed; never let a symlink
		// swapped in meanwhile lead elsewhere.
		flags |= unix.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags|unix.O_NOATIME, 0)
	if err != nil && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL)) {
		f, err = os.OpenFile(path, flags, 0)
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
	size := uint64(st.Size)
	looksSparse := uint64(st.Blocks)*512 < size
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFBLK:
		end, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, fmt.Errorf("block device size: %w", err)
		}
		size, looksSparse = uint64(end), false
		s.counters.Devices++
	default:
		s.counters.Special++
		return nil, nil
	}
	id := devIno{uint64(st.Dev), st.Ino}
	if _, dup := s.seen[id]; dup {
		switch {
		case st.Nlink < 2:
			// The same file reached twice (a path named twice, or
			// inside another path named).
			s.counters.RepeatedFiles++
			return nil, nil
		case !s.opts.CountLinks:
			s.counters.HardLinks++
			return nil, nil
		}
	}
	s.seen[id] = struct{}{}
	s.counters.Files++
	s.counters.LogicalBytes += size
	tag := 0
	if s.opts.OnFile != nil {
		tag = s.opts.OnFile(FileEvent{Path: path, Arg: s.arg, Size: size})
	}
	if p := s.opts.Progress; p != nil {
		p.Files.Add(1)
		p.BytesPending.Add(int64(size))
	}
	if size == 0 {
		return nil, nil
	}
	lsize, nrec := s.records(size)
	fl := &file{path: path, f: f, size: size, lsize: lsize, nrec: nrec, mtime: st.Mtim, regular: st.Mode&unix.S_IFMT == unix.S_IFREG, tag: tag}
	fl.info = FileInfo{Path: path, Dev: uint64(st.Dev), Ino: st.Ino, Size: size, Mtime: st.Mtim.Nano(), Records: nrec}
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

// release marks one chunk of fl done. After the last it checks whether the
// file changed while it was read (size or mtime), and closes it.
func (s *scan) release(fl *file) {
	if fl.refs.Add(-1) != 0 {
		return
	}
	var st unix.Stat_t
	if fl.regular && !fl.failed.Load() && !fl.incomplete.Load() && unix.Fstat(int(fl.f.Fd()), &st) == nil &&
		(uint64(st.Size) != fl.size || st.Mtim != fl.mtime) {
		s.changed(fl.path, fmt.Errorf("%w (size %d, now %d bytes; modified %s): its figures are approximate",
			ErrChanged, fl.size, st.Size, time.Unix(st.Mtim.Unix()).UTC().Format(time.RFC3339)))
	}
	fl.f.Close()
}

// ErrChanged is wrapped by the warnings about files that changed while they
// were read; they are counted in Counters.Changed, not Errors.
var ErrChanged = errors.New("changed while it was read")

var errShrank = fmt.Errorf("shrank while it was read: the records past its new end are left out, its figures are approximate (%w)", ErrChanged)

// Test seams, nil outside tests: testBeforeOpen runs before a file is
// opened (to make it vanish); testReadFault runs before each read and may
// replace it with an error (EIO) or change the file.
var (
	testBeforeOpen func(path string)
	testReadFault  func(path string, off uint64) error
)
