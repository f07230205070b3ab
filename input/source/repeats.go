package source

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
)

// repeats is what a walk remembers to tell a directory or a file reached
// again (Counters.RepeatedDirs, RepeatedFiles, HardLinks) from one met for
// the first time: not every identity walked, which would grow with the
// number of files, but only those a repeat can happen to.
//
//   - A file of one name (st_nlink 1) is reached again only when it is
//     named, or lies under a directory reached twice; a directory only
//     when it is named, mounted a second time (a bind mount: the mount
//     point shows a directory, or a file, that is also reached by its own
//     path) or reached through a symlink followed. So the identities of
//     the paths named, and of every mount point below a directory named
//     (from /proc/self/mountinfo, at the start), are watched: each is
//     remembered once walked, wherever it is met, and so are the
//     directories found to be the root of a mount during the walk
//     (statx's STATX_ATTR_MOUNT_ROOT, or a device other than their
//     parent's: a mount made after the walk started). Directories are
//     otherwise walked once each, so that a file's names in them are each
//     met once.
//   - A file of several names (hard links, st_nlink ≥ 2) is remembered
//     from its first name until all its names were met (counted against
//     st_nlink as it is at each meeting), then forgotten: its names yet
//     to come are what a repeat can be. A file whose other names lie
//     outside the paths walked is remembered until the walk ends.
//   - With Walker.Follow, a symlink met later may lead to any file or
//     directory walked before: every identity walked is then kept (8 bytes
//     and the map's overhead, about 10 to 20 bytes, a file), as it is when
//     the mounts cannot be read (no /proc).
type repeats struct {
	all    idSet               // every identity walked (Follow, or mounts unknown); nil otherwise
	watch  map[devIno]bool     // the paths named and the mount points below them: true once walked
	mounts map[devIno]struct{} // roots of mounts met that were not watched, walked
	links  map[devIno]uint32   // files of several names yielded: the names met, until all are
}

// idSet is a set of identities, compact: a set of inode numbers per device.
type idSet map[uint64]map[uint64]struct{}

// add adds id, reporting whether it was not in s yet.
func (s idSet) add(id devIno) bool {
	m := s[id.dev]
	if m == nil {
		m = map[uint64]struct{}{}
		s[id.dev] = m
	}
	if _, ok := m[id.ino]; ok {
		return false
	}
	m[id.ino] = struct{}{}
	return true
}

func (s idSet) has(id devIno) bool {
	_, ok := s[id.dev][id.ino]
	return ok
}

// newRepeats prepares what a walk of w.Paths remembers, named being each
// path's stat (nil for those that cannot be).
func newRepeats(w *Walker, named []*sys.Stat_t) *repeats {
	r := &repeats{watch: map[devIno]bool{}, mounts: map[devIno]struct{}{}, links: map[devIno]uint32{}}
	if w.Follow {
		r.all = idSet{}
		return r
	}
	var roots []string
	for i, st := range named {
		if st == nil {
			continue
		}
		r.watch[devIno{uint64(st.Dev), st.Ino}] = false
		if st.Mode&sys.S_IFMT != sys.S_IFDIR {
			continue
		}
		root, err := filepath.Abs(w.Paths[i])
		if err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			r.all = idSet{} // where it lies is unknown: keep everything
			return r
		}
		roots = append(roots, root)
	}
	if len(roots) == 0 {
		return r
	}
	mps, err := mountPoints()
	if err != nil {
		r.all = idSet{}
		return r
	}
	for _, m := range mps {
		for _, root := range roots {
			if m == root || root == "/" || strings.HasPrefix(m, root+"/") {
				var st sys.Stat_t
				if sys.Lstat(m, &st) == nil {
					r.watch[devIno{uint64(st.Dev), st.Ino}] = false
				}
				break
			}
		}
	}
	return r
}

// mountPoints lists the mount points of the process's mount namespace:
// the fifth field of /proc/self/mountinfo, its octal escapes (\040 for a
// space, …) undone.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mps []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 {
			mps = append(mps, unescapeMount(fields[4]))
		}
	}
	return mps, sc.Err()
}

// unescapeMount undoes mountinfo's escapes: a backslash and three octal
// digits stand for a byte (space, tab, newline, backslash).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// dirSeen reports whether the directory id was walked before.
func (r *repeats) dirSeen(id devIno) bool {
	if r.all != nil {
		return r.all.has(id)
	}
	if r.watch[id] {
		return true
	}
	_, ok := r.mounts[id]
	return ok
}

// dirWalked records that the directory id is walked; mountRoot: it is the
// root of a mount.
func (r *repeats) dirWalked(id devIno, mountRoot bool) {
	switch _, watched := r.watch[id]; {
	case r.all != nil:
		r.all.add(id)
	case watched:
		r.watch[id] = true
	case mountRoot:
		r.mounts[id] = struct{}{}
	}
}

// fileMet records that a file of identity id and nlink names is met by
// one of its names, reporting whether it was met before. With countLinks
// a file of several names is not remembered (every name is yielded).
func (r *repeats) fileMet(id devIno, nlink uint64, countLinks bool) (before bool) {
	if r.all != nil {
		return !r.all.add(id)
	}
	if was, ok := r.watch[id]; ok {
		r.watch[id] = true
		return was
	}
	if nlink < 2 || countLinks {
		return false
	}
	met, ok := r.links[id]
	met++
	if uint64(met) >= nlink {
		delete(r.links, id)
	} else {
		r.links[id] = met
	}
	return ok
}
