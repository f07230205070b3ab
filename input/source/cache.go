package source

import (
	"os"
	"sort"
	"sync"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// The page cache policy of a walk (Walker.KeepCache).
//
// A scan reads every byte of the files once. Left to the kernel, what it
// reads stays in the page cache, which the whole host shares, and pushes
// out what the host's own work keeps there (a database's files, a build's
// tree): a scan of terabytes replaces all of it. So by default the pages
// a walk's File brings into the cache are dropped once read
// (posix_fadvise POSIX_FADV_DONTNEED), and only those: the pages that
// were cached when the file was opened stay, for they may be another
// process's working set (DONTNEED would drop them for everyone).
//
// What was cached at open is asked of the kernel with cachestat(2) (Linux
// 6.5+: one call, no mapping): a file none of whose pages are cached, the
// common case, is dropped as it is read, wholly; one all of whose pages
// are cached is left alone; of one cached in part, mincore(2) over a
// mapping of the file says which pages (as vmtouch and nocache do): they
// are kept, never dropped. The kernel answers cachestat only to a caller
// that owns the file or could open it for writing (else EPERM; mincore
// then says that every page is cached): such files, for a scan run as
// another user than root, are left alone. So are a file cached in too
// many pieces (maxKept), one too large to map (maxMincore), and files
// under cacheMin. Before Linux 6.5 (no cachestat), mincore answers, for
// files of dropMin or more only; smaller ones are left alone.
//
// The risk left: a page that another process brings in while the scan
// has the file open is dropped (when the scan reads it too, or at Close,
// which drops the whole file but for what was cached at open). The files
// a walk has open at once share what was cached before the first of them
// was opened (residencies), so that a file read twice at once (a backing
// file of several guests' disks, a hard link with CountLinks) does not
// take the pages its other reader brought in for the host's.
//
// Files of dropMin bytes or more are also advised
// POSIX_FADV_SEQUENTIAL when opened (twice the device's readahead
// window), with KeepCache too. While they are read, the ranges read are
// dropped every dropEvery bytes, so that a file of any size holds a few
// MiB of the cache at a time. The ranges are those the reads asked for,
// wherever they lie (a scan's workers read chunks of one large file at
// once, each at its own offset); a range is dropped only once the
// readahead window before it has been read too: dropped sooner, its first
// pages would be read from disk again by the readahead of the reader of
// the range before it (the previous chunk). At Close, the whole file is
// dropped but for the pages kept: what readahead brought in past the last
// read. Smaller files are dropped at Close only, in one call.
//
// A guest's disk (Walker.Guest) is read through its image files at
// offsets the File does not see: each image file (with its extents, data
// file and backing chain) is dropped whole but for its pages kept, every
// guestDropEvery bytes of the guest read and at Close. Readahead dropped
// before it was read is read again: at most a readahead window a file
// every guestDropEvery. What was read of the files before the walk
// opened them counts as cached before, and stays: what Walker.GuestParts
// reads of a directory's images to find their parts (their headers, with
// readahead: 3.5 MiB of a qcow2 on a device of 8 MiB read_ahead_kb), and
// what opening the disk reads of the files it opens itself (extents,
// data file, backing chain).

// cacheMin is the size below which a file's pages are left in the cache.
// The policy costs a file a cachestat at open, and a fadvise at close
// when it was not cached: measured on 100,000 files of 1 to 512 bytes,
// 3.5 µs of CPU a file when they were cached (10 % more CPU than the
// scan's own there, for nothing to drop), no difference measurable when
// they were not (their reading's cost hides it). What is left: at most
// 16 pages a file, a tenth of the bytes of internal/benchdata's data set
// (12.5 % of its pages after a scan: scripts/bench-cache.sh).
const cacheMin = 64 << 10

// dropMin is the size from which a file is advised sequential and
// dropped while it is read, not only at Close; and, without cachestat,
// the size below which a file is left alone (mincore needs a mapping:
// three calls more). A file of less is read in a readahead window or a
// few.
const dropMin = 1 << 20

// dropEvery is how many bytes of a file are read between two drops of
// the ranges read.
const dropEvery = 8 << 20

// guestDropEvery is how many bytes of a guest's disk are read between
// two drops of its image files.
const guestDropEvery = 256 << 20

// maxKept bounds the ranges of a file found cached when it was opened;
// a file cached in more pieces is left alone.
const maxKept = 1 << 14

// maxMincore bounds the size of a file cached in part asked of mincore
// (a byte a page, and a walk of its pages in the kernel): a larger one
// is left alone.
const maxMincore = 1 << 40

// pageSize is the page cache's unit.
var pageSize = uint64(os.Getpagesize())

// residency is what of a file the page cache held when it was opened.
type residency struct {
	// leave: drop nothing (all cached, or the kernel does not say).
	leave bool
	// kept are the page-aligned ranges that were cached (sorted,
	// disjoint), never dropped; nil when none were.
	kept []Extent
}

// residencies are the residencies of the files the process's Files have
// open under the drop policy, found when the first of them was opened.
var residencies = struct {
	sync.Mutex
	m map[devIno]*sharedResidency
}{m: map[devIno]*sharedResidency{}}

type sharedResidency struct {
	res  residency
	refs int
}

// acquireResidency returns what of the file open as fd (identity id,
// size bytes) was cached before any File of the process opened it, and
// holds it until releaseResidency(id). faults are the walk's (nil outside
// tests).
func acquireResidency(fd int, id devIno, size uint64, faults *Faults) residency {
	residencies.Lock()
	defer residencies.Unlock()
	if s := residencies.m[id]; s != nil {
		s.refs++
		return s.res
	}
	res := residencyOf(fd, size, faults)
	residencies.m[id] = &sharedResidency{res: res, refs: 1}
	return res
}

// releaseResidency lets go of what acquireResidency(id) held.
func releaseResidency(id devIno) {
	residencies.Lock()
	defer residencies.Unlock()
	if s := residencies.m[id]; s != nil {
		if s.refs--; s.refs == 0 {
			delete(residencies.m, id)
		}
	}
}

// residencyOf finds what of fd's [0, size) is cached now.
func residencyOf(fd int, size uint64, faults *Faults) residency {
	if size < cacheMin || !canDrop {
		return residency{leave: true}
	}
	cached, ok, missing := cachestat(fd, faults)
	switch {
	case ok && cached == 0:
		return residency{}
	case ok && cached >= (size+pageSize-1)/pageSize, !ok && !missing:
		return residency{leave: true}
	case size < dropMin, size > maxMincore:
		return residency{leave: true}
	}
	kept, err := mincoreRanges(fd, size)
	switch {
	case err != nil, len(kept) > maxKept:
		return residency{leave: true}
	case len(kept) == 1 && kept[0].Off == 0 && kept[0].End >= size:
		return residency{leave: true} // all cached
	}
	return residency{kept: kept}
}

// mincoreStep is the most of a file mapped at once by mincoreRanges.
const mincoreStep = 1 << 30

// mincoreRanges returns the page-aligned ranges of fd's [0, size) cached
// now, merged; at most maxKept+1 of them.
func mincoreRanges(fd int, size uint64) ([]Extent, error) {
	var kept []Extent
	var vec []byte
	for off := uint64(0); off < size; {
		end := min(off+mincoreStep, size)
		n := int((end - off + pageSize - 1) / pageSize)
		if cap(vec) < n {
			vec = make([]byte, n)
		}
		vec = vec[:n]
		if err := mincore(fd, off, end-off, vec); err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			if vec[i]&1 == 0 {
				continue
			}
			j := i + 1
			for j < n && vec[j]&1 != 0 {
				j++
			}
			kept = appendMerged(kept, Extent{Off: off + uint64(i)*pageSize, End: off + uint64(j)*pageSize})
			if len(kept) > maxKept {
				return kept, nil
			}
			i = j
		}
		off = end
	}
	return kept, nil
}

