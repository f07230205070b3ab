//go:build linux || freebsd

// Command pagecache evicts files from the page cache, or says how much of
// them it holds, for scripts/bench-cache.sh's cold reads without dropping
// the whole host's cache (echo 3 > /proc/sys/vm/drop_caches):
//
//	go run ./internal/benchdata/pagecache evict PATH...
//	go run ./internal/benchdata/pagecache resident PATH...
//
// evict asks the kernel to drop the clean cached pages of every regular
// file below the paths (posix_fadvise POSIX_FADV_DONTNEED, after fsync so
// that none is dirty); resident prints the bytes of them the page cache
// holds (mincore(2): whole pages, so up to a page a file more than their
// bytes), then the sum of their sizes.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 || os.Args[1] != "evict" && os.Args[1] != "resident" {
		fmt.Fprintln(os.Stderr, "usage: pagecache evict|resident PATH...")
		os.Exit(2)
	}
	var cached, size uint64
	for _, root := range os.Args[2:] {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			c, s, err := visit(p, os.Args[1] == "evict")
			cached += c
			size += s
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "pagecache:", err)
			os.Exit(1)
		}
	}
	if os.Args[1] == "resident" {
		fmt.Println(cached, size)
	}
}

// visit evicts the file at p (evict), or returns its cached bytes and its
// size.
func visit(p string, evict bool) (cached, size uint64, err error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fd := int(f.Fd())
	if evict {
		if err := unix.Fsync(fd); err != nil {
			return 0, 0, fmt.Errorf("%s: fsync: %w", p, err)
		}
		if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
			return 0, 0, fmt.Errorf("%s: fadvise: %w", p, err)
		}
		return 0, 0, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, 0, err
	}
	if st.Size == 0 {
		return 0, 0, nil
	}
	m, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: mmap: %w", p, err)
	}
	defer unix.Munmap(m)
	ps := os.Getpagesize()
	vec := make([]byte, (len(m)+ps-1)/ps)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, 0, fmt.Errorf("%s: mincore: %w", p, e)
	}
	for _, v := range vec {
		if v&1 != 0 {
			cached += uint64(ps)
		}
	}
	return cached, uint64(st.Size), nil
}
