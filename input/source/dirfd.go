package source

import (
	"errors"
	"fmt"
	"os"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// Directories are walked through file descriptors: each directory is
// opened relative to its parent's descriptor (openat(2) of one name), listed
// from its own (getdents(2)), and its entries are opened and stat'ed
// relative to it. No path longer than one name is handed to the kernel
// below a path named, so that a tree of any depth, its paths far beyond
// PATH_MAX (4096 bytes), is walked as any other; and a name swapped for a
// symlink between listing and opening leads nowhere (O_NOFOLLOW), the
// directories above it included.
//
// The descriptors held are bounded whatever the depth: the directory
// named and the maxDirFDs deepest directories of the walk's current
// path. Going back up to a directory whose descriptor was closed, the walk
// opens ".." of the directory it leaves (one openat, still open then) and
// checks that it is the directory it left (st_dev and st_ino); if not (the
// directory was moved meanwhile, or was reached through a symlink, whose
// ".." is elsewhere), it opens it again name by name from the nearest
// directory still held, checking each one's identity. A directory that
// cannot be found again is said (walkWarn) and the rest of it is not
// walked.

// maxDirFDs is the number of directory descriptors a walk holds at most,
// besides the one of the directory named: a tree less deep than this never
// reopens a directory.
const maxDirFDs = 32

// Flags of the walk's opens. O_NOCTTY: a terminal swapped in for a file
// never becomes the controlling one. O_NONBLOCK, for files only: a FIFO
// swapped in for a regular file between listing and opening must not
// block the open (waiting for a writer); fstat then finds it a FIFO, and
// it is skipped unread. It is cleared once the file is known to be a
// regular file or a block device (unblock).
const (
	dirFlags  = sys.O_RDONLY | sys.O_DIRECTORY | sys.O_CLOEXEC | sys.O_NOCTTY
	fileFlags = sys.O_RDONLY | sys.O_CLOEXEC | sys.O_NOCTTY | sys.O_NONBLOCK
)

// openAt opens name relative to the directory dirfd (sys.AT_FDCWD: the
// working directory) read-only with flags, and O_NOFOLLOW unless follow.
// It asks for O_NOATIME first (Linux only: oNoatime), so that reading neither the file nor the
// directory updates its access time, and opens again without it where
// the kernel refuses it (EPERM: O_NOATIME needs the file's ownership or
// CAP_FOWNER; EINVAL: file systems that do not know it); noatime says
// whether it was granted. Interrupted opens (EINTR) are retried.
func openAt(dirfd int, name string, flags int, follow bool) (fd int, noatime bool, err error) {
	if !follow {
		flags |= sys.O_NOFOLLOW
	}
	if oNoatime != 0 {
		for {
			fd, err = sys.Openat(dirfd, name, flags|oNoatime, 0)
			if err != sys.EINTR {
				break
			}
		}
		if err == nil {
			return fd, true, nil
		}
		if err != sys.EPERM && err != sys.EINVAL {
			return -1, false, err
		}
	}
	for {
		fd, err = sys.Openat(dirfd, name, flags, 0)
		if err != sys.EINTR {
			break
		}
	}
	if err != nil {
		return -1, false, err
	}
	return fd, false, nil
}

// openFile opens the file name in dirfd (path, its full path, for the
// walk's faults, nil outside tests) to be read: see openAt and fileFlags.
// With wait, an open that finds no descriptor free waits for a file
// handed on to close (retryOutOfFDs); without (an open ahead), EMFILE is
// returned at once, so that the walk stops opening ahead.
func openFile(faults *Faults, dirfd int, name, path string, follow, wait bool) (fd int, noatime bool, err error) {
	if err := faults.beforeOpen(path); err != nil {
		return -1, false, err
	}
	open := func() (int, bool, error) { return openAt(dirfd, name, fileFlags, follow) }
	if !wait {
		return open()
	}
	return retryOutOfFDs(open)
}

// unblock clears O_NONBLOCK on a file found to be a regular file or a
// block device (reads then block as usual, whatever the file system does
// with the flag), keeping O_NOATIME when it was granted.
func unblock(fd int, noatime bool) error {
	fl := 0
	if noatime {
		fl = oNoatime
	}
	_, err := sys.FcntlInt(uintptr(fd), sys.F_SETFL, fl)
	return err
}

// level is one directory of the walk's current path.
type level struct {
	id devIno
	// fd is the directory's descriptor, -1 while closed (dirfd.go).
	fd int
	// prefix: walk.path[:prefix] is what an entry's name is appended to
	// for its path (the directory's path and a slash, as filepath.Join
	// makes it).
	prefix int
	// viaLink: reached by following a symlink, so that its ".." is not
	// the directory it was met in.
	viaLink bool
	// lost: closed and not found again (moved or replaced meanwhile);
	// the rest of it is not walked.
	lost bool
	list listing
	// i is the entry of list being walked: the name of the level below.
	i int
	// ahead: the batches of its entries opened ahead (ahead.go), in
	// order; scan: the first entry not in one.
	ahead []*batch
	scan  int
}

// top is the directory being walked.
func (s *walk) top() *level { return s.levels[s.depth-1] }

// push makes the directory open as fd, of identity id, the current one,
// its entries' paths prefixed by s.path (which ends with a slash, or is
// empty); beyond maxDirFDs directories held, the shallowest one held but
// the one named is closed.
func (s *walk) push(fd int, id devIno, viaLink bool) *level {
	if s.depth == len(s.levels) {
		s.levels = append(s.levels, &level{})
	}
	l := s.levels[s.depth]
	s.depth++
	l.id, l.fd, l.prefix, l.viaLink, l.lost, l.i, l.scan = id, fd, len(s.path), viaLink, false, 0, 0
	if s.depth == 1 {
		s.low = 1
	}
	if d := s.depth - 1; d-s.low+1 > maxDirFDs {
		s.closeLevel(s.levels[s.low])
		s.low++
	}
	return l
}

// pop leaves the current directory, closing it. Its parent, if its
// descriptor was closed, is opened again first (reopen) unless the walk
// stops (more false).
func (s *walk) pop(more bool) {
	l := s.top()
	if s.depth >= 2 {
		p := s.levels[s.depth-2]
		if p.fd < 0 && !p.lost && more {
			s.reopen(s.depth - 2)
		}
		if s.low > s.depth-2 {
			s.low = s.depth - 2
		}
	}
	s.closeLevel(l)
	l.list.reset()
	s.depth--
	if s.low < 1 {
		s.low = 1
	}
	s.path = s.path[:0]
	if s.depth > 0 {
		s.path = s.path[:s.top().prefix]
	}
}

func (s *walk) closeLevel(l *level) {
	if s.open != nil {
		s.drain(l) // before the descriptor its batches open in is closed
	}
	if l.fd >= 0 {
		sys.Close(l.fd)
		l.fd = -1
	}
}

// closeAll closes what a walk ended early left open.
func (s *walk) closeAll() {
	for _, l := range s.levels {
		s.closeLevel(l)
	}
}

// reopen opens the directory at depth d again (its descriptor was
// closed): through ".." of the directory below it, still open, when that
// one was not reached through a symlink; else, or when ".." is not the
// directory left (moved since), name by name from the nearest directory
// above it still open. Each directory opened is checked to be the one
// walked (st_dev, st_ino). When it cannot be found again, it is marked
// lost and said.
func (s *walk) reopen(d int) {
	l := s.levels[d]
	if c := s.levels[d+1]; c.fd >= 0 && !c.viaLink {
		if fd, _, err := openAt(c.fd, "..", dirFlags, false); err == nil {
			if id, _, err := dirStat(fd); err == nil && id == l.id {
				l.fd = fd
				return
			}
			sys.Close(fd)
		}
	}
	a := d - 1
	for a > 0 && s.levels[a].fd < 0 {
		a--
	}
	fd := s.levels[a].fd
	for k := a + 1; k <= d; k++ {
		up := s.levels[k-1]
		next, _, err := openAt(fd, up.list.name(up.i), dirFlags, s.levels[k].viaLink)
		if err == nil {
			var id devIno
			if id, _, err = dirStat(next); err == nil && id != s.levels[k].id {
				err = errors.New("another directory is there now")
			}
			if err != nil {
				sys.Close(next)
			}
		}
		if k-1 != a {
			sys.Close(fd)
		}
		if err != nil {
			// Level k is not where it was: it and the levels below it
			// down to d are not walked further.
			for j := k; j <= d; j++ {
				s.levels[j].lost = true
			}
			path := string(s.path[:s.levels[k].prefix-1])
			s.walkWarn(path, &os.PathError{Op: "open", Path: path,
				Err: fmt.Errorf("moved or replaced while it was walked (%w): the rest of it is not walked", err)})
			return
		}
		fd = next
	}
	l.fd = fd
}
