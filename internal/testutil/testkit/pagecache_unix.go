//go:build linux || freebsd

package testkit

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The page cache of test files: what of a file it holds (mincore(2)) and
// how to empty it of one file (posix_fadvise DONTNEED), never of the whole
// host. Linux and FreeBSD only: elsewhere (pagecache_other.go) the tests
// that need them are skipped.

// Evict drops the cached pages of the file at path, after writing back
// its dirty ones, and fails the test unless none is left. See
// NeedDroppableCache to skip where that cannot be done.
func Evict(t testing.TB, path string) {
	t.Helper()
	if n := evict(t, path); n > 0 {
		t.Fatalf("%s: %d pages still cached after POSIX_FADV_DONTNEED", path, n)
	}
}

func evict(t testing.TB, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range Resident(t, path) {
		if c {
			n++
		}
	}
	return n
}

// NeedDroppableCache skips the test unless the page cache of files in
// dir can be emptied file by file (it cannot on tmpfs, whose pages are
// the files).
func NeedDroppableCache(t testing.TB, dir string) {
	t.Helper()
	path := filepath.Join(dir, ".droppable")
	if err := os.WriteFile(path, make([]byte, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	if n := evict(t, path); n > 0 {
		t.Skipf("the page cache of %s cannot be dropped file by file (%d pages stay; tmpfs?)", dir, n)
	}
}

// Resident reports, page by page, whether the page cache holds the file
// at path now.
func Resident(t testing.TB, path string) []bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 {
		return nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	ps := os.Getpagesize()
	vec := make([]byte, (len(m)+ps-1)/ps)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore %s: %v", path, e)
	}
	res := make([]bool, len(vec))
	for i, v := range vec {
		res[i] = v&1 != 0
	}
	return res
}

// ResidentPages is how many pages of the file at path the page cache
// holds now.
func ResidentPages(t testing.TB, path string) int {
	t.Helper()
	n := 0
	for _, c := range Resident(t, path) {
		if c {
			n++
		}
	}
	return n
}
