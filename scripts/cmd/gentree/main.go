// Command gentree writes a tree of many small files, for the benchmarks of
// scans whose cost is the number of files rather than their bytes
// (scripts/bench-files.sh):
//
//	go run ./internal/benchdata/gentree -o DIR -files 300000 [-unique N] [-per-dir 1000] [-top 100]
//
// The files are spread over -top directories, each holding subdirectories
// of -per-dir files; each file holds 1 to 512 bytes, drawn from -unique
// contents (default: about one in four files repeats a content; contents
// shorter than 8 bytes are fewer), so
// that the table stays much smaller than the number of files. The output
// is the same for the same flags. DIR must be missing or empty.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/ddtsim/ddtsim/internal/testutil/benchdata"
)

func main() {
	out := flag.String("o", "", "output directory (must be missing or empty)")
	files := flag.Int("files", 300000, "number of files")
	unique := flag.Int("unique", 0, "distinct contents (0: three quarters of -files)")
	perDir := flag.Int("per-dir", 1000, "files per leaf directory")
	top := flag.Int("top", 100, "top-level directories (the groups of --by dir)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 || *files <= 0 || *perDir <= 0 || *top <= 0 {
		fmt.Fprintln(os.Stderr, "usage: gentree -o DIR -files N [-unique N] [-per-dir N] [-top N]")
		os.Exit(2)
	}
	if *unique <= 0 {
		*unique = max(1, *files/4*3)
	}
	if names, err := os.ReadDir(*out); err == nil && len(names) > 0 {
		fmt.Fprintf(os.Stderr, "gentree: %s is not empty; refusing to write into it\n", *out)
		os.Exit(1)
	}
	leaves := (*files + *perDir - 1) / *perDir
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	next := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 512)
			for leaf := range next {
				dir := filepath.Join(*out, fmt.Sprintf("t%03d", leaf%*top), fmt.Sprintf("d%06d", leaf))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					errs <- err
					return
				}
				for i := leaf * *perDir; i < min((leaf+1)**perDir, *files); i++ {
					b := content(buf, uint64(benchdata.SplitMix(uint64(i))%uint64(*unique)))
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%08d", i)), b, 0o644); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	go func() {
		defer close(next)
		for leaf := 0; leaf < leaves; leaf++ {
			select {
			case next <- leaf:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	select {
	case err := <-errs:
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	default:
	}
}

// content fills buf with content number c: 1 to 512 bytes, half text-like
// (compressible), half random.
func content(buf []byte, c uint64) []byte {
	x := benchdata.SplitMix(c + 1)
	n := 1 + int(x%512)
	b := buf[:n]
	if x>>32&1 == 0 {
		for i := range b {
			b[i] = "abcdefgh ijklmnop\n"[int(benchdata.SplitMix(c*7+uint64(i/16))%18)]
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], c) // distinct, but for the shortest
		copy(b, w[:])
		return b
	}
	for i := 0; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], benchdata.SplitMix(c<<20+uint64(i)))
		copy(b[i:], w[:])
	}
	return b
}