// appendMerged appends e to sorted, disjoint ranges none of which starts
// after e, merged with the last when they touch.
func appendMerged(rs []Extent, e Extent) []Extent {
	if n := len(rs); n > 0 && rs[n-1].End >= e.Off {
		rs[n-1].End = max(rs[n-1].End, e.End)
		return rs
	}
	return append(rs, e)
}

// insertRange adds [off, end) to sorted, disjoint ranges rs, merged with
// those it touches.
func insertRange(rs []Extent, off, end uint64) []Extent {
	if off >= end {
		return rs
	}
	i := sort.Search(len(rs), func(i int) bool { return rs[i].End >= off }) // the first that may touch
	j := i
	for j < len(rs) && rs[j].Off <= end {
		off, end = min(off, rs[j].Off), max(end, rs[j].End)
		j++
	}
	if i == j {
		rs = append(rs, Extent{})
		copy(rs[i+1:], rs[i:])
		rs[i] = Extent{Off: off, End: end}
		return rs
	}
	rs[i] = Extent{Off: off, End: end}
	return append(rs[:i+1], rs[j:]...)
}

// subtract appends to out the parts of [off, end) outside the sorted,
// disjoint ranges rs.
func subtract(out []Extent, off, end uint64, rs []Extent) []Extent {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].End > off })
	for ; i < len(rs) && rs[i].Off < end && off < end; i++ {
		if rs[i].Off > off {
			out = append(out, Extent{Off: off, End: rs[i].Off})
		}
		off = max(off, rs[i].End)
	}
	if off < end {
		out = append(out, Extent{Off: off, End: end})
	}
	return out
}

