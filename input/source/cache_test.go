//go:build linux

package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// coldFile writes size random bytes (seed) to name in dir and drops them
// from the page cache; it skips the test where that cannot be done.
func coldFile(t *testing.T, dir, name string, seed int64, size int) (string, []byte) {
	t.Helper()
	testkit.NeedDroppableCache(t, dir)
	path := filepath.Join(dir, name)
	data := randBytes(seed, size)
	writeFile(t, path, data)
	testkit.Evict(t, path)
	return path, data
}

// walkFiles walks w and returns the Files it yielded, open.
func walkFiles(t *testing.T, w *Walker) []*File {
	t.Helper()
	var files []*File
	w.Walk(context.Background(), func(f *File) { files = append(files, f) }, func(p string, err error) { t.Errorf("%s: %v", p, err) })
	return files
}

// readChunks reads f as a scan does: records of rec bytes, in chunks of
// chunk bytes taken by workers goroutines at once; it checks the bytes
// against want.
func readChunks(t *testing.T, f *File, want []byte, rec, chunk, workers int) {
	t.Helper()
	next := make(chan int)
	go func() {
		for off := 0; off < len(want); off += chunk {
			next <- off
		}
		close(next)
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, rec)
			for c := range next {
				for off := c; off < min(c+chunk, len(want)); off += rec {
					n, err := f.ReadAt(buf[:min(rec, len(want)-off)], int64(off))
					if err != nil && err != io.EOF || !bytes.Equal(buf[:n], want[off:off+n]) {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("read at %d: %d bytes, %v", off, n, err))
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, b := range bad {
		t.Error(b)
	}
}

// pages counts the true entries of r.
func pages(r []bool) int {
	n := 0
	for _, c := range r {
		if c {
			n++
		}
	}
	return n
}

// By default, what a walk's File reads of a large file is dropped from the
// page cache: while it is read (every few MiB), and all of it at Close;
// with KeepCache it stays. The reads come from several goroutines at
// different offsets, as a scan's workers read chunks.
func TestDropsWhatItReads(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepCache=%v", keep), func(t *testing.T) {
			dir := t.TempDir()
			const size = 48<<20 + 12345 // a partial last page
			path, data := coldFile(t, dir, "big", 1, size)
			files := walkFiles(t, &Walker{Paths: []string{path}, KeepCache: keep})
			if len(files) != 1 {
				t.Fatalf("%d files yielded", len(files))
			}
			readChunks(t, files[0], data, 128<<10, 8<<20, 3)
			total := len(testkit.Resident(t, path))
			during := testkit.ResidentPages(t, path)
			files[0].Close()
			after := testkit.ResidentPages(t, path)
			t.Logf("%d pages: %d cached once read, %d after Close", total, during, after)
			if keep {
				// Pages may be reclaimed, but not most of them.
				if after < total/2 {
					t.Errorf("KeepCache: %d of %d pages cached after Close; want them kept", after, total)
				}
				return
			}
			if during > total/2 {
				t.Errorf("%d of %d pages cached once read, before Close: the ranges read were not dropped as reading went", during, total)
			}
			if after != 0 {
				t.Errorf("%d of %d pages cached after Close; want none", after, total)
			}
		})
	}
}

