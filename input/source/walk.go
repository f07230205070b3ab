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
	"sync/atomic"
	"time"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/text/escape"
)

// Walker is the Source of files below paths on the local file systems (see
// the package comment for its rules). Its fields are its options; Walk may
// be called more than once, each walk starting afresh.
type Walker struct {
	// Paths are the files and directories named, walked in order.
	Paths []string
	// Follow follows symlinks found inside directories (loops and
	// directories already walked are skipped). Symlinks named as paths are
	// always followed. Since a symlink may lead to any file or directory
	// walked before, a walk with Follow remembers the identity of each
	// (about 10 to 20 bytes a file): its memory grows with the number of
	// files, which it does not otherwise (repeats.go).
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
	// KeepCache leaves what the walk's Files read in the page cache, as
	// any reader does. By default the pages a File brings into the cache
	// are dropped once read, those that were cached before it was opened
	// kept: see cache.go.
	KeepCache bool
	// Opens, when set, is asked of every regular file that does not look
	// sparse, before it is opened, by its path as the walk names it and
	// its size from its lstat: a file for which it returns false is
	// yielded without being opened (File.Opened false: its Reader reads
	// nothing; it has no holes mapped). A consumer that reads only some
	// records of the files (--read) saves the open, fstat and close of
	// each file it reads nothing of: on 200,000 small files, about 0.7 s
	// a scan (scripts/bench-read.sh). Every file is lstat'ed first; with
	// Openers, the openers lstat the regular files ahead of the walk, ask
	// Opens, and open those it accepts: Opens is then called from their
	// goroutines, several at once, and must be safe for that (a function
	// of its arguments). Not with Guest.
	Opens func(path string, size uint64) bool
	// RandomReads: the files are read at scattered offsets, not from
	// start to end (--read): large files are advised POSIX_FADV_RANDOM
	// when opened, not POSIX_FADV_SEQUENTIAL, so that the kernel's
	// readahead does not read what is not asked (cache.go). Without it,
	// reading 15% of the records of 20 GiB brought 4.8 GiB in from the
	// disk for 3.0 GiB read (scripts/bench-read.sh).
	RandomReads bool
	// Openers > 0 opens (and fstats) the regular files of the directory
	// being walked ahead of the walk, in that many goroutines (ahead.go);
	// what Walk yields and counts is the same. Not in a sharded walk,
	// whose shard decides from each file's lstat whether to open it.
	Openers int
	// ChunkBytes, with Shard: files larger than this many bytes are split
	// into chunks of this size, which must be a whole number of the
	// consumer's records (ShardChunkBytes); 0 splits none.
	ChunkBytes uint64
	// Listed, when set, is called with every directory's entries once
	// listed (all of them, whatever they are and whether walked further),
	// on the walk's goroutine, by the shard that counts the walk. The
	// Names are valid during the call only.
	Listed func(Names)
	// Faults, for tests only, are the walk's test seams (see Faults):
	// files that change before they are opened, opens and reads that
	// fail, come back short or wait, the page cache advice seen. nil
	// outside tests.
	Faults *Faults
}

// Names are a directory's entries as listed: Len of them, Name(i) the
// i-th's name (sorted by bytes; valid until the next call to Name).
type Names interface {
	Len() int
	Name(i int) []byte
}

// listedNames is a listing as Names.
type listedNames struct{ l *listing }

func (n listedNames) Len() int          { return n.l.len() }
func (n listedNames) Name(i int) []byte { return n.l.nameBytes(i) }

type devIno struct{ dev, ino uint64 }

// walk is the state of one Walker.Walk.
type walk struct {
	w     *Walker
	yield func(*File)
	warnf func(path string, err error)
	c     Counters
	arg   int    // index of the path being walked
	root  string // the path being walked, as named
	// rootDev is the device of the path being walked (OneFileSystem).
	rootDev uint64
	fs      fsIDs               // the file systems met (sharded walks only)
	rep     *repeats            // what tells a directory or file met again (repeats.go)
	skip    map[devIno]struct{} // Walker.SkipDirs
	parts   map[string]bool     // paths named that are parts of an image named (GuestParts)
	// partBytes: the bytes of the parts of each image met (its path), in
	// a sharded walk: they decide with its own size whether it is split.
	partBytes map[string]uint64
	named     []*sys.Stat_t // stat of each path named, nil when it failed

	// The directories of the current path, from the one named down
	// (dirfd.go): levels[:depth]; the deeper ones are kept for their
	// listings' memory. Those in [low, depth) and the first are open.
	levels     []*level
	depth, low int
	// path: the current directory's path as entries' paths start
	// (filepath.Join's: "" below ".", "/x/" below "/x"), grown and cut as
	// the walk goes down and up: no path is kept per directory.
	path []byte
	dent []byte // getdents(2) buffer
	// open opens files ahead of the walk (Walker.Openers; nil: none).
	open *openers
}

