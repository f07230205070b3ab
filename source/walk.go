package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/internal/escape"
	"github.com/ddtsim/ddtsim/internal/testseam"
	"github.com/ddtsim/ddtsim/vdisk"
)

// Walker is the Source of files below paths on the local file systems (see
// the package comment for its rules). Its fields are its options; Walk may
// be called more than once, each walk starting afresh.
type Walker struct {
	// Paths are the files and directories named, walked in order.
	Paths []string
	// Follow follows symlinks found inside directories (loops and
	// directories already walked are skipped). Symlinks named as paths are
	// always followed.
	Follow bool
	// CountLinks yields every name of a hard-linked file, as if each were
	// a separate copy. By default an inode is yielded once, as `cp -a`
	// stores it.
	CountLinks bool
	// OneFileSystem stays on the file system of each path named, as
	// `find -xdev` does.
	OneFileSystem bool
	// SkipDirs are directories never walked into (ddtsim's own spill
	// directory, when it lies below a path walked).
	SkipDirs []string
	// Guest, when set, is asked about every file yielded: it returns the
	// disk its guest sees when the file is a virtual-disk image (format
	// detected by content; the Disk then owns f), nil for a raw file,
	// read as it is, or an error, reported for the file, which is then
	// not read (the caller closes f). The File of an image describes the
	// guest's disk: Size is its virtual size, Data its allocated ranges
	// (vdisk.Disk.Allocated; the rest are holes), and LooksSparse is
	// always set: the tools that import images (qemu-img convert, qm
	// importdisk) skip zeros, as cp --sparse=always does. So is it for
	// the raw files of a walk with Guest, which those tools import the
	// same way. Hard links and repeats are judged by the image file.
	Guest func(f *os.File, path string) (vdisk.Disk, error)
	// GuestParts, with Guest, is asked about the regular files of each
	// directory (and the files named, per directory): it returns those
	// that are parts of an image among them (the extent files of a VMDK
	// descriptor, a qcow2's external data file), each mapped to that image's name. They are read
	// through the image only, and counted in Counters.ImageParts.
	GuestParts func(dir string, names []string) map[string]string
	// Shard, when sharded (Shard.Sharded), takes only this run's share of
	// the files (see Shard): a file wholly outside it is not opened; a
	// split file is yielded with the chunks it takes (File.Chunk,
	// File.Takes), and marked Uncounted when another shard counts it;
	// what the walk itself counts, and its problems, are counted by shard
	// 0 only (the other shards pass them to warn as a
	// *CountedElsewhereError). Every shard must be given the same Paths
	// and options.
	Shard Shard
	// ChunkBytes, with Shard: files larger than this many bytes are split
	// into chunks of this size, which must be a whole number of the
	// consumer's records (ShardChunkBytes); 0 splits none.
	ChunkBytes uint64
}

type devIno struct{ dev, ino uint64 }

// walk is the state of one Walker.Walk.
type walk struct {
	w     *Walker
	yield func(*File)
	warnf func(path string, err error)
	c     Counters
	arg   int                 // index of the path being walked
	root  string              // the path being walked, as named
	fs    fsIDs               // the file systems met (sharded walks only)
	seen  map[devIno]struct{} // inodes yielded
	dirs  map[devIno]struct{} // directories walked
	skip  map[devIno]struct{} // Walker.SkipDirs
	parts map[string]bool     // paths named that are parts of an image named (GuestParts)
	// partBytes: the bytes of the parts of each image met (its path), in
	// a sharded walk: they decide with its own size whether it is split.
	partBytes map[string]uint64
}

