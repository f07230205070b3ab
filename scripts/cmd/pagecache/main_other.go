//go:build !linux && !freebsd

package main

import (
	"fmt"
	"os"
	"runtime"
)

// main: the page cache cannot be emptied of one file here (no
// posix_fadvise DONTNEED): the benchmarks' cold reads run on Linux and
// FreeBSD only.
func main() {
	fmt.Fprintf(os.Stderr, "pagecache: not on %s (no posix_fadvise DONTNEED)\n", runtime.GOOS)
	os.Exit(2)
}
