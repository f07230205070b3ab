package ddt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// workload is a deterministic list of references with many duplicates
// spread over time (so that a key recurs after its shard was spilled), a
// few huge RefN counts and sizes that are not whole sectors.
func workload(seed uint64, nkeys, nops int) (keys []Key, ops []int, ns []uint64) {
	r := rand.New(rand.NewPCG(seed, 11))
	keys = make([]Key, nkeys)
	for i := range keys {
		keys[i] = randKey(r)
	}
	for i := 0; i < nops; i++ {
		var k int
		switch {
		case i < nkeys:
			k = i // every key at least once
		case r.IntN(4) == 0:
			k = r.IntN(10) // a few hot keys
		default:
			k = r.IntN(nkeys)
		}
		n := uint64(1)
		if r.IntN(5000) == 0 {
			n = 1 << 31
		}
		ops = append(ops, k)
		ns = append(ns, n)
	}
	r.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i]; ns[i], ns[j] = ns[j], ns[i] })
	return keys, ops, ns
}

// apply runs the references on tb from workers goroutines, computing each
// key's sizes when Ref says it is new, as the analyzer does.
func apply(tb *Table, keys []Key, ops []int, ns []uint64, workers int) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ops); i += workers {
				k := keys[ops[i]]
				l, p := sizesOf(k)
				if tb.RefN(k, l, ns[i]) {
					tb.Set(k, p)
				}
			}
		}()
	}
	wg.Wait()
}

type tableResult struct {
	h   *Histogram
	s   Summary
	all model
	n   int
}

func resultOf(t *testing.T, tb *Table) tableResult {
	t.Helper()
	h, s := tb.Summarize()
	r := tableResult{h: h, s: s, all: rangeAll(tb), n: tb.Len()}
	if err := tb.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}

