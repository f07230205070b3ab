package analyzer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/sourcetest"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Faults injected through the source's test seams (source.Faults: Read,
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
func scanWarn(t *testing.T, opts Options, paths ...string) (*Analysis, []string) {
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
	res, err := Run(context.Background(), paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(warns)
	return res, warns
}

// sameResult reports where got differs from want: the histogram (the
// table's every figure) and every counter.
func sameResult(t *testing.T, what string, got, want *Analysis) {
	t.Helper()
	if *got.Histogram != *want.Histogram {
		t.Errorf("%s: histogram\n got %+v\nwant %+v", what, got.Histogram.Total(), want.Histogram.Total())
	}
	if !reflect.DeepEqual(got.Counters, want.Counters) {
		t.Errorf("%s: counters\n got %+v\nwant %+v", what, got.Counters, want.Counters)
	}
}

// blocks collects the records each file's OnBlock reported, to tell a
// record counted twice.
type blocks struct {
	mu   sync.Mutex
	seen map[string][]uint64
}

func (b *blocks) on(e BlockEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == nil {
		b.seen = map[string][]uint64{}
	}
	for i := e.BlkID; i < e.BlkID+e.Count; i++ {
		b.seen[e.Path] = append(b.seen[e.Path], i)
	}
}

// of returns the records reported for path, sorted, with those reported
// more than once.
func (b *blocks) of(path string) (ids, twice []uint64) {
	ids = slices.Clone(b.seen[path])
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			twice = append(twice, ids[i])
		}
	}
	return slices.Compact(ids), twice
}

func spanIDs(spans ...Span) []uint64 {
	var ids []uint64
	for _, s := range spans {
		for i := s.First; i < s.End; i++ {
			ids = append(ids, i)
		}
	}
	return ids
}

// An EIO in the middle of a file of five chunks read by four workers at
// once: the warning names the file and the offset; each chunk keeps the
// records read before the error (those whose read had begun when it came
// are finished), once each, and none after; the chunk not started is left.
// The result is exactly a clean scan's of the same tree with that file
// made of just those records, but for the file's size and the error.
func TestReadErrorInSplitFile(t *testing.T) {
	t.Parallel()
	const bad = 100 // the record whose read fails, in chunk 1 (64-127)
	// The records the workers on chunks 0, 2 and 3 are reading when the
	// error comes: they wait for it.
	held := []uint64{10, 140, 200}
	kept := []Span{{0, 11}, {64, bad}, {128, 141}, {192, 201}}

	dir := t.TempDir()
	faultTree(t, filepath.Join(dir, "tree"))
	f := filepath.Join(dir, "tree", "a-bad") // first in the walk: its chunks go to the four workers
	data := testkit.Rand(41, 320*rec)
	testkit.Write(t, f, data)
	// The tree the faulty scan should amount to: a-bad holds the records
	// kept only.
	want := filepath.Join(dir, "want")
	faultTree(t, want)
	var part []byte
	for _, s := range kept {
		part = append(part, data[s.First*rec:s.End*rec]...)
	}
	testkit.Write(t, filepath.Join(want, "a-bad"), part)
	p := testkit.Policy(t, zio.LZ4)
	wantRes, warns := scanWarn(t, Options{Policy: p, Jobs: 4}, want)
	if len(warns) != 0 {
		t.Fatal(warns)
	}
	clean, _ := scanWarn(t, Options{Policy: p, Jobs: 4}, filepath.Join(dir, "tree"))

	var arrived sync.WaitGroup
	arrived.Add(len(held))
	released := make(chan struct{})
	faults := &source.Faults{Read: func(path string, off uint64, n int) source.Fault {
		if path != f {
			return source.Fault{}
		}
		switch r := off / rec; {
		case slices.Contains(held, r):
			arrived.Done()
			<-released
		case r == bad:
			arrived.Wait()
			return source.Fault{Err: &os.PathError{Op: "read", Path: path, Err: syscall.EIO}}
		}
		return source.Fault{}
	}}
	prog := newProgress()
	var bl blocks
	var once sync.Once
	res, warns := scanWarn(t, Options{Policy: p, Jobs: 4, Done: prog.done, OnBlock: bl.on, Faults: faults,
		Warn: func(path string, err error) {
			if path == f {
				once.Do(func() { close(released) }) // the error is known: the held reads go on
			}
		}}, filepath.Join(dir, "tree"))

	wantWarn := fmt.Sprintf("%s: read at offset %d: read %s: input/output error", f, bad*rec, f)
	if len(warns) != 1 || warns[0] != wantWarn {
		t.Errorf("warnings %q, want [%q]", warns, wantWarn)
	}
	ids, twice := bl.of(f)
	if !slices.Equal(ids, spanIDs(kept...)) || len(twice) != 0 {
		t.Errorf("records of %s accounted %v (twice: %v), want %v", f, ids, twice, kept)
	}
	if spans, _ := prog.skip(t)(prog.files[f].info); !slices.Equal(spans, kept) {
		t.Errorf("done %v, want %v", spans, kept)
	}
	w := *wantRes
	w.Counters.LogicalBytes, w.Counters.ShareBytes, w.Counters.Errors = clean.Counters.LogicalBytes, clean.Counters.ShareBytes, 1
	sameResult(t, "with the error", res, &w)
}