// dropRange drops the cached pages of [off, end) of fd, rounded out to
// whole pages, but for those in kept; faults are the walk's.
func dropRange(faults *Faults, fd int, off, end uint64, kept []Extent) {
	off &^= pageSize - 1
	end = (end + pageSize - 1) &^ (pageSize - 1)
	var buf [8]Extent
	for _, e := range subtract(buf[:0], off, end, kept) {
		fadvise(faults, fd, e.Off, e.End-e.Off, fadvDontneed)
	}
}

// fadvise is posix_fadvise(2) (n 0: to the end of the file), shown first
// to faults.Fadvise (faults nil outside tests); its errors are ignored:
// it is advice.
func fadvise(faults *Faults, fd int, off, n uint64, advice int) {
	const maxOff = 1<<63 - 1
	if off > maxOff {
		return
	}
	if n > maxOff-off {
		n = 0
	}
	if faults != nil && faults.Fadvise != nil {
		faults.Fadvise(fd, advice, off, n)
	}
	fadviseSys(fd, off, n, advice)
}

// pageCacher is how a File's page cache policy follows its reading: read
// is told of every read, from any goroutine; close is called once, when
// the reading is over, before the file is closed.
type pageCacher interface {
	read(off uint64, n int)
	close()
}

// fileCache drops what reading a regular file or a block device brought
// into the page cache (see the comment at the top of this file).
type fileCache struct {
	faults *Faults // the walk's (Walker.Faults)
	fd     int
	id     devIno
	size   uint64
	res    residency
	// small: a file under dropMin, dropped at close only.
	small bool
	// lag is the readahead window: a range read is dropped once so much
	// before it has been read too.
	lag uint64

	mu      sync.Mutex
	got     []Extent // ranges read, and holes, merged
	dropped []Extent // ranges dropped, merged
	since   uint64   // bytes read since the last drop
	closed  bool
}

// newFileCache is the page cache policy of the file open as fd (its
// fstat st, its identity id) of size bytes with data extents data: res
// is what of it was cached when it was opened, held (acquireResidency)
// when held (not with Walker.KeepCache, nor for a file under cacheMin).
// It advises a file of dropMin bytes or more sequential (random, when
// random: Walker.RandomReads), held or not; nil when nothing more is to
// be done. faults are the walk's.
func newFileCache(fd int, st *sys.Stat_t, id devIno, size uint64, data []Extent, res residency, held, random bool, faults *Faults) pageCacher {
	if size >= dropMin {
		advice := fadvSequential
		if random {
			advice = fadvRandom
		}
		fadvise(faults, fd, 0, 0, advice)
	}
	if !held {
		return nil
	}
	c := &fileCache{faults: faults, fd: fd, id: id, size: size, res: res, small: size < dropMin}
	if res.leave || c.small {
		return c
	}
	c.lag = readaheadBytes(st)
	c.holes(data)
	return c
}

// holes notes the holes of a file of data extents data (nil: all data)
// as read: they never are, and the data after a hole need not wait for
// them to be dropped.
func (c *fileCache) holes(data []Extent) {
	if data == nil {
		return
	}
	off := uint64(0)
	for _, e := range data {
		c.got = insertRange(c.got, off, e.Off)
		off = e.End
	}
	c.got = insertRange(c.got, off, c.size)
}

