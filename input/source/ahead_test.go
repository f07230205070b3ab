//go:build linux

package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"golang.org/x/sys/unix"
)

// aheadTree builds a tree for the walks with files opened ahead: a
// directory of 200 files; a chain of 40 directories (deeper than the
// descriptors the walk holds) each holding "d", the next level, before 20
// files, so that a level's files are opened ahead while the walk is below
// it; symlinks, a FIFO, a hard link, empty files.
func aheadTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for i := range 200 {
		writeFile(t, filepath.Join(root, "many", fmt.Sprintf("f%03d", i)), randBytes(int64(i), i*37%3000))
	}
	dir := root
	for level := range 40 {
		dir = filepath.Join(dir, "d")
		for i := range 20 {
			writeFile(t, filepath.Join(dir, fmt.Sprintf("f%02d", i)), randBytes(int64(1000*level+i), (level*20+i)%700))
		}
	}
	writeFile(t, filepath.Join(root, "empty"), nil)
	if err := os.Symlink("many/f001", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := testkit.Mkfifo(t, filepath.Join(root, "many", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "many", "f002"), filepath.Join(root, "hard")); err != nil {
		t.Fatal(err)
	}
	return root
}

// aheadWalk is what a walk yielded, in order, and what it held open.
type aheadWalk struct {
	files  []string // path, size and inode of each file yielded
	c      Counters
	warns  []string
	maxFDs int // descriptors open beyond those before the walk, at most, at a yield
	leaked int // descriptors open after the walk beyond those before
}

func walkAhead(t *testing.T, w *Walker, root string, each func(f *File)) aheadWalk {
	t.Helper()
	var r aheadWalk
	before := openFDs(t)
	w.Paths = []string{root}
	r.c = w.Walk(context.Background(), func(f *File) {
		r.maxFDs = max(r.maxFDs, openFDs(t)-before)
		r.files = append(r.files, fmt.Sprintf("%s %d %d", f.Path, f.Size, f.Ino))
		if each != nil {
			each(f)
		}
		f.Close()
	}, func(path string, err error) { r.warns = append(r.warns, path+": "+err.Error()) })
	r.leaked = openFDs(t) - before
	return r
}

// Files opened ahead of the walk by 1, 3 or 16 openers: the walk yields
// the same files in the same order, counts and warns the same as a walk
// opening each file itself, leaves nothing open, and holds at most the
// batches' descriptors more (aheadMax × aheadBatch).
func TestOpenAheadSameWalk(t *testing.T) {
	root := aheadTree(t)
	want := walkAhead(t, &Walker{}, root, nil)
	if want.c.Files != 200+40*20+1 || want.c.Symlinks != 1 || want.c.Special != 1 || want.c.HardLinks != 1 || len(want.warns) != 0 {
		t.Fatalf("walk without openers: %+v, %q", want.c, want.warns)
	}
	if want.maxFDs > maxDirFDs+2 || want.leaked != 0 {
		t.Errorf("without openers: %d descriptors at most, %d left open", want.maxFDs, want.leaked)
	}
	for _, n := range []int{1, 3, 16} {
		got := walkAhead(t, &Walker{Openers: n}, root, nil)
		if !slices.Equal(got.files, want.files) || got.c != want.c || !slices.Equal(got.warns, want.warns) {
			t.Errorf("openers=%d: %d files (counters %+v, warnings %q); want the %d files of a walk without",
				n, len(got.files), got.c, got.warns, len(want.files))
		}
		if limit := maxDirFDs + 2 + aheadMax*aheadBatch; got.maxFDs > limit || got.leaked != 0 {
			t.Errorf("openers=%d: %d descriptors open at most (limit %d), %d left open", n, got.maxFDs, limit, got.leaked)
		}
	}
}