// The pages of a file that were cached before the walk opened it stay
// cached, those its reading brought in are dropped; with cachestat (one
// call answers whether a file is cached), and as on kernels without it
// (mincore alone).
func TestKeepsWhatWasCached(t *testing.T) {
	for _, noCachestat := range []bool{false, true} {
		t.Run(fmt.Sprintf("noCachestat=%v", noCachestat), func(t *testing.T) {
			dir := t.TempDir()
			const size = 32 << 20
			path, data := coldFile(t, dir, "big", 2, size)
			// Another process's working set: a few ranges, read as
			// it reads them (readahead and all).
			g, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 1<<20)
			for _, off := range []int64{0, 5<<20 + 4096, 20 << 20, size - 1000} {
				g.ReadAt(buf[:1000], off)
			}
			g.ReadAt(buf, 12<<20)
			g.Close()
			before := testkit.Resident(t, path)
			if pages(before) == 0 || pages(before) == len(before) {
				t.Fatalf("%d of %d pages cached before the walk: want some", pages(before), len(before))
			}
			var mu sync.Mutex
			var dropped []Extent
			faults := &Faults{NoCachestat: noCachestat, Fadvise: func(fd, advice int, off, n uint64) {
				if advice == unix.FADV_DONTNEED {
					mu.Lock()
					dropped = append(dropped, Extent{Off: off, End: off + n})
					mu.Unlock()
				}
			}}

			files := walkFiles(t, &Walker{Paths: []string{path}, Faults: faults})
			readChunks(t, files[0], data, 128<<10, 8<<20, 2)
			files[0].Close()
			after := testkit.Resident(t, path)
			// Never asked to drop a page cached before (whatever the
			// kernel's own reclaim does meanwhile)...
			for _, d := range dropped {
				for p := d.Off / pageSize; p < (d.End+pageSize-1)/pageSize && int(p) < len(before); p++ {
					if before[p] {
						t.Fatalf("page %d, cached before the walk, dropped (DONTNEED [%d, %d))", p, d.Off, d.End)
					}
				}
			}
			// ...and what it read and was not cached is gone.
			for p := range after {
				if after[p] && !before[p] {
					t.Errorf("page %d cached after the walk, not before", p)
				}
			}
			t.Logf("%d pages cached before, %d after; %d DONTNEED calls", pages(before), pages(after), len(dropped))
			if len(dropped) == 0 {
				t.Error("nothing dropped")
			}
		})
	}
}

// A file cached whole when opened is left alone: no DONTNEED. So is a file
// under cacheMin, cached or not.
func TestLeavesCachedAndSmallFiles(t *testing.T) {
	dir := t.TempDir()
	hot, hotData := coldFile(t, dir, "hot", 3, 4<<20)
	if _, err := os.ReadFile(hot); err != nil {
		t.Fatal(err)
	}
	if n, all := testkit.ResidentPages(t, hot), len(testkit.Resident(t, hot)); n != all {
		t.Skipf("%d of %d pages cached once read: the kernel reclaims them already", n, all)
	}
	small, smallData := coldFile(t, dir, "small", 4, cacheMin-1)
	var calls, sequential int
	faults := &Faults{Fadvise: func(fd, advice int, off, n uint64) {
		switch advice {
		case unix.FADV_DONTNEED:
			calls++
		case unix.FADV_SEQUENTIAL:
			sequential++ // the seam is reached: the hot file is over dropMin
		}
	}}
	for _, c := range []struct {
		path string
		data []byte
	}{{hot, hotData}, {small, smallData}} {
		files := walkFiles(t, &Walker{Paths: []string{c.path}, Faults: faults})
		readChunks(t, files[0], c.data, 128<<10, 8<<20, 1)
		files[0].Close()
	}
	if calls != 0 || sequential != 1 {
		t.Errorf("%d DONTNEED calls, %d SEQUENTIAL; want none, and one (the hot file's)", calls, sequential)
	}
	if n := testkit.ResidentPages(t, small); n == 0 {
		t.Errorf("the small file's pages were dropped")
	}
}

// Files of the walk open at once share what was cached before the first
// of them was opened: a hard link's second name (CountLinks), opened while
// the first is read, does not take the pages the first brought in for
// pages the host had cached, and is dropped too.
func TestSharedResidency(t *testing.T) {
	dir := t.TempDir()
	const size = 4 << 20
	a, data := coldFile(t, dir, "a", 5, size)
	b := filepath.Join(dir, "b")
	if err := os.Link(a, b); err != nil {
		t.Skip(err)
	}
	var first *File
	var second *File
	w := &Walker{Paths: []string{a, b}, CountLinks: true}
	w.Walk(context.Background(), func(f *File) {
		if first == nil {
			first = f
			readChunks(t, f, data, 128<<10, 8<<20, 1) // cached now, by us
			return
		}
		second = f
	}, func(p string, err error) { t.Errorf("%s: %v", p, err) })
	if second == nil {
		t.Fatal("the second name was not yielded")
	}
	first.Close()
	readChunks(t, second, data, 128<<10, 8<<20, 1)
	second.Close()
	if n := testkit.ResidentPages(t, a); n != 0 {
		t.Errorf("%d pages cached after both names were read and closed; want none", n)
	}
	if len(residencies.m) != 0 {
		t.Errorf("residencies still held: %v", residencies.m)
	}
}