func (c *fileCache) read(off uint64, n int) {
	if n <= 0 || c.small || c.res.leave {
		return
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.got = insertRange(c.got, off, off+uint64(n))
	c.since += uint64(n)
	var todo []Extent
	if c.since >= dropEvery {
		c.since = 0
		todo = c.droppable()
	}
	c.mu.Unlock()
	for _, e := range todo {
		dropRange(c.faults, c.fd, e.Off, e.End, c.res.kept)
	}
}

// droppable returns the ranges read and not yet dropped that follow a
// readahead window read too (or start the file), and notes them dropped.
// They end at a page boundary, or at the file's end: a page read in
// part is dropped with the range that reads its end.
func (c *fileCache) droppable() []Extent {
	var todo []Extent
	for _, r := range c.got {
		off := r.Off
		if off > 0 {
			off += c.lag
		}
		end := r.End
		if end < c.size {
			end &^= pageSize - 1
		}
		if off >= end {
			continue
		}
		n := len(todo)
		todo = subtract(todo, off, end, c.dropped)
		for _, e := range todo[n:] {
			c.dropped = insertRange(c.dropped, e.Off, e.End)
		}
	}
	return todo
}

func (c *fileCache) close() {
	c.mu.Lock()
	closed := c.closed
	c.closed = true
	c.mu.Unlock()
	if closed {
		return
	}
	if !c.res.leave {
		// The whole file: what was read, and what readahead brought
		// in past it.
		dropRange(c.faults, c.fd, 0, c.size, c.res.kept)
	}
	releaseResidency(c.id)
}

// guestCache drops what reading a guest's disk brought into the page
// cache of its image files (see the comment at the top of this file).
type guestCache struct {
	faults *Faults // the walk's (Walker.Faults)
	files  []guestCacheFile
	mu     sync.Mutex
	since  uint64 // bytes of the guest read since the last drop
	done   bool
}

// guestCacheFile is one image file of a guest's disk.
type guestCacheFile struct {
	fd   int
	id   devIno
	size uint64
	res  residency
}

// newGuestCache is the page cache policy of a guest's disk read through
// files, the image file first (vdisk.FilesOf), whose identity is image;
// res is what of the image file was cached before the disk was opened,
// held (acquireResidency) when held. The other files' residency is
// found now: their headers, read to open the disk, count as cached
// before. nil when none of the files is held. faults are the walk's.
func newGuestCache(files []*os.File, image devIno, res residency, held bool, faults *Faults) pageCacher {
	g := &guestCache{faults: faults}
	seen := map[devIno]bool{}
	if held {
		// The image file itself, even if files does not list it.
		g.files = append(g.files, guestCacheFile{fd: -1, id: image, res: res})
		seen[image] = true
	}
	for _, f := range files {
		fd := int(f.Fd())
		var st sys.Stat_t
		if sys.Fstat(fd, &st) != nil {
			continue
		}
		id := devIno{uint64(st.Dev), st.Ino}
		size := uint64(st.Size)
		switch st.Mode & sys.S_IFMT {
		case sys.S_IFREG:
		case sys.S_IFBLK:
			end, err := sys.Seek(fd, 0, 2)
			if err != nil {
				continue
			}
			size = uint64(end)
		default:
			continue
		}
		if id == image && held {
			g.files[0].fd, g.files[0].size = fd, size
			continue
		}
		if seen[id] || size < cacheMin {
			continue
		}
		seen[id] = true
		g.files = append(g.files, guestCacheFile{fd: fd, id: id, size: size, res: acquireResidency(fd, id, size, faults)})
	}
	if len(g.files) == 0 {
		return nil
	}
	return g
}

func (g *guestCache) read(off uint64, n int) {
	if n <= 0 {
		return
	}
	g.mu.Lock()
	if g.done {
		g.mu.Unlock()
		return
	}
	g.since += uint64(n)
	now := g.since >= guestDropEvery
	if now {
		g.since = 0
	}
	g.mu.Unlock()
	if now {
		g.drop()
	}
}

// drop drops each image file but for its pages kept.
func (g *guestCache) drop() {
	for _, f := range g.files {
		if f.fd >= 0 && !f.res.leave {
			dropRange(g.faults, f.fd, 0, f.size, f.res.kept)
		}
	}
}

func (g *guestCache) close() {
	g.mu.Lock()
	done := g.done
	g.done = true
	g.mu.Unlock()
	if done {
		return
	}
	g.drop()
	for _, f := range g.files {
		releaseResidency(f.id)
	}
}
