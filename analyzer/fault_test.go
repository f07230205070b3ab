package analyzer

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testkit"
	"github.com/ddtsim/ddtsim/internal/testseam"
	"github.com/ddtsim/ddtsim/zio"
)

// Faults injected through the source's test seam (testseam.Read,
// ReadFault): each test compares the result with that of a clean scan of
// the same files (or of the files the faulty scan could read), never with
// figures written down by hand.

const rec = 128 << 10 // testkit.Policy's recordsize

// faultTree writes, below dir, files of every kind a scan meets: a file of
// two chunks (81 records, the last short, some repeated), a copy of part
// of it, text, a sparse file, zeros written as data, a file smaller than a
// record, and an empty one.
func faultTree(t *testing.T, dir string) {
	t.Helper()
	big := append(testkit.Rand(21, 60*rec), testkit.Rand(21, 20*rec)...) // records 60-79 repeat 0-19
	big = append(big, testkit.Rand(22, 3000)...)
	testkit.Write(t, filepath.Join(dir, "big"), big)
	testkit.Write(t, filepath.Join(dir, "d/copy"), big[5*rec:9*rec+77])
	testkit.Write(t, filepath.Join(dir, "d/text"), bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 7000))
	writeSparse(t, filepath.Join(dir, "d/sparse"))
	testkit.Write(t, filepath.Join(dir, "zeros"), make([]byte, 2*rec))
	testkit.Write(t, filepath.Join(dir, "small"), testkit.Rand(23, 5000))
	testkit.Write(t, filepath.Join(dir, "empty"), nil)
}

// smallTree is faultTree without its large files: for reads of a byte at
// a time.
func smallTree(t *testing.T, dir string) {
	t.Helper()
	testkit.Write(t, filepath.Join(dir, "a"), append(testkit.Rand(31, rec), testkit.Rand(31, rec/2)...))
	testkit.Write(t, filepath.Join(dir, "text"), bytes.Repeat([]byte("jackdaws love my big sphinx of quartz\n"), 2000))
	writeSparse(t, filepath.Join(dir, "sparse"))
	testkit.Write(t, filepath.Join(dir, "small"), testkit.Rand(32, 5000))
}

// scanWarn scans paths with opts (Policy LZ4 when unset) and returns the
// result and the warnings, each "path: reason".
func scanWarn(t *testing.T, opts Options, paths ...string) (*Result, []string) {
	t.Helper()
	if opts.Policy == nil {
		opts.Policy = testkit.Policy(t, zio.LZ4)
	}
	var mu sync.Mutex
	var warns []string
	inner := opts.Warn
	opts.Warn = func(path string, err error) {
		mu.Lock()
		warns = append(warns, path+": "+err.Error())
		mu.Unlock()
		if inner != nil {
			inner(path, err)
		}
	}
	res, err := Scan(context.Background(), paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(warns)
	return res, warns
}

// sameResult reports where got differs from want: the histogram (the
// table's every figure) and every counter.
func sameResult(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if *got.Histogram != *want.Histogram {
		t.Errorf("%s: histogram\n got %+v\nwant %+v", what, got.Histogram.Total(), want.Histogram.Total())
	}
	if got.Counters != want.Counters {
		t.Errorf("%s: counters\n got %+v\nwant %+v", what, got.Counters, want.Counters)
	}
}

// Reads that return fewer bytes than asked with no error (every read
// half of what it asked, or a single byte), as a network file system may:
// the scan reads the rest and ends exactly as a clean scan, without a
// warning, whatever the number of workers.
func TestShortReads(t *testing.T) {
	for _, c := range []struct {
		name  string
		tree  func(*testing.T, string)
		short func(n int) int
		jobs  int
	}{
		{"half", faultTree, func(n int) int { return max(n/2, 1) }, 3},
		{"half-1job", faultTree, func(n int) int { return max(n/2, 1) }, 1},
		{"one byte", smallTree, func(int) int { return 1 }, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.tree(t, dir)
			for _, comp := range []zio.Compression{zio.LZ4, zio.Off} {
				p := testkit.Policy(t, comp)
				want, warns := scanWarn(t, Options{Policy: p, Jobs: c.jobs}, dir)
				if len(warns) != 0 {
					t.Fatal(warns)
				}
				var mu sync.Mutex
				short := 0
				testseam.Read = func(path string, off uint64, n int) testseam.Fault {
					mu.Lock()
					short++
					mu.Unlock()
					return testseam.Fault{Short: c.short(n)}
				}
				got, warns := scanWarn(t, Options{Policy: p, Jobs: c.jobs}, dir)
				testseam.Read = nil
				if short == 0 {
					t.Fatal("no read went through the seam")
				}
				if len(warns) != 0 {
					t.Errorf("compression %v: warnings %q", comp, warns)
				}
				sameResult(t, fmt.Sprintf("compression %v, short reads", comp), got, want)
			}
		})
	}
}
