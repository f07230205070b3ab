//go:build linux

package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// memDir is a directory for a test creating many files or directories:
// on tmpfs (/dev/shm) where there is one, where they are made ten times
// faster than on a disk's file system here; removed when the test ends.
func memDir(t *testing.T) string {
	t.Helper()
	var fs unix.Statfs_t
	if unix.Statfs("/dev/shm", &fs) != nil || fs.Type != unix.TMPFS_MAGIC || unix.Access("/dev/shm", unix.W_OK) != nil {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/dev/shm", "ddtsim-"+strings.ReplaceAll(t.Name(), "/", "-"))
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents) - 1 // ReadDir's own
}

// chain builds depth directories, each named name, below root (relative
// to descriptors: the paths grow far beyond PATH_MAX, which mkdir(2) by
// path refuses), and a file "bottom" holding data in the deepest. It
// returns the file's path, and removes the chain when the test ends (by
// descriptors too: os.RemoveAll would hold one per level).
func chain(t *testing.T, root, name string, depth int, data []byte) string {
	t.Helper()
	fd := openDir(t, root)
	for range depth {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
	}
	f, err := unix.Openat(fd, "bottom", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(f, data)
	unix.Close(f)
	unix.Close(fd)
	t.Cleanup(func() { unchain(root, name, depth) })
	return root + strings.Repeat("/"+name, depth) + "/bottom"
}

// unchain removes what chain built (whatever is left of it).
func unchain(root, name string, depth int) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	n := 0
	for ; n < depth; n++ {
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		unix.Close(fd)
		fd = next
	}
	unix.Unlinkat(fd, "bottom", 0)
	for ; n > 0; n-- {
		up, err := unix.Openat(fd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return
		}
		fd = up
		unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
	}
	unix.Close(fd)
}

// A tree 10,000 directories deep, its deepest path about 90,000 bytes
// long (22 times PATH_MAX): the file at its bottom is found and read, with
// at most maxDirFDs + 1 directory descriptors open; the walk back up
// opens each directory again through "..".
func TestDeepTree(t *testing.T) {
	const depth = 10000
	root := memDir(t)
	data := randBytes(9, 5000)
	want := chain(t, root, "level-09", depth, data)
	before := openFDs(t)
	var got []*File
	var fds int
	r := walkProbeFiles(t, &Walker{}, root, func(f *File) {
		fds = openFDs(t) - before
		buf := make([]byte, len(data)+1)
		n, _ := f.ReadAt(buf, 0)
		if string(buf[:n]) != string(data) {
			t.Errorf("read %d bytes, not the file's", n)
		}
		got = append(got, f)
	})
	if len(r.warns) != 0 || r.c.Files != 1 || r.c.Dirs != depth+1 || len(got) != 1 || got[0].Path != want {
		t.Fatalf("counters %+v, %d warnings (first %.200q), %d files", r.c, len(r.warns), r.warns, len(got))
	}
	if len(want) < 20*4096 {
		t.Fatalf("path only %d bytes", len(want))
	}
	// The directories held, the file yielded.
	if fds > maxDirFDs+1+1 {
		t.Errorf("%d descriptors open at the bottom; want at most %d", fds, maxDirFDs+2)
	}
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after the walk, %d before", n, before)
	}
}

// walkProbeFiles walks path with w, passing each file to each before it
// is closed.
func walkProbeFiles(t *testing.T, w *Walker, path string, each func(*File)) walked {
	t.Helper()
	var r walked
	w.Paths = []string{path}
	r.c = w.Walk(context.Background(), func(f *File) {
		each(f)
		f.Close()
	}, func(path string, err error) { r.warns = append(r.warns, path+": "+err.Error()) })
	return r
}

// A directory moved while the walk is below it, deeper than the
// descriptors it holds: its parent is found again by name from the
// directory named (its ".." is elsewhere now) and the walk goes on. When a
// directory on that way was replaced meanwhile by another of the same
// name, that is said once, the directories below it are not walked
// further, and the walk goes on above it.
//
// With files opened ahead (Openers), the same: the file "e" of level 10,
// opened ahead while the walk went down "d", is closed with level 10's
// descriptor and opened again when the walk comes back.
func TestDirectoryMovedDuringWalk(t *testing.T) {
	t.Parallel()
	for _, openers := range []int{0, 3} {
		t.Run(fmt.Sprintf("openers=%d", openers), func(t *testing.T) { testDirectoryMovedDuringWalk(t, openers) })
	}
}

