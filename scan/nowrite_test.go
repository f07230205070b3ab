//go:build linux

package scan_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// times is what a scan must leave as it is of every entry of the tree:
// its modification, change and access times (lstat: a symlink's own).
type times struct{ mtime, ctime, atime unix.Timespec }

// entryTimes lstats every entry below (and with) root. It lists the
// directories O_NOATIME (filepath.WalkDir's reading would move their
// atimes).
func entryTimes(t *testing.T, root string) map[string]times {
	t.Helper()
	m := map[string]times{}
	var walk func(p string)
	walk = func(p string) {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		m[p] = times{st.Mtim, st.Ctim, st.Atim}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOATIME, 0)
		if err != nil {
			t.Fatal(err)
		}
		d := os.NewFile(uintptr(fd), p)
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			walk(filepath.Join(p, n))
		}
	}
	walk(root)
	return m
}

// A full scan writes nothing where it reads: no entry of the tree scanned
// (files, directories, a sparse file, hard links, a symlink, a FIFO) has
// its mtime, ctime or atime changed, the save and the spill directory
// lying outside the tree. Every atime is set far in the past first, so
// that a read without O_NOATIME would move it even under relatime. The
// walk opens files and directories O_NOATIME: the kernel allows it to the
// owner of a file and to root (CAP_FOWNER); the test's files are its own,
// so atimes are checked whoever runs it (a kernel refusing O_NOATIME
// altogether would fail the test: the scan would then update atimes, as
// any reader would). Then, as root where mounts are permitted, the tree
// is scanned again through a read-only bind mount: the same result, no
// error, nothing changed.
func TestScanNeverWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	testkit.Write(t, filepath.Join(tree, "a", "big"), testkit.Rand(1, 3<<20))
	testkit.Write(t, filepath.Join(tree, "a", "b", "small"), []byte("small file\n"))
	testkit.Write(t, filepath.Join(tree, "a", "b", "empty"), nil)
	testkit.Write(t, filepath.Join(tree, "copy"), testkit.Rand(1, 3<<20))
	sparse := filepath.Join(tree, "sparse")
	h, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt(testkit.Rand(2, 128<<10), 1<<30)
	h.Truncate(2 << 30)
	h.Close()
	if err := os.Link(filepath.Join(tree, "a", "big"), filepath.Join(tree, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/big", filepath.Join(tree, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := unix.NsecToTimespec(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	for p := range entryTimes(t, tree) {
		ts := []unix.Timespec{old, {Nsec: unix.UTIME_OMIT}}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	before := entryTimes(t, tree)
	// ctime has the kernel's coarse clock (a few ms): a change right
	// after the times were set must not fall in the same tick.
	time.Sleep(50 * time.Millisecond)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	scanOf := func(path, save string) analyzer.Counters {
		t.Helper()
		res, err := scan.Run(context.Background(), model.Settings{}, []string{path},
			scan.Options{Save: filepath.Join(out, save), Mem: 1 << 20, TmpDir: out})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		if len(res.Problems) != 0 {
			t.Errorf("%s: problems %+v", path, res.Problems)
		}
		c := res.Analysis.Counters
		c.TableBytes, c.SpillRuns, c.PeakRSS = 0, 0, 0 // the process's, not the tree's
		return c
	}
	check := func(what string) {
		t.Helper()
		after := entryTimes(t, tree)
		if len(after) != len(before) {
			t.Errorf("%s: %d entries, %d before", what, len(after), len(before))
		}
		for p, b := range before {
			a := after[p]
			if a.mtime != b.mtime || a.ctime != b.ctime {
				t.Errorf("%s: %s modified (mtime %v → %v, ctime %v → %v)", what, p, b.mtime, a.mtime, b.ctime, a.ctime)
			}
			if a.atime != b.atime {
				t.Errorf("%s: %s accessed: atime %v → %v", what, p, b.atime, a.atime)
			}
		}
	}
	rw := scanOf(tree, "rw.ddts")
	if rw.Files != 5 || rw.HardLinks != 1 || rw.Symlinks != 1 || rw.Special != 1 || rw.Dirs != 3 || rw.ReadBytes == 0 {
		t.Errorf("counters %+v; want 5 files, a hard link, a symlink, a FIFO, 3 directories", rw)
	}
	check("scan")

	t.Run("read-only bind mount", func(t *testing.T) {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(tree, ro, "", unix.MS_BIND, ""); err != nil {
			t.Skipf("bind mounts not permitted here (not root, or no CAP_SYS_ADMIN): %v", err)
		}
		t.Cleanup(func() { unix.Unmount(ro, unix.MNT_DETACH) })
		if err := unix.Mount("", ro, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			t.Skipf("cannot make the bind mount read-only: %v", err)
		}
		if err := os.WriteFile(filepath.Join(ro, "probe"), nil, 0o644); err == nil {
			t.Fatal("the read-only mount is writable")
		}
		if got := scanOf(ro, "ro.ddts"); !reflect.DeepEqual(got, rw) {
			t.Errorf("through the read-only mount: %+v\nread-write: %+v", got, rw)
		}
		check("scan of the read-only mount")
	})
}
