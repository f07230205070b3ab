// Command gen writes the synthetic benchmark data set of package benchdata:
//
//	go run ./internal/benchdata/gen -o DIR [-size 256M]
//
// DIR must be missing or empty. The size accepts a K, M, G or T suffix
// (powers of 1024; KiB, MB and the like are read the same way).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/internal/testutil/benchdata"
)

func main() {
	out := flag.String("o", "", "output directory (must be missing or empty)")
	sizeFlag := flag.String("size", "256M", "approximate total size of the data set (e.g. 64M, 1G)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen -o DIR [-size SIZE]")
		os.Exit(2)
	}
	size, err := parseSize(*sizeFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen: -size:", err)
		os.Exit(2)
	}
	if err := checkEmpty(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := benchdata.Generate(*out, size); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// parseSize parses a byte count with an optional K, M, G or T suffix.
func parseSize(v string) (int64, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "IB"), "B")
	shift := 0
	if s != "" {
		if i := strings.IndexByte("KMGT", s[len(s)-1]); i >= 0 {
			shift = 10 * (i + 1)
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("invalid size %q", v)
	}
	return n << shift, nil
}

// checkEmpty returns nil if dir does not exist or is an empty directory.
func checkEmpty(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return fmt.Errorf("%s is not empty; refusing to write into it", dir)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}