// Walk walks w.Paths and yields every regular file, and every block device
// named, once (see Source). The problems it passes to warn are paths that
// cannot be listed or opened and special files named explicitly
// (*SkippedError).
func (w *Walker) Walk(ctx context.Context, yield func(*File), warn func(path string, err error)) Counters {
	s := &walk{w: w, yield: yield, warnf: warn,
		seen: make(map[devIno]struct{}), dirs: make(map[devIno]struct{}), skip: make(map[devIno]struct{}), fs: fsIDs{},
		partBytes: map[string]uint64{}}
	for _, d := range w.SkipDirs {
		if fi, err := os.Stat(d); err == nil {
			st := statOf(fi)
			s.skip[devIno{uint64(st.Dev), st.Ino}] = struct{}{}
		}
	}
	// Every path named is looked at before any is walked, so that a
	// mistyped one is said at once, not when the walk reaches it hours
	// later. A path named is followed if it is a symlink (as find -H
	// does); links found inside directories are followed only with
	// Follow.
	named := make([]fs.FileInfo, len(w.Paths))
	for i, p := range w.Paths {
		var err error
		if named[i], err = os.Stat(p); err != nil {
			s.walkWarn(p, err)
		}
	}
	s.namedParts(named)
	for i, p := range w.Paths {
		if ctx.Err() != nil {
			break
		}
		s.arg, s.root = i, p
		fi := named[i]
		if fi == nil {
			continue
		}
		if fi.IsDir() {
			s.enterDir(ctx, p, fi, statOf(fi).Dev)
			continue
		}
		if s.parts[filepath.Clean(p)] {
			s.walkCount(&s.c.ImageParts)
			continue
		}
		s.visit(p, fi, true)
	}
	return s.c
}

// namedParts finds the files named that are parts of an image also named
// (ddtsim --guest dir/*.vmdk names a descriptor and its extents).
func (s *walk) namedParts(named []fs.FileInfo) {
	if s.w.Guest == nil || s.w.GuestParts == nil {
		return
	}
	byDir := map[string][]string{}
	size := map[string]int64{}
	for i, p := range s.w.Paths {
		if fi := named[i]; fi != nil && fi.Mode().IsRegular() {
			c := filepath.Clean(p)
			byDir[filepath.Dir(c)] = append(byDir[filepath.Dir(c)], filepath.Base(c))
			size[c] = fi.Size()
		}
	}
	s.parts = map[string]bool{}
	for dir, names := range byDir {
		for name, image := range s.w.GuestParts(dir, names) {
			p := filepath.Join(dir, name)
			if !s.parts[p] && s.w.Shard.Sharded() {
				s.partBytes[filepath.Join(dir, image)] += uint64(size[p])
			}
			s.parts[p] = true
		}
	}
}

func (s *walk) warn(path string, err error) {
	if s.warnf != nil {
		s.warnf(path, err)
	}
}

// walkWarn passes on a problem of the walk itself (a directory that cannot
// be listed, a path named that is missing or special): every shard of a
// sharded walk meets it, shard 0 counts it.
func (s *walk) walkWarn(path string, err error) {
	if !s.w.Shard.CountsWalk() {
		err = &CountedElsewhereError{Err: err, By: Shard{Index: 0, Count: s.w.Shard.Count}}
	}
	s.warn(path, err)
}

// walkCount adds one to a counter of the walk itself (directories,
// symlinks, ...): counted by shard 0 only, since every shard walks every
// directory.
func (s *walk) walkCount(c *uint64) {
	if s.w.Shard.CountsWalk() {
		*c++
	}
}

