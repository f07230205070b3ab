package source

import (
	"context"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source/internal/sys"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

func randBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// walked is what one walk yielded and warned about.
type walked struct {
	c     Counters
	files []*File // closed
	warns []string
}

// paths lists the paths of the files yielded, in order.
func (w walked) paths() []string {
	var p []string
	for _, f := range w.files {
		p = append(p, f.Path)
	}
	return p
}

func walkT(t *testing.T, w *Walker, paths ...string) walked {
	t.Helper()
	w.Paths = paths
	var r walked
	var mu sync.Mutex
	r.c = w.Walk(context.Background(), func(f *File) {
		r.files = append(r.files, f)
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}, func(path string, err error) { mu.Lock(); r.warns = append(r.warns, path+": "+err.Error()); mu.Unlock() })
	return r
}

// Symlinks inside directories are not followed, FIFOs are skipped and
// counted, hard links count once, a missing path is reported and the walk
// goes on (was analyzer's TestWalkSpecialEntries).
func TestWalkSpecialEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a", "file"), randBytes(5, 300<<10))
	if err := os.Symlink(filepath.Join(dir, "a", "file"), filepath.Join(dir, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a", "file"), filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := testkit.Mkfifo(t, filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "empty"), nil)
	missing := filepath.Join(dir, "missing")
	r := walkT(t, &Walker{}, dir, missing)
	k := r.c
	if k.Files != 2 || k.Symlinks != 2 || k.Special != 1 || k.HardLinks != 1 || k.LogicalBytes != 300<<10 {
		t.Errorf("counters %+v; want 2 files (file, empty), 2 symlinks, 1 special, 1 hard link", k)
	}
	if len(r.warns) != 1 || !strings.Contains(r.warns[0], missing) {
		t.Errorf("warnings %q; want one naming %s", r.warns, missing)
	}
	want := []string{filepath.Join(dir, "a", "file"), filepath.Join(dir, "empty")}
	if got := r.paths(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("yielded %q, want %q", got, want)
	}
	for _, f := range r.files {
		if !f.Regular || f.Arg != 0 || f.Data != nil || f.Ino == 0 {
			t.Errorf("%+v", f)
		}
	}
}

// --follow: a symlink loop ends; --count-links yields each name; a path
// named twice (or inside another) is yielded once (was analyzer's).
func TestFollowLinksAndRepeats(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("windows: symbolic links need a privilege there, and Wine 8's cannot be followed")
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	writeFile(t, filepath.Join(sub, "f"), randBytes(3, 128<<10))
	if err := os.Symlink(dir, filepath.Join(sub, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(sub, "f"), filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	if r := walkT(t, &Walker{Follow: true}, dir); r.c.Files != 1 || r.c.RepeatedDirs != 1 || len(r.files) != 1 {
		t.Errorf("follow: %+v; want 1 file, the loop skipped once", r.c)
	}
	if r := walkT(t, &Walker{}, dir, sub, filepath.Join(sub, "f")); r.c.Files != 1 || len(r.files) != 1 || r.c.Symlinks != 1 {
		t.Errorf("repeated paths: %+v; want the file once", r.c)
	}
	r := walkT(t, &Walker{CountLinks: true}, dir)
	if r.c.Files != 2 || len(r.files) != 2 || r.files[0].Ino != r.files[1].Ino {
		t.Errorf("count links: %+v; want 2 files, one inode", r.c)
	}
}

// Special files: FIFOs and sockets are skipped (and warned about when named
// explicitly, with a *SkippedError); a character device named explicitly
// too (was analyzer's).
func TestSpecialFilesNamedExplicitly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := testkit.Mkfifo(t, fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var errs []error
	c := (&Walker{Paths: []string{fifo, "/dev/null"}}).Walk(context.Background(), func(f *File) {
		f.Close()
		t.Errorf("%s yielded", f.Path)
	}, func(path string, err error) { errs = append(errs, err) })
	var se *SkippedError
	if c.Special != 2 || len(errs) != 2 || !errors.As(errs[0], &se) || se.Kind != "a FIFO" ||
		!strings.Contains(errs[1].Error(), "character device") {
		t.Errorf("counters %+v, warnings %q", c, errs)
	}
}

// Symlinks named as paths are followed (to a file and to a directory);
// a file named twice is yielded once and counted as repeated (was
// analyzer's TestSymlinkArgumentsAndRepeatedFile).
func TestSymlinkArgumentsAndRepeatedFile(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("windows: symbolic links need a privilege there, and Wine 8's cannot be followed")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	f := filepath.Join(real, "f")
	writeFile(t, f, randBytes(7, 200<<10))
	flink := filepath.Join(dir, "flink")
	dlink := filepath.Join(dir, "dlink")
	if err := os.Symlink(f, flink); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, dlink); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{flink, dlink} {
		r := walkT(t, &Walker{}, arg)
		if len(r.warns) != 0 || r.c.Files != 1 || len(r.files) != 1 || r.files[0].Size != 200<<10 {
			t.Errorf("%v: warnings %q, counters %+v; want the file yielded", arg, r.warns, r.c)
		}
	}
	r := walkT(t, &Walker{}, f, f, real)
	if c := r.c; c.Files != 1 || c.RepeatedFiles != 2 || c.HardLinks != 0 || len(r.files) != 1 || r.files[0].Arg != 0 {
		t.Errorf("repeated file: %+v", c)
	}
}

// A file that disappears between listing and opening: a warning, not
// counted (was analyzer's TestVanishedFile).
func TestVanishedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	writeFile(t, gone, randBytes(1, 1000))
	writeFile(t, filepath.Join(dir, "stays"), randBytes(2, 1000))
	faults := &Faults{BeforeOpen: func(path string) {
		if path == gone {
			os.Remove(path)
		}
	}}
	r := walkT(t, &Walker{Faults: faults}, dir)
	if len(r.warns) != 1 || !strings.Contains(r.warns[0], testkit.NotExistText(t)) || r.c.Files != 1 || len(r.files) != 1 {
		t.Errorf("warnings %q, counters %+v; want one ENOENT warning and 1 file", r.warns, r.c)
	}
}

// A sparse-looking file has its data extents mapped (SEEK_DATA); a dense
// one is all data (Data nil); an all-hole one has no extent.
func TestDataExtents(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("windows: a file written with gaps has holes only once marked sparse (FSCTL_SET_SPARSE)")
	}
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse")
	h, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(randBytes(1, 128<<10))
	h.WriteAt(randBytes(2, 128<<10), 1<<20)
	h.Truncate(4 << 20)
	h.Close()
	hole := filepath.Join(dir, "hole")
	if err := os.Truncate(hole, 0); err != nil {
		h, _ := os.Create(hole)
		h.Close()
	}
	os.Truncate(hole, 1<<20)
	writeFile(t, filepath.Join(dir, "dense"), randBytes(3, 100<<10))
	if st := testkit.Stat(t, sparse, false); st.Blocks*512 >= st.Size {
		t.Skip("file system does not keep holes")
	}
	r := walkT(t, &Walker{}, dir)
	byName := map[string]*File{}
	for _, f := range r.files {
		byName[filepath.Base(f.Path)] = f
	}
	if f := byName["dense"]; f == nil || f.LooksSparse || f.Data != nil || !f.HasData(0, 1) || f.NextData(5) != 5 {
		t.Errorf("dense: %+v", f)
	}
	if f := byName["hole"]; f == nil || !f.LooksSparse || f.Data == nil || len(f.Data) != 0 || f.HasData(0, 1<<20) || f.NextData(0) != 1<<20 {
		t.Errorf("hole: %+v", f)
	}
	f := byName["sparse"]
	if f == nil || !f.LooksSparse || len(f.Data) != 2 || f.Data[0].Off != 0 || f.Data[1].End != 1<<20+128<<10 {
		t.Fatalf("sparse: %+v", f)
	}
	if f.HasData(512<<10, 1<<20) || !f.HasData(512<<10, 1<<20+1) || f.NextData(200<<10) != f.Data[1].Off || f.NextData(2<<20) != 4<<20 {
		t.Errorf("sparse: HasData/NextData wrong for %+v", f.Data)
	}
}

// Changed reports a file whose size or mtime changed since it was opened,
// with ErrChanged; an unchanged file is not reported.
func TestChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "log")
	writeFile(t, p, randBytes(1, 1000))
	for _, change := range []bool{false, true} {
		var err error
		(&Walker{Paths: []string{p}}).Walk(context.Background(), func(f *File) {
			defer f.Close()
			if change {
				os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
			}
			err = f.Changed()
		}, nil)
		if change != errors.Is(err, ErrChanged) {
			t.Errorf("changed %v: %v", change, err)
		}
	}
}

// TestDTOfAndFileMode checks the type of every kind of st_mode, with
// permission bits set, as a DT_ constant and as an fs.FileMode.
func TestDTOfAndFileMode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode uint32
		dt   uint8
		fm   fs.FileMode
	}{
		{sys.S_IFREG, sys.DT_REG, 0},
		{sys.S_IFDIR, sys.DT_DIR, fs.ModeDir},
		{sys.S_IFLNK, sys.DT_LNK, fs.ModeSymlink},
		{sys.S_IFIFO, sys.DT_FIFO, fs.ModeNamedPipe},
		{sys.S_IFSOCK, sys.DT_SOCK, fs.ModeSocket},
		{sys.S_IFCHR, sys.DT_CHR, fs.ModeDevice | fs.ModeCharDevice},
		{sys.S_IFBLK, sys.DT_BLK, fs.ModeDevice},
	} {
		m := c.mode | 0o7777
		if got := dtOf(m); got != c.dt {
			t.Errorf("dtOf(%o) = %d, want %d", m, got, c.dt)
		}
		if got := fileMode(m); got != c.fm {
			t.Errorf("fileMode(%o) = %v, want %v", m, got, c.fm)
		}
	}
}
