//go:build linux

package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"golang.org/x/sys/unix"
)

// mknod creates an empty regular file name in the directory open as dirfd
// (one syscall: trees of many files are built fast).
func mknod(t testing.TB, dirfd int, name string) {
	t.Helper()
	if err := unix.Mknodat(dirfd, name, unix.S_IFREG|0o644, 0); err != nil {
		t.Fatalf("mknod %s: %v", name, err)
	}
}

// openDir opens the directory path (tests).
func openDir(t testing.TB, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// walkProbe walks w with yield closing each file and calling probe (with
// the walk's state) after every n files.
func walkProbe(t *testing.T, w *Walker, n int, probe func(s *walk)) (Counters, []string) {
	t.Helper()
	var warns []string
	var s *walk
	files := 0
	s = newWalk(w, func(f *File) {
		f.Close()
		if files++; files%n == 0 {
			probe(s)
		}
	}, func(path string, err error) { warns = append(warns, path+": "+err.Error()) })
	defer s.closeAll()
	s.run(context.Background())
	probe(s)
	return s.c, warns
}

// A walk of 200,000 files in 200 directories, with hard links between
// neighbouring directories, keeps no identity per file: no file of one
// name is remembered (none is named, none is below a mount point), and a
// hard-linked file only until its last name is met, so that at most the
// links of two directories are remembered at once, and none at the end.
// Its counters are those of a walk remembering everything.
func TestWalkMemoryIndependentOfFiles(t *testing.T) {
	testkit.Stress(t)
	const dirs, perDir, linked = 200, 1000, 5
	root := memDir(t)
	rfd := openDir(t, root)
	defer unix.Close(rfd)
	for d := range dirs {
		name := fmt.Sprintf("d%03d", d)
		if err := unix.Mkdirat(rfd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Openat(rfd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range perDir {
			mknod(t, fd, fmt.Sprintf("f%04d", i))
		}
		unix.Close(fd)
		if d > 0 {
			// The first files of the directory before get a second
			// name here ("a…" sorts before "f…": met before this
			// directory's own files).
			for i := range linked {
				old := filepath.Join(root, fmt.Sprintf("d%03d", d-1), fmt.Sprintf("f%04d", i))
				if err := os.Link(old, filepath.Join(root, name, fmt.Sprintf("a%04d", i))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	maxLinks, maxWatch, maxMounts := 0, 0, 0
	c, warns := walkProbe(t, &Walker{Paths: []string{root}}, 1000, func(s *walk) {
		if s.rep.all != nil {
			t.Fatal("every identity kept")
		}
		maxLinks = max(maxLinks, len(s.rep.links))
		maxWatch = max(maxWatch, len(s.rep.watch))
		maxMounts = max(maxMounts, len(s.rep.mounts))
		if len(s.levels) > 2 {
			t.Fatalf("%d levels for a tree 2 deep", len(s.levels))
		}
	})
	if len(warns) != 0 || c.Files != dirs*perDir || c.HardLinks != (dirs-1)*linked || c.Dirs != dirs+1 {
		t.Errorf("counters %+v, warnings %q; want %d files, %d hard links", c, warns, dirs*perDir, (dirs-1)*linked)
	}
	// At a probe (every 1000 files) the links of the directory just
	// walked are pending: those to the next one.
	if maxLinks > 2*linked || maxWatch != 1 || maxMounts != 0 {
		t.Errorf("at most %d hard links, %d watched, %d mount roots remembered; want ≤ %d, 1 (the path named), 0",
			maxLinks, maxWatch, maxMounts, 2*linked)
	}
}

// A hard-linked file is forgotten once all its names are met (three
// names in three directories); one whose other name lies outside the
// paths walked is remembered to the end; with CountLinks none is
// remembered. A file named and also met in a directory named is
// remembered whatever its links (a repeat, not a new name).
func TestHardLinksForgotten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	for _, d := range []string{"a", "b", "c"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(tree, "a", "three"), []byte("three names"))
	os.Link(filepath.Join(tree, "a", "three"), filepath.Join(tree, "b", "three"))
	os.Link(filepath.Join(tree, "a", "three"), filepath.Join(tree, "c", "three"))
	writeFile(t, filepath.Join(tree, "b", "outside"), []byte("one name outside"))
	os.Link(filepath.Join(tree, "b", "outside"), filepath.Join(dir, "outside"))
	for _, countLinks := range []bool{false, true} {
		var s *walk
		s = newWalk(&Walker{Paths: []string{tree}, CountLinks: countLinks}, func(f *File) { f.Close() }, nil)
		s.run(context.Background())
		s.closeAll()
		three := identOf(t, filepath.Join(tree, "a", "three"))
		outside := identOf(t, filepath.Join(dir, "outside"))
		_, keptThree := s.rep.links[devIno(three)]
		_, keptOutside := s.rep.links[devIno(outside)]
		switch {
		case countLinks && (len(s.rep.links) != 0 || s.c.Files != 4 || s.c.HardLinks != 0):
			t.Errorf("count links: %d remembered, counters %+v", len(s.rep.links), s.c)
		case !countLinks && (keptThree || !keptOutside || len(s.rep.links) != 1 || s.c.Files != 2 || s.c.HardLinks != 2):
			t.Errorf("three names met: kept %v; one outside: kept %v; counters %+v", keptThree, keptOutside, s.c)
		}
	}
	// Named, and met again inside the directory named after it: a
	// hard link again (as before), in either order, however many of its
	// names were met.
	f := filepath.Join(tree, "a", "three")
	for _, paths := range [][]string{{f, tree}, {tree, f}} {
		r := walkT(t, &Walker{}, paths...)
		if r.c.Files != 2 || r.c.HardLinks != 3 || len(r.files) != 2 {
			t.Errorf("%q: %+v", paths, r.c)
		}
	}
}

// Bind mounts (root only): a directory mounted a second time below the
// path walked is walked once, whether its mount point comes before or
// after its own path in the walk, and so is a file mounted over another.
// The walk remembers the mount points, not the files.
func TestBindMountsWalkedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "m", "src")
	writeFile(t, filepath.Join(src, "deep", "f"), randBytes(1, 5000))
	writeFile(t, filepath.Join(dir, "m", "file"), randBytes(2, 3000))
	writeFile(t, filepath.Join(dir, "m", "over"), randBytes(3, 100))
	for _, mp := range []string{"a-before", "z-after"} {
		if err := os.Mkdir(filepath.Join(dir, "m", mp), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mount := func(from, to string) {
		if err := unix.Mount(from, to, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("bind mount not permitted here: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(to, unix.MNT_DETACH) })
	}
	mount(src, filepath.Join(dir, "m", "a-before"))        // met before src
	mount(src+"/deep", filepath.Join(dir, "m", "z-after")) // met after src
	mount(filepath.Join(dir, "m", "file"), filepath.Join(dir, "m", "over"))
	c, warns := walkProbe(t, &Walker{Paths: []string{filepath.Join(dir, "m")}}, 1, func(s *walk) {
		if s.rep.all != nil || len(s.rep.watch) > 4 {
			t.Errorf("remembered: all %v, watch %d", s.rep.all != nil, len(s.rep.watch))
		}
	})
	// m, a-before (= src), a-before/deep; src and z-after repeats.
	if len(warns) != 0 || c.Files != 2 || c.Dirs != 3 || c.RepeatedDirs != 2 || c.RepeatedFiles != 1 {
		t.Errorf("counters %+v, warnings %q; want 2 files (f once, file once), 3 dirs, 2 repeated dirs, 1 repeated file", c, warns)
	}
}

// With Follow, a symlink leading to a directory or a file walked before
// (not an ancestor: a sibling met earlier) is a repeat, as a loop is:
// every identity is remembered then.
func TestFollowRepeatsAnywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "f"), randBytes(1, 1000))
	os.Mkdir(filepath.Join(dir, "b"), 0o755)
	os.Symlink("../a", filepath.Join(dir, "b", "dlink"))
	os.Symlink("../a/f", filepath.Join(dir, "b", "flink"))
	os.Symlink("..", filepath.Join(dir, "b", "loop"))
	r := walkT(t, &Walker{Follow: true}, dir)
	if c := r.c; len(r.warns) != 0 || c.Files != 1 || c.RepeatedDirs != 2 || c.RepeatedFiles != 1 || c.Dirs != 3 {
		t.Errorf("counters %+v, warnings %q; want 1 file, 3 dirs, a/ and the loop repeated, f repeated", c, r.warns)
	}
	if r := walkT(t, &Walker{}, dir); r.c.Symlinks != 3 || r.c.Files != 1 {
		t.Errorf("without Follow: %+v", r.c)
	}
}