// Walk walks w.Paths and yields every regular file, and every block device
// named, once (see Source). The problems it passes to warn are paths that
// cannot be listed or opened and special files named explicitly
// (*SkippedError). Its memory does not grow with the number of files
// (repeats.go: but for Follow, and for hard-linked files whose other
// names lie outside the paths walked), nor its file descriptors with the
// depth of the tree (dirfd.go); a directory's listing costs its names'
// bytes and 8 bytes an entry (listing.go).
func (w *Walker) Walk(ctx context.Context, yield func(*File), warn func(path string, err error)) Counters {
	s := newWalk(w, yield, warn)
	if !w.Shard.Sharded() {
		size := aheadBatch
		if s.lstatFirst() {
			size = aheadLstatBatch
		}
		s.open = newOpeners(w.Openers, size, w.Faults)
	}
	defer func() {
		s.closeAll()
		if s.open != nil {
			s.open.stop()
		}
	}()
	s.run(ctx)
	return s.c
}

// newWalk prepares a walk of w's paths: looks at every path named (said
// when missing) and what repeats.go needs.
func newWalk(w *Walker, yield func(*File), warn func(path string, err error)) *walk {
	s := &walk{w: w, yield: yield, warnf: warn, skip: make(map[devIno]struct{}), fs: fsIDs{},
		partBytes: map[string]uint64{}, named: make([]*sys.Stat_t, len(w.Paths))}
	for _, d := range w.SkipDirs {
		var st sys.Stat_t
		if sys.Stat(d, &st) == nil {
			s.skip[devIno{uint64(st.Dev), st.Ino}] = struct{}{}
		}
	}
	// Every path named is looked at before any is walked, so that a
	// mistyped one is said at once, not when the walk reaches it hours
	// later. A path named is followed if it is a symlink (as find -H
	// does); links found inside directories are followed only with
	// Follow.
	for i, p := range w.Paths {
		st := new(sys.Stat_t)
		if err := statPath(p, st); err != nil {
			s.walkWarn(p, &os.PathError{Op: "stat", Path: p, Err: err})
			continue
		}
		s.named[i] = st
	}
	s.rep = newRepeats(w, s.named)
	s.namedParts(s.named)
	return s
}

// statPath is stat(2) of a path named, retried when interrupted.
func statPath(p string, st *sys.Stat_t) error {
	for {
		err := sys.Stat(p, st)
		if err != sys.EINTR {
			return err
		}
	}
}

// run walks the paths named, in order.
func (s *walk) run(ctx context.Context) {
	for i, p := range s.w.Paths {
		if ctx.Err() != nil {
			break
		}
		s.arg, s.root = i, p
		st := s.named[i]
		if st == nil {
			continue
		}
		if st.Mode&sys.S_IFMT == sys.S_IFDIR {
			s.rootDev = uint64(st.Dev)
			s.enterDir(ctx, sys.AT_FDCWD, p, st, true, false)
			continue
		}
		if s.parts[filepath.Clean(p)] {
			s.walkCount(&s.c.ImageParts)
			continue
		}
		s.visit(sys.AT_FDCWD, p, p, st, true, true)
	}
}