func testDirectoryMovedDuringWalk(t *testing.T, openers int) {
	const depth = 3 * maxDirFDs
	for _, replace := range []bool{false, true} {
		root := t.TempDir()
		chain(t, root, "d", depth, []byte("deep"))
		// Files walked after the deep branch: beside it at level 10
		// ("e" after "d"), and in the directory named.
		writeFile(t, root+strings.Repeat("/d", 10)+"/e", []byte("level 10"))
		writeFile(t, root+"/z", []byte("top"))
		aside := openDirT(t, t.TempDir())
		// When the bottom is reached, level 40 is moved out of level
		// 39 (the same directory still, but its ".." is elsewhere now);
		// and level 20 moved out too, another put in its place.
		// (Renamed relative to descriptors: these paths are long.)
		moved := false
		r := walkProbeFiles(t, &Walker{Openers: openers}, root, func(f *File) {
			if filepath.Base(f.Path) != "bottom" {
				return
			}
			p39 := openChain(t, root, 39)
			defer unix.Close(p39)
			if err := unix.Renameat(p39, "d", aside, "d40"); err != nil {
				t.Fatal(err)
			}
			if replace {
				p19 := openChain(t, root, 19)
				defer unix.Close(p19)
				if err := unix.Renameat(p19, "d", aside, "d20"); err != nil {
					t.Fatal(err)
				}
				unix.Mkdirat(p19, "d", 0o755)
			}
			moved = true
		})
		switch {
		case !moved:
			t.Fatalf("bottom not reached: %+v, %.300q", r.c, r.warns)
		case !replace && (len(r.warns) != 0 || r.c.Files != 3):
			t.Errorf("moved: counters %+v, warnings %.300q; want 3 files", r.c, r.warns)
		case replace && (len(r.warns) != 1 || !strings.HasPrefix(r.warns[0], root+strings.Repeat("/d", 20)+": open") ||
			!strings.Contains(r.warns[0], "moved or replaced while it was walked") || r.c.Files != 3):
			t.Errorf("replaced: counters %+v, warnings %.300q; want 3 files and one warning, for level 20", r.c, r.warns)
		}
		// Put the chain back together for its removal.
		if replace {
			p19 := openChain(t, root, 19)
			unix.Unlinkat(p19, "d", unix.AT_REMOVEDIR)
			unix.Renameat(aside, "d20", p19, "d")
			unix.Close(p19)
		}
		p39 := openChain(t, root, 39)
		unix.Renameat(aside, "d40", p39, "d")
		unix.Close(p39)
	}
}