// Reads that return fewer bytes than asked with no error (every read
// half of what it asked, or a single byte), as a network file system may:
// the scan reads the rest and ends exactly as a clean scan, without a
// warning, whatever the number of workers.
func TestShortReads(t *testing.T) {
	t.Parallel()
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
				faults, reads := sourcetest.ShortReads(c.short)
				got, warns := scanWarn(t, Options{Policy: p, Jobs: c.jobs, Faults: faults}, dir)
				if reads() == 0 {
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

// A file replaced (another file renamed over its path) while it is read,
// by several workers on its chunks: the open descriptor keeps reading the
// file opened, whose content is read in full; that file did not change, so
// no warning: the result is exactly a clean scan's of the tree as it was
// before the rename. The file renamed in is not read.
func TestFileReplacedWhileRead(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("windows: a file open for reading cannot be replaced by a rename (access denied)")
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	faultTree(t, tree)
	f := filepath.Join(tree, "a-log")
	testkit.Write(t, f, testkit.Rand(51, 200*rec+11)) // 201 records, 4 chunks
	before := filepath.Join(dir, "before")
	faultTree(t, before)
	testkit.Write(t, filepath.Join(before, "a-log"), testkit.Rand(51, 200*rec+11))
	p := testkit.Policy(t, zio.LZ4)
	want, _ := scanWarn(t, Options{Policy: p, Jobs: 4}, before)
	repl := filepath.Join(dir, "new")
	testkit.Write(t, repl, testkit.Rand(52, 30*rec)) // other bytes, another size
	var once sync.Once
	faults := &source.Faults{Read: func(path string, off uint64, n int) source.Fault {
		if path == f && off == 70*rec {
			once.Do(func() {
				if err := os.Rename(repl, f); err != nil {
					t.Error(err)
				}
			})
		}
		return source.Fault{}
	}}
	var bl blocks
	got, warns := scanWarn(t, Options{Policy: p, Jobs: 4, OnBlock: bl.on, Faults: faults}, tree)
	if _, err := os.Stat(repl); !os.IsNotExist(err) {
		t.Fatalf("the rename did not happen: %v", err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %q", warns)
	}
	if ids, twice := bl.of(f); len(ids) != 201 || len(twice) != 0 {
		t.Errorf("%d records of %s accounted (twice: %v), want 201 once", len(ids), f, twice)
	}
	sameResult(t, "replaced while read", got, want)
}

// Reads of one file slowed down (50 ms each) while four workers share its
// chunks and the other files: the scan waits for them and ends exactly as
// a clean scan. Nothing here measures time.
func TestSlowReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	faultTree(t, dir)
	p := testkit.Policy(t, zio.LZ4)
	p.RecordSize = 1 << 20 // big: 11 records of 1 MiB, two chunks, 11 slow reads
	slow := filepath.Join(dir, "big")
	want, _ := scanWarn(t, Options{Policy: p, Jobs: 4}, dir)
	var mu sync.Mutex
	slowed := 0
	faults := &source.Faults{Read: func(path string, off uint64, n int) source.Fault {
		if path != slow {
			return source.Fault{}
		}
		mu.Lock()
		slowed++
		mu.Unlock()
		return source.Fault{Delay: 50 * time.Millisecond}
	}}
	prog := newProgress()
	var bl blocks
	got, warns := scanWarn(t, Options{Policy: p, Jobs: 4, Done: prog.done, OnBlock: bl.on, Faults: faults}, dir)
	if len(warns) != 0 {
		t.Errorf("warnings %q", warns)
	}
	if ids, twice := bl.of(slow); slowed != len(ids) || len(twice) != 0 {
		t.Errorf("%d slow reads, %d records of %s accounted (twice: %v)", slowed, len(ids), slow, twice)
	}
	if spans, _ := prog.skip(t)(prog.files[slow].info); len(spans) != 1 || spans[0].First != 0 || spans[0].End != prog.files[slow].info.Records {
		t.Errorf("done %v of %d records", spans, prog.files[slow].info.Records)
	}
	sameResult(t, "slow reads", got, want)
}

// A file truncated while it is read back past records already read (cut
// to 40 records and 5 bytes once all of its first 72 records are read;
// the read of record 72 finds nothing): the records read stay counted,
// once, those not read yet are left out, and the warning says that
// records past the new end were counted.
func TestFileTruncatedBehindTheReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "big")
	data := testkit.Rand(61, 320*rec)
	testkit.Write(t, f, data)
	want := filepath.Join(t.TempDir(), "big")
	testkit.Write(t, want, data[:72*rec])
	p := testkit.Policy(t, zio.LZ4)
	wantRes, _ := scanWarn(t, Options{Policy: p, Jobs: 4}, want)

	var first sync.WaitGroup // records 0-71 accounted
	first.Add(72)
	truncated := make(chan struct{})
	var cut sync.Once // once: the reads that find the file shorter probe records before them
	faults := &source.Faults{Read: func(path string, off uint64, n int) source.Fault {
		switch r := off / rec; {
		case r == 72:
			cut.Do(func() {
				first.Wait()
				if err := os.Truncate(path, 40*rec+5); err != nil {
					t.Error(err)
				}
				close(truncated)
			})
		case r > 72:
			<-truncated
		}
		return source.Fault{}
	}}
	prog := newProgress()
	var bl blocks
	res, warns := scanWarn(t, Options{Policy: p, Jobs: 4, Done: prog.done, Faults: faults, OnBlock: func(e BlockEvent) {
		bl.on(e)
		if e.BlkID < 72 {
			first.Done()
		}
	}}, f)
	wantWarn := f + ": shrank while it was read: records past its new end read before it shrank are counted"
	if len(warns) != 1 || !strings.HasPrefix(warns[0], wantWarn) {
		t.Errorf("warnings %q, want one saying %q", warns, wantWarn)
	}
	if ids, twice := bl.of(f); !slices.Equal(ids, spanIDs(Span{0, 72})) || len(twice) != 0 {
		t.Errorf("records accounted %v (twice: %v), want 0-71", ids, twice)
	}
	if spans, _ := prog.skip(t)(prog.files[f].info); !slices.Equal(spans, []Span{{0, 72}}) {
		t.Errorf("done %v", spans)
	}
	w := *wantRes
	w.Counters.LogicalBytes, w.Counters.ShareBytes, w.Counters.Changed = 320*rec, 320*rec, 1
	sameResult(t, "truncated", res, &w)
}