// When the walk yields the first file of a batch, the batch's other files
// were opened already (by an opener, while the walk did something
// else): the opens are made ahead, not merely moved.
func TestOpenAheadOpensAhead(t *testing.T) {
	t.Parallel()
	root := aheadTree(t)
	var mu sync.Mutex
	opened := map[string]bool{}
	faults := &Faults{BeforeOpen: func(path string) { mu.Lock(); opened[path] = true; mu.Unlock() }}
	var ahead []string
	walkAhead(t, &Walker{Openers: 2, Faults: faults}, root, func(f *File) {
		if f.Path != filepath.Join(root, "many", "f000") {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for i := 1; i < aheadBatch; i++ {
			if p := filepath.Join(root, "many", fmt.Sprintf("f%03d", i)); opened[p] {
				ahead = append(ahead, p)
			}
		}
	})
	if len(ahead) != aheadBatch-1 {
		t.Errorf("when many/f000 was yielded, %d of the %d files after it in its batch were open", len(ahead), aheadBatch-1)
	}
}

// A walk cancelled while files are opened ahead closes them all.
func TestOpenAheadCancelled(t *testing.T) {
	root := aheadTree(t)
	for _, stopAt := range []string{"many/f050", "d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/f05"} {
		ctx, cancel := context.WithCancel(context.Background())
		before := openFDs(t)
		yielded := 0
		(&Walker{Paths: []string{root}, Openers: 3}).Walk(ctx, func(f *File) {
			yielded++
			if strings.HasSuffix(f.Path, stopAt) {
				cancel()
			}
			f.Close()
		}, nil)
		cancel()
		if n := openFDs(t) - before; n != 0 || yielded == 0 {
			t.Errorf("cancelled at %s: %d files yielded, %d descriptors left open", stopAt, yielded, n)
		}
	}
}

// Out of descriptors while files are opened ahead: the files that cannot
// be opened then are said (too many open files) and counted, the others
// yielded, none lost; once an open ahead has met EMFILE the walk opens
// each file itself, holding no batch (checked once the descriptors are
// free again), and leaves nothing open.
func TestOpenAheadOutOfDescriptors(t *testing.T) {
	root := aheadTree(t)
	before := openFDs(t)
	testkit.SetFileLimit(t, uint64(before+PlentyOfFiles)) // files are opened ahead
	var hog []int
	yielded, after := 0, 0
	maxAfter := 0
	w := &Walker{Paths: []string{filepath.Join(root, "many")}, Openers: 1}
	var warns []string
	grab := func() { // every descriptor left
		for {
			fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return
			}
			hog = append(hog, fd)
		}
	}
	// Files seen (yielded or said): the descriptors are hogged until 100,
	// well past the files opened ahead before they ran out.
	seen := 0
	step := func() {
		seen++
		switch {
		case seen < 100:
			grab() // what was closed since too
		case seen == 100:
			for _, fd := range hog {
				unix.Close(fd)
			}
			hog = nil
		case seen > 100+aheadBatch:
			after++
			maxAfter = max(maxAfter, openFDs(t)-before)
		}
	}
	c := w.Walk(context.Background(), func(f *File) {
		yielded++
		f.Close()
		step()
	}, func(path string, err error) { warns = append(warns, path+": "+err.Error()); step() })
	for _, fd := range hog {
		unix.Close(fd)
	}
	for _, w := range warns {
		if !strings.Contains(w, "too many open files") {
			t.Errorf("warning %q", w)
		}
	}
	if c.Files != 200 || yielded+len(warns) != 200 || len(warns) == 0 || after < 50 {
		t.Errorf("%d files counted, %d yielded, %d said (%d after the descriptors came back); want 200 in all, some said", c.Files, yielded, len(warns), after)
	}
	if maxAfter > 3 {
		t.Errorf("%d descriptors open at most after the walk met EMFILE: files still opened ahead", maxAfter)
	}
	if n := openFDs(t) - before; n != 0 {
		t.Errorf("%d descriptors left open", n)
	}
}

// Under a low limit of open files (below PlentyOfFiles: ulimit -n 64 and
// the like) nothing is opened ahead: the walk holds what it held without
// openers, and yields the same.
func TestOpenAheadNotUnderLowLimit(t *testing.T) {
	root := aheadTree(t)
	want := walkAhead(t, &Walker{}, root, nil)
	testkit.SetFileLimit(t, uint64(openFDs(t)+100))
	got := walkAhead(t, &Walker{Openers: 4}, root, nil)
	if !slices.Equal(got.files, want.files) || got.c != want.c || len(got.warns) != 0 {
		t.Errorf("%d files, counters %+v, warnings %q; want the %d files of a walk without openers", len(got.files), got.c, got.warns, len(want.files))
	}
	if got.maxFDs > maxDirFDs+2 || got.leaked != 0 {
		t.Errorf("%d descriptors open at most (a walk without openers holds %d), %d left open", got.maxFDs, want.maxFDs, got.leaked)
	}
}