// openChain opens root/d/d/… n levels down.
func openChain(t *testing.T, root string, n int) int {
	t.Helper()
	fd := openDir(t, root)
	for range n {
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	return fd
}

// A directory of 1,000,000 entries, 100,000 empty files and 900,000
// symlinks (made faster, and walked without a stat each): all counted, the
// files yielded, and the listing kept compact. Its names (8 bytes each)
// and 8 bytes an entry are 16 MB; the slab and the entries grow by
// doubling (up to 32 MB), and the files yielded meanwhile are garbage the
// collector lets grow as much as what is live (GOGC=100): 64 MiB of heap
// over the walk's start at most, with 32 MiB to spare, 96 MiB.
// []os.DirEntry, before, took about 100 bytes an entry: 100 MB live, and
// up to twice that before a collection.
func TestMillionEntries(t *testing.T) {
	testkit.Stress(t)
	const n, files = 1_000_000, 100_000
	dir := memDir(t)
	fd := openDirT(t, dir)
	for i := range files {
		mknod(t, fd, fmt.Sprintf("f%07d", i))
	}
	for i := files; i < n; i++ {
		if err := unix.Symlinkat("f0000000", fd, fmt.Sprintf("l%07d", i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	listed := 0
	c, warns := walkProbe(t, &Walker{Paths: []string{dir}}, 5_000, func(s *walk) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
		if s.depth == 1 {
			l := s.levels[0].list
			listed = cap(l.names) + 8*cap(l.ents)
		}
	})
	if len(warns) != 0 || c.Files != files || c.Symlinks != n-files || c.Dirs != 1 {
		t.Fatalf("counters %+v, warnings %q", c, warns)
	}
	if listed == 0 || listed > 2*n*16 {
		t.Errorf("the listing holds %d bytes; want at most %d", listed, 2*n*16)
	}
	if grew := int64(peak - base); grew > 96<<20 {
		t.Errorf("the heap grew by %d MiB; want at most 96", grew>>20)
	}
	t.Logf("listing %d MiB, heap grew at most %d MiB", listed>>20, int64(peak-base)>>20)
}

// Names of 255 bytes (NAME_MAX), ASCII and UTF-8, in directories whose
// names are 255 bytes too, 20 deep (a path of 5 KB): found and read. A
// name of 256 bytes is refused by the file system itself.
func TestLongNames(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	long := strings.Repeat("n", 255)
	utf := strings.Repeat("€", 85) // 3 bytes each
	data := randBytes(4, 3000)
	want := chain(t, root, long, 20, data)
	writeFile(t, filepath.Join(root, utf), data)
	if err := unix.Mknodat(openDirT(t, root), strings.Repeat("x", 256), unix.S_IFREG|0o644, 0); err != unix.ENAMETOOLONG {
		t.Errorf("a name of 256 bytes: %v, want ENAMETOOLONG", err)
	}
	var paths []string
	r := walkProbeFiles(t, &Walker{}, root, func(f *File) {
		buf := make([]byte, len(data))
		if n, err := f.ReadAt(buf, 0); n != len(data) || string(buf) != string(data) {
			t.Errorf("%.40s…: read %d, %v", f.Path, n, err)
		}
		paths = append(paths, f.Path)
	})
	if len(r.warns) != 0 || r.c.Files != 2 || len(paths) != 2 || paths[0] != want || paths[1] != filepath.Join(root, utf) {
		t.Errorf("counters %+v, warnings %q, paths of %d files", r.c, r.warns, len(paths))
	}
}

// openDirT is openDir, closed when the test ends.
func openDirT(t *testing.T, path string) int {
	fd := openDir(t, path)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// Files replaced between listing and opening (Faults.BeforeOpen): by a
// symlink (O_NOFOLLOW refuses it; the name is then looked at again and
// counted as what it has become, a symlink, not followed), by a
// directory and by a FIFO nobody writes to (opened without blocking,
// found to be what they are, skipped as special, never read). Nothing is
// followed, read or waited on. The same when the files are opened ahead
// of the walk (Openers).
func TestReplacedBeforeOpen(t *testing.T) {
	t.Parallel()
	for _, openers := range []int{0, 3} {
		t.Run(fmt.Sprintf("openers=%d", openers), func(t *testing.T) { testReplacedBeforeOpen(t, openers) })
	}
}

func testReplacedBeforeOpen(t *testing.T, openers int) {
	dir := t.TempDir()
	for _, name := range []string{"to-dir", "to-fifo", "to-link"} {
		writeFile(t, filepath.Join(dir, name), randBytes(1, 1000))
	}
	writeFile(t, filepath.Join(dir, "target"), randBytes(2, 2000))
	faults := &Faults{BeforeOpen: func(path string) {
		switch filepath.Base(path) {
		case "to-dir":
			os.Remove(path)
			os.Mkdir(path, 0o755)
		case "to-fifo":
			os.Remove(path)
			syscall.Mkfifo(path, 0o644)
		case "to-link":
			os.Remove(path)
			os.Symlink("target", path)
		}
	}}
	r := walkFailsafe(t, &Walker{Openers: openers, Faults: faults}, dir)
	if len(r.files) != 1 || filepath.Base(r.files[0]) != "target" {
		t.Errorf("yielded %q; want target only", r.files)
	}
	c := r.c
	if c.Special != 2 || c.Files != 1 || c.LogicalBytes != 2000 || c.Symlinks != 1 || len(r.warns) != 0 {
		t.Errorf("counters %+v, warnings %q; want 2 special, 1 file (target, 2000 bytes), 1 symlink (to-link), no warning", c, r.warns)
	}
}

// failsafe is a walk whose yield reads a byte of each file; it fails the
// test rather than hang (a FIFO opened or read would block: the test
// holds every FIFO open for writing and never writes).
type failsafe struct {
	c     Counters
	files []string
	warns []string
}

func walkFailsafe(t *testing.T, w *Walker, paths ...string) failsafe {
	t.Helper()
	w.Paths = paths
	done := make(chan failsafe, 1)
	go func() {
		var r failsafe
		r.c = w.Walk(context.Background(), func(f *File) {
			var b [1]byte
			f.ReadAt(b[:], 0)
			r.files = append(r.files, f.Path)
			f.Close()
		}, func(path string, err error) { r.warns = append(r.warns, path+": "+err.Error()) })
		done <- r
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(60 * time.Second): // a failsafe, not a measure: the walk takes milliseconds
		t.Fatal("the walk hangs (on a FIFO?)")
		return failsafe{}
	}
}

// FIFOs inside a tree and a FIFO named explicitly, each held open for
// writing by a writer that never writes: skipped and counted, never
// opened (Faults.BeforeOpen never sees them), the named one said; also
// when files are opened ahead of the walk (Openers).
func TestFIFOsNeverOpened(t *testing.T) {
	t.Parallel()
	for _, openers := range []int{0, 3} {
		t.Run(fmt.Sprintf("openers=%d", openers), func(t *testing.T) { testFIFOsNeverOpened(t, openers) })
	}
}

func testFIFOsNeverOpened(t *testing.T, openers int) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	writeFile(t, filepath.Join(tree, "sub", "file"), randBytes(1, 100))
	fifos := []string{filepath.Join(tree, "fifo"), filepath.Join(tree, "sub", "fifo"), filepath.Join(dir, "named")}
	for _, p := range fifos {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		// O_RDWR: open at once, a writer (and a reader) that never
		// writes: a read of the FIFO would wait for ever.
		fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
	}
	var opened []string
	var mu sync.Mutex
	faults := &Faults{BeforeOpen: func(path string) { mu.Lock(); opened = append(opened, path); mu.Unlock() }}
	r := walkFailsafe(t, &Walker{Openers: openers, Faults: faults}, tree, fifos[2])
	if len(opened) != 1 || filepath.Base(opened[0]) != "file" {
		t.Errorf("opened %q; want the file only", opened)
	}
	if r.c.Special != 3 || r.c.Files != 1 || len(r.warns) != 1 || !strings.Contains(r.warns[0], "skipped: a FIFO") {
		t.Errorf("counters %+v, warnings %q; want 3 special, 1 file, the named FIFO said", r.c, r.warns)
	}
}
