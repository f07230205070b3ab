package source

import (
	"sync"
	"sync/atomic"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// Opening ahead. In a tree of small files a scan's time goes to system
// calls: each file is opened and fstat'ed before it is read, and the walk,
// one goroutine, would do that for every file while the workers read.
// With Walker.Openers, goroutines open and fstat the regular files of the
// directory being walked ahead of it, a batch of entries at a time
// (openAt, fstat, as the walk would), and the walk takes each entry's
// result when it reaches it: what the walk yields, in what order, and
// what it decides of each file (hard links, counters, warnings) are the
// same as without; only the opens are done earlier, by other goroutines
// (on a network file system, many at once: each is a round trip).
// With Walker.Opens (--read) they lstat each file first, as visit does,
// and open only those that look sparse or that Opens accepts: a file it
// refuses is handed to the walk with its lstat, to be yielded unopened.
// On the 20 GiB estate of scripts/bench-read.sh (200,798 files) the walk
// spent most of its time in those lstats, one at a time.
//
// Bounds: at most aheadBatches batches of aheadBatch entries (with
// Walker.Opens, aheadLstatBatch) are open ahead at any time, whatever
// the depth, and no more descriptors than a
// quarter of the limit of open files; below PlentyOfFiles (a low ulimit
// -n), nothing is opened ahead, so that the descriptors a scan needs stay
// what they were without (found by a new user: at ulimit -n 64 a scan lost
// most of a tree to EMFILE). When no batch is free, the walk opens the
// file itself. An open ahead refused for want of descriptors (EMFILE,
// ENFILE) ends the opening ahead for the rest of the walk: from then on the
// walk opens each file itself, as without openers, so that the files
// held ahead do not take the descriptors the walk and the scan need. A directory's batches are finished and their
// files closed (untaken) before its descriptor is closed, and when the
// walk stops. An entry whose open failed is looked at by the walk as
// any other (visitListed).

// aheadBatch is the number of entries a batch opens.
const aheadBatch = 16

// aheadLstatBatch is the number of entries of a batch in a walk that
// lstats each file first (Walker.Opens): most of them, with --read, are
// not opened but handed to the walk with their lstat, which takes a few
// microseconds, so that batches of aheadBatch cost as much in the
// handing over (the walk waking an opener, the opener the walk) as in
// their work. With batches of 64, --read 0.0001% took 0.85 times the
// wall time of batches of 16 and 0.87 times the CPU time, on the 200,798
// files of scripts/bench-read.sh's estate (medians of 10, side by side);
// 128 took as long as 64.
const aheadLstatBatch = 64

// aheadBatches bounds the batches in flight per opener, and in all
// (aheadMax): files held open ahead of the walk are at most aheadBatch ×
// that.
const (
	aheadBatches = 4
	aheadMax     = 16
)

// preOpen is one entry opened ahead.
type preOpen struct {
	i       int    // its index in the listing
	path    string // its path, as the walk makes it
	fd      int    // -1 when the open or the fstat failed, or when unopened
	noatime bool
	taken   bool
	// unopened: with Walker.Opens, st is the entry's lstat, a regular
	// file that does not look sparse and that Opens refused: it is
	// yielded unopened, as visit would.
	unopened bool
	st       sys.Stat_t
}

// batch is the entries of one directory opened ahead by one opener.
type batch struct {
	dirfd  int
	follow bool
	// opens is Walker.Opens when the walk asks it (lstatFirst): each
	// entry is lstat'ed first and opened only if it looks sparse or opens
	// says so.
	opens  func(path string, size uint64) bool
	names  []string
	res    []preOpen
	next   int // the first entry not taken yet
	done   chan struct{}
	closed bool // done was waited for
}

// openers are the goroutines opening ahead of one walk.
type openers struct {
	starved atomic.Bool // an open ahead met EMFILE or ENFILE
	work    chan *batch
	wg      sync.WaitGroup
	max     int      // batches in flight at most
	batch   int      // entries a batch holds at most (aheadBatch, aheadLstatBatch)
	inUse   int      // batches in flight (the walk's goroutine only)
	free    []*batch // batches to reuse
	faults  *Faults  // the walk's (Walker.Faults)
}

// PlentyOfFiles is the limit of open files (FileLimit) from which a scan
// holds more descriptors than it needs to go on (files opened ahead, a
// deeper queue to the workers: a few hundred); under it, it holds what it
// needs only. The Go runtime raises the soft limit to the hard one at
// start-up, so only a hard limit this low (ulimit -n) stays under it.
const PlentyOfFiles = 1024

// newOpeners starts n goroutines opening ahead (at most aheadMax: no more
// batches are in flight), in batches of size entries, through the walk's
// faults (nil outside tests); nil for n < 1.
func newOpeners(n, size int, faults *Faults) *openers {
	if n < 1 {
		return nil
	}
	n = min(n, aheadMax)
	o := &openers{work: make(chan *batch, aheadMax), max: min(aheadMax, aheadBatches*n), batch: size, faults: faults}
	limit := FileLimit()
	if limit < PlentyOfFiles {
		return nil
	}
	o.max = int(min(uint64(o.max), limit/4/uint64(size)))
	for range n {
		o.wg.Add(1)
		go o.run()
	}
	return o
}

func (o *openers) run() {
	defer o.wg.Done()
	for b := range o.work {
		for k := range b.res {
			r := &b.res[k]
			if b.opens != nil && o.lstat(b, k) {
				continue
			}
			fd, noatime, err := openFile(o.faults, b.dirfd, b.names[k], r.path, b.follow, false)
			if err == nil && sys.Fstat(fd, &r.st) != nil {
				sys.Close(fd)
				err = sys.EBADF
			}
			if err != nil {
				fd = -1
				if err == sys.EMFILE || err == sys.ENFILE {
					o.starved.Store(true)
				}
			}
			r.fd, r.noatime = fd, noatime
		}
		close(b.done)
	}
}

// lstat looks at entry k of b by its lstat, for a walk that asks
// Walker.Opens (visit's rule, on an opener's goroutine), and returns true
// when the entry is done: a regular file that does not look sparse and
// that Opens refused (unopened, not opened), or one whose lstat failed
// (fd -1: the walk looks at it again, as at any entry it could not open).
// It returns false for an entry to be opened ahead as usual.
func (o *openers) lstat(b *batch, k int) bool {
	r := &b.res[k]
	if sys.Fstatat(b.dirfd, b.names[k], &r.st, sys.AT_SYMLINK_NOFOLLOW) != nil {
		r.fd = -1
		return true
	}
	st := &r.st
	if st.Mode&sys.S_IFMT == sys.S_IFREG && uint64(st.Blocks)*512 >= uint64(st.Size) && !b.opens(r.path, uint64(st.Size)) {
		r.fd, r.unopened = -1, true
		return true
	}
	return false
}

// stop ends the goroutines, once every batch was drained.
func (o *openers) stop() {
	close(o.work)
	o.wg.Wait()
}

// fill hands out batches of the regular files of l from entry l.i on (not
// those in skip: image parts), while batches are free.
func (s *walk) fill(l *level, skip map[string]string) {
	o := s.open
	if o == nil || l.fd < 0 || o.starved.Load() {
		return
	}
	l.scan = max(l.scan, l.i)
	for o.inUse < o.max && l.scan < l.list.len() {
		var b *batch
		if n := len(o.free); n > 0 {
			b, o.free = o.free[n-1], o.free[:n-1]
		} else {
			b = &batch{}
		}
		b.dirfd, b.follow, b.names, b.res, b.next, b.closed = l.fd, s.w.Follow, b.names[:0], b.res[:0], 0, false
		b.opens = nil
		if s.lstatFirst() {
			b.opens = s.w.Opens
		}
		for ; l.scan < l.list.len() && len(b.res) < o.batch; l.scan++ {
			if l.list.typ(l.scan) != sys.DT_REG {
				continue
			}
			nb := l.list.nameBytes(l.scan)
			if _, ok := skip[string(nb)]; ok {
				continue
			}
			// The path, and the name as its end: one allocation.
			path := string(s.path[:l.prefix]) + string(nb)
			b.names = append(b.names, path[l.prefix:])
			b.res = append(b.res, preOpen{i: l.scan, path: path})
		}
		if len(b.res) == 0 {
			o.free = append(o.free, b)
			return
		}
		b.done = make(chan struct{})
		o.inUse++
		l.ahead = append(l.ahead, b)
		o.work <- b
	}
}

// take returns entry i of l, true, if it was opened ahead (waiting for
// its batch); false if not. The caller owns the preOpen's descriptor.
func (s *walk) take(l *level, i int) (preOpen, bool) {
	for len(l.ahead) > 0 {
		b := l.ahead[0]
		if b.next < len(b.res) && b.res[b.next].i > i {
			return preOpen{}, false // not reached yet
		}
		if !b.closed {
			<-b.done
			b.closed = true
		}
		for b.next < len(b.res) && b.res[b.next].i < i {
			b.next++ // passed by (not the case in a walk: defensive), closed when drained
		}
		if b.next < len(b.res) && b.res[b.next].i == i {
			b.res[b.next].taken = true
			r := b.res[b.next] // a copy: release clears the batch
			b.next++
			if b.next == len(b.res) {
				s.release(l)
			}
			return r, true
		}
		s.release(l)
	}
	return preOpen{}, false
}

// release closes what l's first batch opened and nobody took, and frees
// it.
func (s *walk) release(l *level) {
	b := l.ahead[0]
	if !b.closed {
		<-b.done
		b.closed = true
	}
	for k := range b.res {
		if r := &b.res[k]; !r.taken && r.fd >= 0 {
			sys.Close(r.fd)
		}
		b.res[k] = preOpen{}
	}
	l.ahead[0] = nil
	l.ahead = l.ahead[1:]
	s.open.inUse--
	s.open.free = append(s.open.free, b)
}

// drain finishes l's batches and closes what they opened and nobody took,
// before l's descriptor is closed; the entries after the current one are
// opened ahead again if l is reopened.
func (s *walk) drain(l *level) {
	for len(l.ahead) > 0 {
		s.release(l)
	}
	l.ahead = l.ahead[:0]
	l.scan = 0
}