func spillTable(t *testing.T, limit int64, warn func(error)) (*Table, string) {
	t.Helper()
	dir := t.TempDir()
	tb := NewTable(testDSize)
	if err := tb.Spill(SpillOptions{Limit: limit, Dir: dir, Warn: warn}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb, dir
}

func noWarn(t *testing.T) func(error) {
	return func(err error) { t.Errorf("warning: %v", err) }
}

// Spilled and in-memory tables give the same histogram, summary, entries
// and lookups, with few runs and with so many that they are merged in
// groups first.
func TestSpillIdentical(t *testing.T) {
	t.Parallel()
	keys, ops, ns := workload(1, 20000, 80000)
	mem := NewTable(testDSize)
	apply(mem, keys, ops, ns, 1)
	want := resultOf(t, mem)
	if want.n != len(keys) || mem.SpillRuns() != 0 {
		t.Fatalf("in memory: %d entries, %d runs", want.n, mem.SpillRuns())
	}
	for _, c := range []struct {
		limit   int64
		workers int
		minRuns int
	}{{256 << 10, 1, 2}, {256 << 10, 4, 2}, {4 << 10, 4, maxFanIn + 1}} {
		tb, dir := spillTable(t, c.limit, noWarn(t))
		apply(tb, keys, ops, ns, c.workers)
		runs := tb.SpillRuns()
		t.Logf("limit %d, %d workers: %d runs, peak %d bytes", c.limit, c.workers, runs, tb.PeakBytes())
		if runs < c.minRuns {
			t.Errorf("limit %d: %d runs, want at least %d", c.limit, runs, c.minRuns)
		}
		got := resultOf(t, tb)
		if !reflect.DeepEqual(got.h, want.h) || got.s != want.s || got.n != want.n {
			t.Errorf("limit %d, %d workers, %d runs: summary %+v, %d entries; want %+v, %d", c.limit, c.workers, runs, got.s, got.n, want.s, want.n)
		}
		if !reflect.DeepEqual(got.all, want.all) {
			t.Errorf("limit %d: Range differs (%d entries, want %d)", c.limit, len(got.all), len(want.all))
		}
		for _, k := range keys[:2000] {
			g, _ := tb.Lookup(k)
			w, _ := mem.Lookup(k)
			if g != w {
				t.Fatalf("limit %d: Lookup %+v, want %+v", c.limit, g, w)
			}
		}
		if c.limit >= 256<<10 && tb.PeakBytes() > 2*c.limit {
			t.Errorf("limit %d: peak %d bytes", c.limit, tb.PeakBytes())
		}
		if err := tb.Close(); err != nil {
			t.Error(err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("Close left %d files", len(left))
		}
	}
}

// An entry waiting for Set when its shard is spilled stays in memory, so
// that Set finds it.
func TestSpillKeepsPending(t *testing.T) {
	t.Parallel()
	tb, _ := spillTable(t, 1, noWarn(t))
	r := rand.New(rand.NewPCG(2, 3))
	p := randKey(r)
	if !tb.RefN(p, 1000, 5) { // odd LSIZE: side map too
		t.Fatal("not first")
	}
	for i := 0; i < 5000; i++ {
		k := randKey(r)
		tb.Ref(k, 4096)
		tb.Set(k, 4096)
	}
	if tb.SpillRuns() == 0 {
		t.Fatal("no spill")
	}
	if tb.Ref(p, 1000) {
		t.Error("pending key lost by spilling")
	}
	tb.Set(p, 700)
	if e, ok := tb.Lookup(p); !ok || e.Refcnt != 6 || e.LSize != 1000 || e.PSize != 700 {
		t.Errorf("pending key %+v", e)
	}
	_, s := tb.Summarize()
	if s.Entries != 5001 || s.Refs != 5006 {
		t.Errorf("summary %+v", s)
	}
}

// failAfter is a run file that fails with ENOSPC after its budget (shared
// by all runs) is spent, as a full disk does.
type failAfter struct {
	*os.File
	budget *int
}

func (f *failAfter) Write(b []byte) (int, error) {
	if len(b) > *f.budget {
		n, _ := f.File.Write(b[:*f.budget])
		*f.budget = 0
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	*f.budget -= len(b)
	return f.File.Write(b)
}

// osReason is the system's text for the error of try (a *os.PathError's),
// called with a new directory: how the system words a reason
// ("no such file or directory" on Unix, "The system cannot find the path
// specified." on Windows).
func osReason(t *testing.T, try func(dir string) error) string {
	t.Helper()
	var pe *os.PathError
	if err := try(t.TempDir()); !errors.As(err, &pe) {
		if err != nil {
			return err.Error()
		}
		return "" // only on a system without the case's cause (no /dev/full)
	}
	return pe.Err.Error()
}

// createIn makes the spill's first run file in dir as the table does.
func createIn(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "run-000001"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
	}
	return err
}

// writeTo writes a byte to the file at path.
func writeTo(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write([]byte{0})
	return err
}

// A full disk, a missing or unwritable directory: the warning names the
// directory and the reason, the table stays in memory from then on, and
// the result is the same as without spilling.
func TestSpillWriteErrors(t *testing.T) {
	t.Parallel()
	keys, ops, ns := workload(4, 5000, 20000)
	mem := NewTable(testDSize)
	apply(mem, keys, ops, ns, 1)
	want := resultOf(t, mem)
	for _, c := range []struct {
		name    string
		setup   func(tb *Table, dir string)
		reason  string
		minRuns int
	}{
		{"disk full mid-run", func(tb *Table, dir string) {
			budget := 40 << 10 // a few runs, then a failure inside one
			tb.spill.create = func(path string) (runFile, error) {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				return &failAfter{f, &budget}, err
			}
		}, "no space left on device", 1},
		{"/dev/full", func(tb *Table, dir string) {
			tb.spill.create = func(string) (runFile, error) { return os.OpenFile("/dev/full", os.O_WRONLY, 0) }
		}, osReason(t, func(string) error { return writeTo("/dev/full") }), 0},
		{"directory removed", func(tb *Table, dir string) {
			os.Remove(dir)
		}, osReason(t, func(dir string) error { return createIn(filepath.Join(dir, "gone")) }), 0},
		{"directory not writable", func(tb *Table, dir string) {
			os.Chmod(dir, 0o500)
		}, "permission denied", 0},
		{"a file in the way", func(tb *Table, dir string) {
			os.WriteFile(filepath.Join(dir, "run-000001"), nil, 0o600)
		}, osReason(t, func(dir string) error { createIn(dir); return createIn(dir) }), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat("/dev/full"); err != nil && c.name == "/dev/full" {
				t.Skip("no /dev/full")
			}
			if os.Geteuid() == 0 && c.name == "directory not writable" {
				t.Skip("root writes to read-only directories")
			}
			if runtime.GOOS == "windows" && c.name == "directory not writable" {
				t.Skip("windows: a folder's read-only attribute does not stop files being made in it")
			}
			var mu sync.Mutex
			var warns []error
			tb, dir := spillTable(t, 8<<10, func(err error) { mu.Lock(); warns = append(warns, err); mu.Unlock() })
			c.setup(tb, dir)
			apply(tb, keys, ops, ns, 2)
			if len(warns) != 1 {
				t.Fatalf("%d warnings, want 1: %v", len(warns), warns)
			}
			msg := warns[0].Error()
			if !strings.HasPrefix(msg, "writing spill run to "+dir+": "+c.reason+"; ") ||
				!strings.Contains(msg, "stays in memory") {
				t.Errorf("warning %q", msg)
			}
			var se *SpillError
			if !errors.As(warns[0], &se) {
				t.Errorf("warning is %T", warns[0])
			}
			t.Logf("%d runs; %v", tb.SpillRuns(), warns[0])
			if tb.SpillRuns() < c.minRuns {
				t.Errorf("%d runs, want at least %d", tb.SpillRuns(), c.minRuns)
			}
			got := resultOf(t, tb)
			if !reflect.DeepEqual(got.h, want.h) || got.s != want.s || !reflect.DeepEqual(got.all, want.all) {
				t.Errorf("result differs: %+v, want %+v", got.s, want.s)
			}
		})
	}
}

// A run that disappears before the merge makes the result incomplete,
// and Err says so.
func TestSpillRunLost(t *testing.T) {
	t.Parallel()
	keys, ops, ns := workload(5, 3000, 6000)
	tb, dir := spillTable(t, 8<<10, noWarn(t))
	apply(tb, keys, ops, ns, 1)
	if tb.SpillRuns() == 0 {
		t.Fatal("no spill")
	}
	if err := os.Remove(filepath.Join(dir, "run-000001")); err != nil {
		t.Fatal(err)
	}
	tb.Summarize()
	if err := tb.Err(); err == nil || !strings.Contains(err.Error(), "reading spill run") {
		t.Errorf("Err() = %v", err)
	}
}

func TestSpillOptions(t *testing.T) {
	t.Parallel()
	tb := NewTable(nil)
	if err := tb.Spill(SpillOptions{Limit: 1 << 20, Dir: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Error("missing directory accepted")
	}
	if err := tb.Spill(SpillOptions{Limit: 0, Dir: t.TempDir()}); err == nil {
		t.Error("limit 0 accepted")
	}
}

// The disk full when the final merge first merges groups of runs into
// bigger ones (more than maxFanIn runs): one warning naming the directory
// and the reason, saying that the runs are merged all at once instead; the
// merged run begun is removed, the runs stay, and the result is the
// same as in memory. The later merges (Summarize, Range, Len each merge)
// do not try again: one warning in all.
func TestSpillMergeDiskFull(t *testing.T) {
	t.Parallel()
	keys, ops, ns := workload(1, 20000, 80000)
	mem := NewTable(testDSize)
	apply(mem, keys, ops, ns, 1)
	want := resultOf(t, mem)
	var mu sync.Mutex
	var warns []error
	tb, dir := spillTable(t, 72<<10, func(err error) { mu.Lock(); warns = append(warns, err); mu.Unlock() })
	apply(tb, keys, ops, ns, 1)
	runs := tb.SpillRuns()
	if runs <= maxFanIn || len(warns) != 0 {
		t.Fatalf("%d runs, warnings %v; want more than %d runs, no warning", runs, warns, maxFanIn)
	}
	budget := 100 << 10 // some of a merged run, then a full disk
	created := 0
	tb.spill.create = func(path string) (runFile, error) {
		created++
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return &failAfter{f, &budget}, err
	}
	got := resultOf(t, tb)
	if len(warns) != 1 || created != 1 {
		t.Fatalf("%d warnings, %d merged runs begun; want 1 each: %v", len(warns), created, warns)
	}
	for _, w := range warns {
		var se *SpillError
		wantMsg := fmt.Sprintf("writing spill run to %s: no space left on device; merging the %d runs at once instead", dir, runs)
		if !errors.As(w, &se) || w.Error() != wantMsg {
			t.Errorf("warning %q, want %q", w, wantMsg)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != runs {
		t.Errorf("%d files in the spill directory, want the %d runs", len(left), runs)
	}
	if !reflect.DeepEqual(got.h, want.h) || got.s != want.s || got.n != want.n || !reflect.DeepEqual(got.all, want.all) {
		t.Errorf("result differs: %+v, want %+v", got.s, want.s)
	}
}

// RangeGrouped gives each content's entries of a group plan's table (keys
// GroupKey(content, group)) in a row, in memory and after spills, and
// every entry once with its refcnt.
func TestRangeGrouped(t *testing.T) {
	const contents, groups = 3000, 7
	for _, limit := range []int64{0, 64 << 10} {
		var tb *Table
		if limit == 0 {
			tb = NewTable(testDSize)
		} else {
			tb, _ = spillTable(t, limit, noWarn(t))
		}
		rng := rand.New(rand.NewPCG(1, uint64(limit)))
		want := map[Key]uint64{}
		for range contents * groups * 2 {
			var c Key
			binary.BigEndian.PutUint64(c[:8], rng.Uint64N(contents)*0x9e3779b97f4a7c15)
			k := GroupKey(c, rng.Uint64N(groups))
			if tb.Ref(k, 4096) {
				tb.Set(k, 2048)
			}
			want[k]++
		}
		if limit != 0 && tb.SpillRuns() == 0 {
			t.Fatal("no spill")
		}
		done := map[uint64]bool{}
		var cur uint64
		got := map[Key]uint64{}
		tb.RangeGrouped(func(k Key, e Entry) bool {
			c := binary.BigEndian.Uint64(k[:8])
			if c != cur {
				if done[c] {
					t.Fatalf("limit %d: content %x again after others", limit, c)
				}
				done[cur], cur = true, c
			}
			got[k] = e.Refcnt
			return true
		})
		if err := tb.Err(); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("limit %d: %d entries, want %d", limit, len(got), len(want))
		}
	}
}