// count adds n to a counter of files (files, bytes, hard links, ...) when
// this shard counts the file (owns its chunk 0; not sharded: always).
func count(c *uint64, n uint64, counted bool) {
	if counted {
		*c += n
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
func (s *walk) enterDir(ctx context.Context, path string, fi fs.FileInfo, rootDev uint64) {
	st := statOf(fi)
	if s.w.OneFileSystem && uint64(st.Dev) != rootDev {
		s.walkCount(&s.c.OtherFS)
		return
	}
	id := devIno{uint64(st.Dev), st.Ino}
	if _, skip := s.skip[id]; skip {
		return // ddtsim's own (SkipDirs)
	}
	if _, dup := s.dirs[id]; dup {
		s.walkCount(&s.c.RepeatedDirs)
		return
	}
	s.dirs[id] = struct{}{}
	s.walkCount(&s.c.Dirs)
	if s.w.Shard.Sharded() {
		s.fs.of(id.dev, s.arg, s.root, path) // where the walk entered its file system
	}
	// ReadDir sorts the entries by name: the walk's order is the same on
	// every run (sharded scans rely on it, fsIDs).
	entries, err := os.ReadDir(path)
	if err != nil {
		// ReadDir returns what it read before the error; go on with it.
		s.walkWarn(path, err)
	}
	var parts map[string]string
	if s.w.Guest != nil && s.w.GuestParts != nil {
		var names []string
		for _, e := range entries {
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
		parts = s.w.GuestParts(path, names)
		if s.w.Shard.Sharded() {
			for _, e := range entries {
				if image, ok := parts[e.Name()]; ok {
					if fi, err := e.Info(); err == nil {
						s.partBytes[filepath.Join(path, image)] += uint64(fi.Size())
					}
				}
			}
		}
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return
		}
		if _, ok := parts[e.Name()]; ok {
			s.walkCount(&s.c.ImageParts)
			continue
		}
		full := filepath.Join(path, e.Name())
		var info fs.FileInfo
		if e.Type()&fs.ModeSymlink != 0 {
			if !s.w.Follow {
				s.walkCount(&s.c.Symlinks)
				continue
			}
			info, err = os.Stat(full)
			if err != nil {
				s.walkWarn(full, fmt.Errorf("following symlink: %w", err))
				continue
			}
		} else if info, err = e.Info(); err != nil {
			s.walkWarn(full, err)
			continue
		}
		if info.IsDir() {
			s.enterDir(ctx, full, info, rootDev)
			continue
		}
		s.visit(full, info, false)
	}
}

// visit handles one non-directory entry. explicit is true for a path named
// by the caller: block devices are read only then.
func (s *walk) visit(path string, fi fs.FileInfo, explicit bool) {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		s.walkCount(&s.c.Symlinks)
		return
	case mode.IsRegular():
	case mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0 && explicit:
		// A block device named explicitly is read like a file.
	default:
		s.walkCount(&s.c.Special)
		if explicit {
			s.walkWarn(path, &SkippedError{Kind: fileKind(mode)})
		}
		return
	}
	sh := s.shareOf(path, fi)
	if !sh.open {
		return // wholly another shard's
	}
	f, err := open(path, explicit || s.w.Follow)
	if err != nil {
		s.fileWarn(path, err, sh)
		if mode.IsRegular() && !errors.Is(err, fs.ErrNotExist) {
			// Unreadable (permissions, I/O): its bytes, as listed, are
			// file data the result does not cover. A file gone since
			// it was listed is not data any more.
			count(&s.c.Files, 1, sh.counted)
			count(&s.c.LogicalBytes, uint64(fi.Size()), sh.counted)
		}
		return
	}
	file, err := s.prepare(path, f, sh)
	if err != nil || file == nil {
		f.Close()
		if err != nil {
			s.fileWarn(path, err, sh)
		}
		return
	}
	if sh.fs != "" && file.Uncounted && !file.takesAny() {
		file.Close() // opened to learn its size: none of it is this shard's
		return
	}
	s.yield(file)
}

// share is what a sharded walk decided about a file before opening it.
type share struct {
	fs      string // its file system's name (fsIDs); "" when not sharded
	parts   uint64 // bytes of the image parts read through it (GuestParts)
	open    bool   // this shard may take some of it: open it
	counted bool   // this shard counts it (owns its chunk 0)
	owner   Shard  // the shard that counts it
}

// shareOf decides, from what listing it gave (fi), whether this shard
// opens a file and counts it. Not sharded: open and count every file.
// Sharded: the owner of chunk 0 opens and counts it; another shard opens
// it when it owns one of its other chunks, or when the size that decides
// the split is only known once open: a block device; with Guest, a file
// that with the image parts read through it (VMDK extents, a qcow2's data
// file) is larger than a chunk, since the guest disk it may be is larger
// still.
func (s *walk) shareOf(path string, fi fs.FileInfo) share {
	sh := s.w.Shard
	if !sh.Sharded() {
		return share{open: true, counted: true}
	}
	st := statOf(fi)
	d := share{fs: s.fs.of(uint64(st.Dev), s.arg, s.root, path), parts: s.partBytes[filepath.Clean(path)]}
	size, cb := uint64(fi.Size()), s.w.ChunkBytes
	d.owner = Shard{Index: uint32(ShardHash(d.fs, st.Ino, 0) % uint64(sh.Count)), Count: sh.Count}
	d.counted = d.owner == sh
	switch {
	case d.counted, !fi.Mode().IsRegular(), s.w.Guest != nil && cb > 0 && size+d.parts > cb:
		d.open = true
	default:
		d.open = sh.ownsAny(d.fs, st.Ino, 1, chunks(size, cb))
	}
	return d
}

// fileWarn passes on a problem with a file: in a sharded walk, counted by
// the shard that counts the file.
func (s *walk) fileWarn(path string, err error, sh share) {
	if !sh.counted {
		err = &CountedElsewhereError{Err: err, By: sh.owner}
	}
	s.warn(path, err)
}

// CheckNamed refuses a list of paths none of which can be scanned: each
// is missing, unreadable, or a FIFO, socket or character device. Its
// error names every path and why; nil when any path is a directory, a
// regular file or a block device.
func CheckNamed(paths []string) error {
	var why []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			why = append(why, fmt.Sprintf("%s: %v", escape.Path(p), err))
		case fi.IsDir(), fi.Mode().IsRegular(), fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
			return nil
		default:
			why = append(why, fmt.Sprintf("%s: %s", escape.Path(p), fileKind(fi.Mode())))
		}
	}
	return fmt.Errorf("nothing to scan: %s", strings.Join(why, "; "))
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
func open(path string, follow bool) (*os.File, error) {
	if testseam.BeforeOpen != nil {
		testseam.BeforeOpen(path)
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

// prepare stats an open file and makes it a File. It returns nil without
// error for a file not to be yielded (special, or a name of an inode
// already yielded).
func (s *walk) prepare(path string, f *os.File, sh share) (*File, error) {
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
		count(&s.c.Devices, 1, sh.counted)
	default:
		count(&s.c.Special, 1, sh.counted)
		return nil, nil
	}
	// A shard that does not count the file still skips its extra names:
	// it would read its chunks twice.
	id := devIno{uint64(st.Dev), st.Ino}
	if _, dup := s.seen[id]; dup {
		switch {
		case st.Nlink < 2:
			// The same file reached twice (a path named twice, or
			// inside another path named).
			count(&s.c.RepeatedFiles, 1, sh.counted)
			return nil, nil
		case !s.w.CountLinks:
			count(&s.c.HardLinks, 1, sh.counted)
			return nil, nil
		}
	}
	s.seen[id] = struct{}{}
	count(&s.c.Files, 1, sh.counted)
	regular := st.Mode&unix.S_IFMT == unix.S_IFREG
	if s.w.Guest != nil {
		d, err := s.w.Guest(f, path)
		if err != nil {
			count(&s.c.LogicalBytes, size, sh.counted)
			return nil, err
		}
		if d != nil {
			file := s.guestFile(path, d, id, st, regular, sh.counted)
			s.setShare(file, sh, uint64(st.Size)+sh.parts)
			return file, nil
		}
		// A raw disk image is imported as the others are (qemu-img
		// convert skips its zeros too).
		looksSparse = regular
	}
	count(&s.c.LogicalBytes, size, sh.counted)
	// The File and its reader in one allocation.
	fr := &struct {
		f File
		r osReader
	}{r: osReader{f: f, stamp: stamp{path: path, size: size, mtime: st.Mtim, regular: regular}}}
	file := &fr.f
	*file = File{Path: path, Arg: s.arg, Dev: uint64(st.Dev), Ino: st.Ino, Size: size, Mtime: st.Mtim.Nano(),
		Regular: regular, LooksSparse: looksSparse, Reader: &fr.r}
	if looksSparse && size > 0 {
		file.Data = dataExtents(f, size)
	}
	s.setShare(file, sh, size)
	return file, nil
}

// setShare sets the share of a sharded walk on file: its file system's
// name, whether this shard counts it, and whether it is split into
// chunks: when it is larger than a chunk, and for a guest's disk only when
// its image file with its parts (fileSize bytes) is too, since only then
// did every shard open it (shareOf).
func (s *walk) setShare(file *File, sh share, fileSize uint64) {
	if sh.fs == "" {
		return
	}
	file.FS, file.Shard, file.Uncounted = sh.fs, s.w.Shard, !sh.counted
	if cb := s.w.ChunkBytes; cb > 0 && file.Size > cb && fileSize > cb {
		file.Chunk = cb
	}
}

// guestFile is the File of a virtual-disk image's guest disk d, opened
// from the file whose stat is st.
func (s *walk) guestFile(path string, d vdisk.Disk, id devIno, st unix.Stat_t, regular, counted bool) *File {
	size := d.Size()
	count(&s.c.LogicalBytes, size, counted)
	data := d.Allocated()
	fr := &struct {
		f File
		r guestReader
	}{r: guestReader{d: d, stamp: stamp{path: path, size: uint64(st.Size), mtime: st.Mtim, regular: regular}}}
	// The files the image reads through (extents, data file, backing
	// chain) are watched too, and the newest modification time of them
	// all is the disk's: a resume then notices a changed backing file.
	mtime := st.Mtim
	seen := map[devIno]bool{id: true}
	for _, f := range vdisk.FilesOf(d) {
		var fst unix.Stat_t
		if unix.Fstat(int(f.Fd()), &fst) != nil || fst.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if k := (devIno{uint64(fst.Dev), fst.Ino}); !seen[k] {
			seen[k] = true
			fr.r.parts = append(fr.r.parts, part{f: f, stamp: stamp{path: f.Name(), size: uint64(fst.Size), mtime: fst.Mtim, regular: true}})
			if fst.Mtim.Nano() > mtime.Nano() {
				mtime = fst.Mtim
			}
		}
	}
	fr.f = File{Path: path, Arg: s.arg, Dev: id.dev, Ino: id.ino, Size: size, Mtime: mtime.Nano(),
		Regular: true, LooksSparse: true, Data: data, Reader: &fr.r}
	if fr.f.Data == nil {
		fr.f.Data = []Extent{} // all hole: nil would mean all data
	}
	return &fr.f
}

// guestReader reads a guest's disk; Changed watches the image file and
// the files it reads through.
type guestReader struct {
	stamp // of the image file
	d     vdisk.Disk
	parts []part
}

// part is a file an image reads through (vdisk.Filer), as it was when
// the image was opened.
type part struct {
	f *os.File
	stamp
}

func (r *guestReader) ReadAt(p []byte, off int64) (int, error) {
	if faults() {
		return r.faultyRead(r.d, p, off)
	}
	return r.d.ReadAt(p, off)
}

// Changed checks the image file's size and mtime against those at open
// (by path: the Disk holds the file).
func (r *guestReader) Changed() error {
	var st unix.Stat_t
	if r.regular && unix.Stat(r.path, &st) == nil {
		if err := r.changedTo(&st, "image size"); err != nil {
			return err
		}
	}
	for _, p := range r.parts {
		if unix.Fstat(int(p.f.Fd()), &st) == nil {
			if err := p.changedTo(&st, escape.Path(p.path)+": size"); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *guestReader) Close() error { return r.d.Close() }

// dataExtents maps the data regions of f (vdisk.DataExtents): nil, all
// data, when the file system cannot tell; empty when it is all hole.
func dataExtents(f *os.File, size uint64) []Extent {
	ext, ok := vdisk.DataExtents(f, size)
	switch {
	case !ok:
		return nil
	case ext == nil:
		return []Extent{} // all hole
	}
	return ext
}

// osReader reads a file the walker opened.
type osReader struct {
	stamp
	f *os.File
}

// stamp is what a file was when it was opened, to tell whether it
// changed while it was read.
type stamp struct {
	path    string
	size    uint64        // bytes, at open
	mtime   unix.Timespec // at open
	regular bool          // a regular file (a block device is not checked for changes)
}

// changedTo says how the file whose stat is now st differs from the
// stamp (its size, called what), or nil when it does not.
func (s *stamp) changedTo(st *unix.Stat_t, what string) error {
	if uint64(st.Size) == s.size && st.Mtim == s.mtime {
		return nil
	}
	return fmt.Errorf("%w (%s %d, now %d bytes; modified %s): its figures are approximate",
		ErrChanged, what, s.size, st.Size, time.Unix(st.Mtim.Unix()).UTC().Format(time.RFC3339))
}

func (r *osReader) ReadAt(p []byte, off int64) (int, error) {
	if faults() {
		return r.faultyRead(r.f, p, off)
	}
	return r.f.ReadAt(p, off)
}

// Changed checks whether a regular file's size or mtime differ from those
// at open.
func (r *osReader) Changed() error {
	var st unix.Stat_t
	if !r.regular || unix.Fstat(int(r.f.Fd()), &st) != nil {
		return nil
	}
	return r.changedTo(&st, "size")
}

func (r *osReader) Close() error { return r.f.Close() }