// namedParts finds the files named that are parts of an image also named
// (ddtsim --guest dir/*.vmdk names a descriptor and its extents).
func (s *walk) namedParts(named []*sys.Stat_t) {
	if s.w.Guest == nil || s.w.GuestParts == nil {
		return
	}
	byDir := map[string][]string{}
	size := map[string]int64{}
	for i, p := range s.w.Paths {
		if st := named[i]; st != nil && st.Mode&sys.S_IFMT == sys.S_IFREG {
			c := filepath.Clean(p)
			byDir[filepath.Dir(c)] = append(byDir[filepath.Dir(c)], filepath.Base(c))
			size[c] = st.Size
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

// enterDir walks the directory name, in the directory open as dirfd
// (sys.AT_FDCWD and the path itself for a path named, followed), whose
// lstat (stat if follow) is st, unless it was walked already (a repeated
// argument, a bind mount, or a symlink loop with Follow), it is one of
// SkipDirs or, with OneFileSystem, it lies on another file system than
// the path named. viaLink: reached through a symlink followed.
func (s *walk) enterDir(ctx context.Context, dirfd int, name string, st *sys.Stat_t, follow, viaLink bool) {
	// Its path: the path named as given, or its parent's and its name,
	// as filepath.Join makes it; s.path becomes its entries' prefix.
	var parent *level
	if s.depth == 0 {
		s.path = append(s.path[:0], rootPrefix(name)...)
	} else {
		parent = s.top()
		s.path = append(append(s.path[:parent.prefix], name...), filepath.Separator)
	}
	end := len(s.path) - 1
	path := func() string {
		if parent == nil {
			return name
		}
		return string(s.path[:end])
	}
	id := devIno{uint64(st.Dev), st.Ino}
	if !s.mayEnter(id) {
		return
	}
	fd, _, err := retryOutOfFDs(func() (int, bool, error) { return openAt(dirfd, name, dirFlags, follow) })
	if err != nil {
		// Unreadable, or replaced since it was listed by what is not a
		// directory (ENOTDIR), or by a symlink (ELOOP: never followed
		// unless follow).
		s.rep.dirWalked(id, false)
		s.walkCount(&s.c.Dirs)
		s.walkWarn(path(), &os.PathError{Op: "open", Path: path(), Err: err})
		return
	}
	now, mountRoot, err := dirStat(fd)
	if err != nil {
		sys.Close(fd)
		s.rep.dirWalked(id, false)
		s.walkCount(&s.c.Dirs)
		s.walkWarn(path(), &os.PathError{Op: "stat", Path: path(), Err: err})
		return
	}
	if now != id {
		// Replaced since it was listed (or an automount mounted on it):
		// judged by what was opened.
		if id = now; !s.mayEnter(id) {
			sys.Close(fd)
			return
		}
	}
	if parent != nil && id.dev != parent.id.dev {
		mountRoot = true
	}
	s.rep.dirWalked(id, mountRoot)
	s.walkCount(&s.c.Dirs)
	if s.w.Shard.Sharded() {
		if _, ok := s.fs[id.dev]; !ok {
			s.fs.of(id.dev, s.arg, s.root, path()) // where the walk entered its file system
		}
	}
	l := s.push(fd, id, viaLink)
	defer func() { s.pop(ctx.Err() == nil) }()
	// Sorted by name, as os.ReadDir sorts: the walk's order is the same
	// on every run (sharded scans rely on it, fsIDs).
	if s.dent == nil {
		s.dent = make([]byte, 32<<10)
	}
	if err := l.list.read(fd, s.dent); err != nil {
		// What was read before the error is walked.
		s.walkWarn(path(), &os.PathError{Op: "readdirent", Path: path(), Err: err})
	}
	if s.w.Listed != nil && s.w.Shard.CountsWalk() {
		s.w.Listed(listedNames{&l.list})
	}
	parts := s.dirParts(l, path)
	for l.i = 0; l.i < l.list.len(); l.i++ {
		if ctx.Err() != nil || l.lost {
			return
		}
		if len(parts) > 0 {
			if _, ok := parts[l.list.name(l.i)]; ok {
				s.walkCount(&s.c.ImageParts)
				continue
			}
		}
		s.fill(l, parts)
		s.entry(ctx, l)
	}
}

// rootPrefix is what the entries' names of the directory named p are
// appended to for their paths, as filepath.Join(p, name) makes them.
func rootPrefix(p string) string {
	const sep = string(filepath.Separator)
	switch c := filepath.Clean(p); {
	case c == ".":
		return ""
	case strings.HasSuffix(c, sep): // "/", or a Windows volume's root (C:\)
		return c
	default:
		return c + sep
	}
}

// mayEnter reports whether the directory id is to be walked; if not, it
// counts why (another file system, or walked before).
func (s *walk) mayEnter(id devIno) bool {
	if s.w.OneFileSystem && id.dev != s.rootDev {
		s.walkCount(&s.c.OtherFS)
		return false
	}
	if _, skip := s.skip[id]; skip {
		return false // ddtsim's own (SkipDirs)
	}
	if s.rep.dirSeen(id) {
		s.walkCount(&s.c.RepeatedDirs)
		return false
	}
	return true
}

// dirParts asks GuestParts (with Guest) which regular files of the
// directory l (at path()) are parts of an image among them.
func (s *walk) dirParts(l *level, path func() string) map[string]string {
	if s.w.Guest == nil || s.w.GuestParts == nil {
		return nil
	}
	var names []string
	for i := range l.list.len() {
		if s.typeOf(l, i) == sys.DT_REG {
			names = append(names, l.list.name(i))
		}
	}
	dir := path()
	parts := s.w.GuestParts(dir, names)
	if s.w.Shard.Sharded() {
		for i := range l.list.len() {
			name := l.list.name(i)
			if image, ok := parts[name]; ok {
				var st sys.Stat_t
				if sys.Fstatat(l.fd, name, &st, sys.AT_SYMLINK_NOFOLLOW) == nil {
					s.partBytes[filepath.Join(dir, image)] += uint64(st.Size)
				}
			}
		}
	}
	return parts
}

// typeOf is the type of entry i of l, a DT_ constant: lstat'ed when the
// file system did not say (DT_UNKNOWN; still unknown when that fails).
func (s *walk) typeOf(l *level, i int) uint8 {
	t := l.list.typ(i)
	if t == sys.DT_UNKNOWN {
		var st sys.Stat_t
		if sys.Fstatat(l.fd, l.list.name(i), &st, sys.AT_SYMLINK_NOFOLLOW) == nil {
			t = dtOf(uint32(st.Mode))
			l.list.setTyp(i, t)
		}
	}
	return t
}

// dtOf is the DT_ constant of a st_mode: its type bits shifted down, as
// IFTODT (<dirent.h>) makes it (DT_REG 8 for S_IFREG 0100000, and so on).
func dtOf(mode uint32) uint8 {
	return uint8(mode & sys.S_IFMT >> 12)
}

// entry walks the entry l.i of the directory l: a directory is entered,
// a symlink counted (or followed, with Follow), anything else visited.
// Every entry but a symlink is lstat'ed before it is opened, as os.ReadDir's
// DirEntry.Info would: that stat decides what it is (a file's size, as
// listed, is counted when it cannot be opened).
func (s *walk) entry(ctx context.Context, l *level) {
	if l.list.typ(l.i) == sys.DT_REG && !s.w.Shard.Sharded() {
		if r, ok := s.take(l, l.i); ok {
			switch {
			case r.unopened:
				// Its lstat, taken ahead, said what visit would
				// have: a regular file Opens refused.
				if file := s.unopened(r.path, &r.st, share{open: true, counted: true}); file != nil {
					s.yield(file)
				}
				return
			case r.fd >= 0:
				s.openedStat(r.path, r.fd, r.noatime, false, &r.st, share{open: true, counted: true})
				return
			}
			// Not opened: looked at by its lstat below, as when
			// visitListed cannot open it.
		} else if !s.lstatFirst() && s.visitListed(l.fd, l.list.name(l.i), string(s.path[:l.prefix])+l.list.name(l.i)) {
			return
		}
	}
	name := l.list.name(l.i)
	full := string(s.path[:l.prefix]) + name
	st := new(sys.Stat_t)
	if l.list.typ(l.i) != sys.DT_LNK {
		if err := sys.Fstatat(l.fd, name, st, sys.AT_SYMLINK_NOFOLLOW); err != nil {
			s.walkWarn(full, &os.PathError{Op: "lstat", Path: full, Err: err})
			return
		}
		if st.Mode&sys.S_IFMT == sys.S_IFDIR {
			s.enterDir(ctx, l.fd, name, st, false, false)
			return
		}
		if l.list.typ(l.i) != sys.DT_UNKNOWN || st.Mode&sys.S_IFMT != sys.S_IFLNK {
			s.visit(l.fd, name, full, st, false, s.w.Follow)
			return
		}
	}
	// A symlink (as listed, or by its lstat where the listing did not
	// say).
	if !s.w.Follow {
		s.walkCount(&s.c.Symlinks)
		return
	}
	if err := sys.Fstatat(l.fd, name, st, 0); err != nil {
		s.walkWarn(full, fmt.Errorf("following symlink: %w", &os.PathError{Op: "stat", Path: full, Err: err}))
		return
	}
	if st.Mode&sys.S_IFMT == sys.S_IFDIR {
		s.enterDir(ctx, l.fd, name, st, true, true)
		return
	}
	s.visit(l.fd, name, full, st, false, true)
}

// visit handles one non-directory: name in the directory open as dirfd
// (sys.AT_FDCWD and the path itself for a path named), path its full
// path; st is its lstat (stat if follow) from before it is opened.
// explicit is true for a path named by the caller: block devices are read
// only then. What the file is when opened decides (prepare): a FIFO, a
// device or a directory put there since it was listed is skipped, counted
// as special, never read; a symlink is not followed (unless follow) and a
// socket cannot be opened: openFailed.
func (s *walk) visit(dirfd int, name, path string, st *sys.Stat_t, explicit, follow bool) {
	switch mode := st.Mode & sys.S_IFMT; {
	case mode == sys.S_IFLNK:
		s.walkCount(&s.c.Symlinks)
		return
	case mode == sys.S_IFREG:
	case mode == sys.S_IFBLK && explicit:
		// A block device named explicitly is read like a file.
	default:
		// FIFOs, sockets, devices: never opened.
		s.walkCount(&s.c.Special)
		if explicit {
			s.walkWarn(path, &SkippedError{Kind: fileKind(fileMode(uint32(st.Mode)))})
		}
		return
	}
	sh := s.shareOf(path, st)
	if !sh.open {
		return // wholly another shard's
	}
	if s.lstatFirst() && st.Mode&sys.S_IFMT == sys.S_IFREG && uint64(st.Blocks)*512 >= uint64(st.Size) &&
		!s.w.Opens(path, uint64(st.Size)) {
		if file := s.unopened(path, st, sh); file != nil {
			s.yield(file)
		}
		return
	}
	fd, noatime, err := openFile(s.w.Faults, dirfd, name, path, follow, true)
	if err != nil {
		s.openFailed(path, st, err, sh)
		return
	}
	s.opened(path, fd, noatime, explicit, sh)
}

// visitListed handles entry name of the directory open as dirfd, listed
// as a regular file (DT_REG), in a walk that is not sharded: it is opened
// straight away, without an lstat first (one system call a file fewer: a
// tree of small files costs its system calls), and what it is when
// opened decides (prepare), as for any file. It returns false, having
// done nothing, when the name cannot be opened: the caller then looks at
// it by its lstat, as at any other entry, which says what it has become
// (a symlink put there since it was listed, which O_NOFOLLOW refuses, is
// then counted as a symlink, or followed with Follow) or why it cannot
// be read.
func (s *walk) visitListed(dirfd int, name, path string) bool {
	fd, noatime, err := openFile(s.w.Faults, dirfd, name, path, s.w.Follow, true)
	if err != nil {
		return false
	}
	s.opened(path, fd, noatime, false, share{open: true, counted: true})
	return true
}

// opened yields the file open as fd (see visit), unless prepare finds it
// is not to be.
func (s *walk) opened(path string, fd int, noatime, explicit bool, sh share) {
	var st sys.Stat_t
	if err := sys.Fstat(fd, &st); err != nil {
		sys.Close(fd)
		s.fileWarn(path, err, sh)
		return
	}
	s.openedStat(path, fd, noatime, explicit, &st, sh)
}

// openedStat is opened of a file whose fstat is st.
func (s *walk) openedStat(path string, fd int, noatime, explicit bool, st *sys.Stat_t, sh share) {
	file, err := s.prepare(path, fd, noatime, explicit, st, sh)
	if err != nil || file == nil {
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

// lstatFirst: the walk lstats every file before opening it, to ask
// Walker.Opens.
func (s *walk) lstatFirst() bool { return s.w.Opens != nil && s.w.Guest == nil }

// unopened is the File of the regular file at path whose lstat (stat if
// followed) is st, not opened (Walker.Opens); nil for a name of an inode
// already yielded (as prepareFile).
func (s *walk) unopened(path string, st *sys.Stat_t, sh share) *File {
	id := devIno{uint64(st.Dev), st.Ino}
	if s.rep.fileMet(id, uint64(st.Nlink), s.w.CountLinks) {
		switch {
		case st.Nlink < 2:
			count(&s.c.RepeatedFiles, 1, sh.counted)
			return nil
		case !s.w.CountLinks:
			count(&s.c.HardLinks, 1, sh.counted)
			return nil
		}
	}
	size := uint64(st.Size)
	count(&s.c.Files, 1, sh.counted)
	count(&s.c.LogicalBytes, size, sh.counted)
	file := &File{Path: path, Arg: s.arg, Dev: uint64(st.Dev), Ino: st.Ino, Size: size, Mtime: st.Mtim.Nano(),
		Regular: true}
	file.Reader = unopenedReader{f: file}
	s.setShare(file, sh, size)
	return file
}

// openFailed handles a file that could not be opened: the problem is
// said, and an unreadable regular file (permissions, I/O; a symlink put
// there since it was listed, which O_NOFOLLOW refuses) is counted: its
// bytes, as listed, are file data the result does not cover. A file gone
// since it was listed is not data any more.
func (s *walk) openFailed(path string, st *sys.Stat_t, err error, sh share) {
	s.fileWarn(path, &os.PathError{Op: "open", Path: path, Err: err}, sh)
	if st.Mode&sys.S_IFMT == sys.S_IFREG && err != sys.ENOENT {
		count(&s.c.Files, 1, sh.counted)
		count(&s.c.LogicalBytes, uint64(st.Size), sh.counted)
		count(&s.c.Unreadable, 1, sh.counted)
		count(&s.c.UnreadableBytes, uint64(st.Size), sh.counted)
	}
}

// dtModes maps a DT_ constant to the fs.FileMode type bits.
var dtModes = [16]fs.FileMode{
	sys.DT_DIR:  fs.ModeDir,
	sys.DT_LNK:  fs.ModeSymlink,
	sys.DT_FIFO: fs.ModeNamedPipe,
	sys.DT_SOCK: fs.ModeSocket,
	sys.DT_CHR:  fs.ModeDevice | fs.ModeCharDevice,
	sys.DT_BLK:  fs.ModeDevice,
}

// fileMode is the fs.FileMode of a st_mode's type.
func fileMode(mode uint32) fs.FileMode { return dtModes[dtOf(mode)] }

// share is what a sharded walk decided about a file before opening it.
type share struct {
	fs      string // its file system's name (fsIDs); "" when not sharded
	parts   uint64 // bytes of the image parts read through it (GuestParts)
	open    bool   // this shard may take some of it: open it
	counted bool   // this shard counts it (owns its chunk 0)
	owner   Shard  // the shard that counts it
}

// shareOf decides, from the file's lstat (or stat) st, whether this shard
// opens a file and counts it. Not sharded: open and count every file.
// Sharded: the owner of chunk 0 opens and counts it; another shard opens
// it when it owns one of its other chunks, or when the size that decides
// the split is only known once open: a block device; with Guest, a file
// that with the image parts read through it (VMDK extents, a qcow2's data
// file) is larger than a chunk, since the guest disk it may be is larger
// still.
func (s *walk) shareOf(path string, st *sys.Stat_t) share {
	sh := s.w.Shard
	if !sh.Sharded() {
		return share{open: true, counted: true}
	}
	d := share{fs: s.fs.of(uint64(st.Dev), s.arg, s.root, path), parts: s.partBytes[filepath.Clean(path)]}
	size, cb := uint64(st.Size), s.w.ChunkBytes
	d.owner = Shard{Index: uint32(ShardHash(d.fs, st.Ino, 0) % uint64(sh.Count)), Count: sh.Count}
	d.counted = d.owner == sh
	switch {
	case d.counted, st.Mode&sys.S_IFMT != sys.S_IFREG, s.w.Guest != nil && cb > 0 && size+d.parts > cb:
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

// prepare makes the file open as fd a File, once its fstat st says it is
// a regular file (or a block device named explicitly); a nil File
// without error for a file not to be yielded: anything else (a FIFO, a
// socket, a directory put there since it was listed; counted as
// special), or a name of an inode already yielded. fd is closed unless a
// File is returned, which owns it. noatime: fd was opened O_NOATIME.
func (s *walk) prepare(path string, fd int, noatime, explicit bool, st *sys.Stat_t, sh share) (*File, error) {
	switch mode := st.Mode & sys.S_IFMT; {
	case mode == sys.S_IFREG, mode == sys.S_IFBLK && explicit:
	default:
		sys.Close(fd)
		count(&s.c.Special, 1, sh.counted)
		return nil, nil
	}
	r := &osReader{fd: fd, noatime: noatime, faults: s.w.Faults}
	if s.w.Guest != nil || st.Mode&sys.S_IFMT == sys.S_IFBLK {
		// Read through an os.File (Guest's disks), or a device: blocking
		// from the start. Other files are read as they were opened,
		// O_NONBLOCK, which regular files ignore; a file system that
		// does not is met with EAGAIN, and the flag is cleared then
		// (osReader.pread): one system call a file fewer.
		if err := unblock(fd, noatime); err != nil {
			sys.Close(fd)
			return nil, err
		}
		r.blocking.Store(true)
	}
	handOn() // handBack in r.Close, or when a guest disk takes it
	if s.w.Guest != nil {
		r.f = sys.NewFile(fd, path)
	}
	file, err := s.prepareFile(path, r, st, sh)
	if file == nil {
		r.Close()
	}
	return file, err
}

// prepareFile makes r's file, a regular file or a block device whose
// fstat is st, a File reading through r (path and stamp are set here);
// nil without error for a name of an inode already yielded.
func (s *walk) prepareFile(path string, r *osReader, stp *sys.Stat_t, sh share) (*File, error) {
	st := *stp
	size := uint64(st.Size)
	looksSparse := uint64(st.Blocks)*512 < size
	if st.Mode&sys.S_IFMT == sys.S_IFBLK {
		end, err := sys.Seek(r.fd, 0, io.SeekEnd)
		if err != nil {
			return nil, fmt.Errorf("block device size: %w", err)
		}
		size, looksSparse = uint64(end), false
		count(&s.c.Devices, 1, sh.counted)
	}
	// A shard that does not count the file still skips its extra names:
	// it would read its chunks twice.
	id := devIno{uint64(st.Dev), st.Ino}
	if s.rep.fileMet(id, uint64(st.Nlink), s.w.CountLinks) {
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
	count(&s.c.Files, 1, sh.counted)
	regular := st.Mode&sys.S_IFMT == sys.S_IFREG
	// What the page cache holds of the file, before anything reads it
	// (Guest does): cache.go.
	var res residency
	held := !s.w.KeepCache && size >= cacheMin
	if held {
		res = acquireResidency(r.fd, id, size, s.w.Faults)
	}
	if s.w.Guest != nil {
		d, err := s.w.Guest(r.f, path)
		if err != nil {
			if held {
				releaseResidency(id)
			}
			count(&s.c.LogicalBytes, size, sh.counted)
			count(&s.c.Unreadable, 1, sh.counted)
			count(&s.c.UnreadableBytes, size, sh.counted)
			return nil, err
		}
		if d != nil {
			r.f = nil // d owns it
			r.fd = -1
			handBack()
			file := s.guestFile(path, d, id, st, regular, sh.counted, res, held)
			s.setShare(file, sh, uint64(st.Size)+sh.parts)
			return file, nil
		}
		// A raw disk image is imported as the others are (qemu-img
		// convert skips its zeros too).
		looksSparse = regular
	}
	count(&s.c.LogicalBytes, size, sh.counted)
	// The File and its reader in one allocation.
	r.stamp = stamp{path: path, size: size, mtime: st.Mtim, regular: regular}
	file := &File{Path: path, Arg: s.arg, Dev: uint64(st.Dev), Ino: st.Ino, Size: size, Mtime: st.Mtim.Nano(),
		Regular: regular, LooksSparse: looksSparse, Reader: r}
	if looksSparse && size > 0 {
		file.Data = dataExtents(r.fd, size)
	}
	file.cache = newFileCache(r.fd, &st, id, size, file.Data, res, held, s.w.RandomReads, s.w.Faults)
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
// from the file whose stat is st; res is what the page cache held of it
// before d was opened, held (acquireResidency) when held.
func (s *walk) guestFile(path string, d vdisk.Disk, id devIno, st sys.Stat_t, regular, counted bool, res residency, held bool) *File {
	size := d.Size()
	count(&s.c.LogicalBytes, size, counted)
	data := d.Allocated()
	fr := &struct {
		f File
		r guestReader
	}{r: guestReader{d: d, faults: s.w.Faults, stamp: stamp{path: path, size: uint64(st.Size), mtime: st.Mtim, regular: regular}}}
	// The files the image reads through (extents, data file, backing
	// chain) are watched too, and the newest modification time of them
	// all is the disk's: a resume then notices a changed backing file.
	mtime := st.Mtim
	seen := map[devIno]bool{id: true}
	for _, f := range vdisk.FilesOf(d) {
		var fst sys.Stat_t
		if sys.Fstat(int(f.Fd()), &fst) != nil || fst.Mode&sys.S_IFMT != sys.S_IFREG {
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
	if !s.w.KeepCache {
		fr.f.cache = newGuestCache(vdisk.FilesOf(d), id, res, held, s.w.Faults)
	}
	return &fr.f
}

// guestReader reads a guest's disk; Changed watches the image file and
// the files it reads through.
type guestReader struct {
	stamp  // of the image file
	d      vdisk.Disk
	parts  []part
	faults *Faults // the walk's (Walker.Faults)
}

// part is a file an image reads through (vdisk.Filer), as it was when
// the image was opened.
type part struct {
	f *os.File
	stamp
}

func (r *guestReader) ReadAt(p []byte, off int64) (int, error) {
	if r.faults.reads() {
		return r.faults.read(r.path, r.d, p, off)
	}
	return r.d.ReadAt(p, off)
}

// Changed checks the image file's size and mtime against those at open
// (by path: the Disk holds the file).
func (r *guestReader) Changed() error {
	var st sys.Stat_t
	if r.regular && sys.Stat(r.path, &st) == nil {
		if err := r.changedTo(&st, "image size"); err != nil {
			return err
		}
	}
	for _, p := range r.parts {
		if sys.Fstat(int(p.f.Fd()), &st) == nil {
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
//
// The last bytes of a file whose size comes within a page (up to 64 KiB)
// of 8 EiB are taken as data, whatever lseek says: Linux rounds the end
// of the range it searches up to a whole page, which overflows there, and
// SEEK_DATA then finds no data in that last page (seen on tmpfs, Linux
// 6.18: a file of 8 EiB − 1 bytes with data at its end looks all hole).
// Reading a hole gives zeros, so nothing is lost but the time of reading
// 64 KiB.
func dataExtents(fd int, size uint64) []Extent {
	ext, ok := vdisk.DataExtents(fd, size)
	switch {
	case !ok:
		return nil
	case size > unseekableTail:
		return vdisk.Union(ext, []Extent{{Off: unseekableTail, End: size}})
	case ext == nil:
		return []Extent{} // all hole
	}
	return ext
}

// unseekableTail: data beyond this offset may be missed by SEEK_DATA
// (dataExtents).
const unseekableTail = 1<<63 - 1<<16

// osReader reads a file the walker opened, through its descriptor (no
// os.File, whose making costs a system call and a finalizer a file), or
// through the os.File made of it when Guest needed one.
type osReader struct {
	stamp
	fd       int
	f        *os.File // made of fd (Guest), which it then owns; nil: none
	noatime  bool     // fd was opened O_NOATIME
	blocking atomic.Bool
	faults   *Faults // the walk's (Walker.Faults)
}

// stamp is what a file was when it was opened, to tell whether it
// changed while it was read.
type stamp struct {
	path    string
	size    uint64       // bytes, at open
	mtime   sys.Timespec // at open
	regular bool         // a regular file (a block device is not checked for changes)
}

// changedTo says how the file whose stat is now st differs from the
// stamp (its size, called what), or nil when it does not.
func (s *stamp) changedTo(st *sys.Stat_t, what string) error {
	if uint64(st.Size) == s.size && st.Mtim == s.mtime {
		return nil
	}
	return fmt.Errorf("%w (%s %d, now %d bytes; modified %s): its figures are approximate",
		ErrChanged, what, s.size, st.Size, time.Unix(st.Mtim.Unix()).UTC().Format(time.RFC3339))
}

func (r *osReader) ReadAt(p []byte, off int64) (int, error) {
	if r.faults.reads() {
		return r.faults.read(r.path, readerAt(r.pread), p, off)
	}
	return r.pread(p, off)
}

// readerAt is a function as an io.ReaderAt.
type readerAt func(p []byte, off int64) (int, error)

func (f readerAt) ReadAt(p []byte, off int64) (int, error) { return f(p, off) }

// pread reads len(p) bytes at off as os.File.ReadAt does (fewer only with
// an error, io.EOF at the end; errors as *os.PathError), with pread(2),
// retried when interrupted. A read refused with EAGAIN (a file system
// that honours O_NONBLOCK on a regular file: prepare) clears the flag and
// is made again.
func (r *osReader) pread(p []byte, off int64) (n int, err error) {
	if off < 0 {
		return 0, &os.PathError{Op: "readat", Path: r.path, Err: errors.New("negative offset")}
	}
	for n < len(p) {
		m, err := sys.Pread(r.fd, p[n:], off+int64(n))
		switch {
		case err == sys.EINTR:
			continue
		case err == sys.EAGAIN && !r.blocking.Load():
			if err := unblock(r.fd, r.noatime); err != nil {
				return n, &os.PathError{Op: "fcntl", Path: r.path, Err: err}
			}
			r.blocking.Store(true)
			continue
		case err != nil:
			return n, &os.PathError{Op: "read", Path: r.path, Err: err}
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Changed checks whether a regular file's size or mtime differ from those
// at open.
func (r *osReader) Changed() error {
	var st sys.Stat_t
	if !r.regular || sys.Fstat(r.fd, &st) != nil {
		return nil
	}
	return r.changedTo(&st, "size")
}

func (r *osReader) Close() error {
	if r.fd < 0 {
		return nil // a guest disk took it, or closed already
	}
	defer handBack()
	fd := r.fd
	r.fd = -1
	if r.f != nil {
		return r.f.Close()
	}
	return sys.Close(fd)
}