// A guest's disk is read through its image file at offsets the File does
// not see: the image file is dropped at Close (and every guestDropEvery
// bytes), but for what was cached before.
func TestDropsGuestImage(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepCache=%v", keep), func(t *testing.T) {
			dir := t.TempDir()
			path, data := coldFile(t, dir, "disk.img", 6, 6<<20)
			w := &Walker{Paths: []string{path}, KeepCache: keep,
				Guest: func(f *os.File, path string) (vdisk.Disk, error) { return vdisk.Raw(f) }}
			files := walkFiles(t, w)
			if len(files) != 1 {
				t.Fatalf("%d files yielded", len(files))
			}
			readChunks(t, files[0], data, 128<<10, 8<<20, 2)
			files[0].Close()
			n, all := testkit.ResidentPages(t, path), len(testkit.Resident(t, path))
			switch {
			case keep && n < all/2:
				t.Errorf("KeepCache: %d of %d pages of the image cached after Close; want them kept", n, all)
			case !keep && n != 0:
				t.Errorf("%d of %d pages of the image cached after Close; want none", n, all)
			}
			if len(residencies.m) != 0 {
				t.Errorf("residencies still held: %v", residencies.m)
			}
		})
	}
}

// The ranges dropped while a file is read: those read, after a readahead
// window read before them (or from the file's start), each once; the
// holes of a sparse file count as read.
func TestDroppable(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, c := range []struct {
		name  string
		size  uint64
		data  []Extent // nil: all data
		reads []Extent // in order
		want  []Extent // dropped by the last drop, after those before
	}{
		{"from the start", 32 * mib, nil, []Extent{x(0, 5*mib)}, []Extent{x(0, 5*mib)}},
		{"a chunk waits for the one before", 32 * mib, nil, []Extent{x(8*mib, 12*mib)}, nil},
		{"until it is read", 32 * mib, nil, []Extent{x(8*mib, 12*mib), x(0, 8*mib)}, []Extent{x(0, 12*mib)}},
		{"past the window", 64 * mib, nil, []Extent{x(8*mib, 24*mib)}, []Extent{x(12*mib, 24*mib)}},
		{"each once", 64 * mib, nil, []Extent{x(0, 4*mib), x(4*mib, 6*mib)}, []Extent{x(4*mib, 6*mib)}},
		{"partial page waits", 32 * mib, nil, []Extent{x(0, 100)}, nil},
		{"the file's end", 1*mib + 100, nil, []Extent{x(0, 1*mib+100)}, []Extent{x(0, 1*mib+100)}},
		{"a hole counts as read", 64 * mib, []Extent{x(0, 4*mib), x(40*mib, 64*mib)}, []Extent{x(40*mib, 48*mib)}, []Extent{x(8*mib, 48*mib)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := &fileCache{size: c.size, lag: 4 * mib}
			fc.holes(c.data)
			var got []Extent
			for _, r := range c.reads {
				fc.got = insertRange(fc.got, r.Off, r.End)
				got = fc.droppable()
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("dropped %v; want %v", got, c.want)
			}
		})
	}
}

// insertRange merges what touches; subtract cuts out.
func TestRanges(t *testing.T) {
	t.Parallel()
	var rs []Extent
	for _, r := range []Extent{x(10, 20), x(30, 40), x(50, 60), x(20, 25), x(0, 5), x(28, 52)} {
		rs = insertRange(rs, r.Off, r.End)
	}
	if want := []Extent{x(0, 5), x(10, 25), x(28, 60)}; fmt.Sprint(rs) != fmt.Sprint(want) {
		t.Errorf("insertRange: %v; want %v", rs, want)
	}
	if got, want := subtract(nil, 3, 70, rs), []Extent{x(5, 10), x(25, 28), x(60, 70)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subtract: %v; want %v", got, want)
	}
	if got := subtract(nil, 12, 24, rs); got != nil {
		t.Errorf("subtract inside: %v", got)
	}
}

// x is the extent [off, end).
func x(off, end uint64) Extent { return Extent{Off: off, End: end} }
