package sweep

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/sourcetest"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// A sweep walks as a scan does (package source): a file changed while it
// is read is a warning wrapping source.ErrChanged, counted in Changed and
// not in Errors; a FIFO named is skipped with a warning; symlinks inside
// directories and hard links are skipped.
func TestSweepWalksAsTheScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := make([]byte, 300<<10)
	rand.New(rand.NewSource(1)).Read(data)
	log := filepath.Join(dir, "log")
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(log, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(log, filepath.Join(dir, "hard")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := testkit.Mkfifo(t, fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	faults := &source.Faults{ReadFault: func(path string, off uint64) error {
		if off == 0 {
			later := time.Now().Add(time.Hour)
			os.Chtimes(path, later, later)
		}
		return nil
	}}
	var mu sync.Mutex
	var skipped, changed int
	res, err := Run(context.Background(), []string{dir, fifo}, Options{Lanes: lanes(t, []uint32{128 << 10}, []zio.Compression{zio.LZ4}), Jobs: 1, Faults: faults,
		Warn: func(p string, err error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case p == fifo && strings.Contains(err.Error(), "skipped: not a regular file"):
				skipped++
			case filepath.Dir(p) == dir && errors.Is(err, source.ErrChanged): // "hard", the first name
				changed++
			default:
				t.Errorf("%s: %v", p, err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counters
	if c.Files != 1 || c.Skipped != 3 || c.Changed != 1 || c.Errors != 1 || c.ReadBytes != 300<<10 || res.Lanes[0].Records != 3 {
		t.Errorf("counters %+v, lane %+v", c, res.Lanes[0])
	}
	if skipped != 1 || changed != 1 {
		t.Errorf("%d FIFO warnings, %d changed-file warnings; want 1 each", skipped, changed)
	}
}

// Reads that return half of what they asked, with no error (as a network
// file system may): the sweep reads the rest and ends exactly as without
// them, without a warning (source.File.ReadAt; before, each file was cut
// at its first read as if it had shrunk).
func TestSweepShortReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := make([]byte, 3<<20+777)
	rand.New(rand.NewSource(2)).Read(data)
	copy(data[1<<20:], data[:1<<20]) // some dedup
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "text"), []byte(strings.Repeat("pack my box with five dozen liquor jugs\n", 9000)), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep := func(faults *source.Faults) *Result {
		t.Helper()
		res, err := Run(context.Background(), []string{dir}, Options{Lanes: lanes(t, []uint32{4 << 10, 128 << 10, 1 << 20}, []zio.Compression{zio.Off, zio.LZ4}),
			Jobs: 2, Faults: faults, Warn: func(p string, err error) { t.Errorf("%s: %v", p, err) }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	want := sweep(nil)
	faults, reads := sourcetest.ShortReads(func(n int) int { return max(n/2, 1) })
	got := sweep(faults)
	if reads() == 0 {
		t.Fatal("no read went through the seam")
	}
	if got.Counters != want.Counters {
		t.Errorf("counters %+v, want %+v", got.Counters, want.Counters)
	}
	for i := range want.Lanes {
		g, w := got.Lanes[i], want.Lanes[i]
		if *g.Histogram != *w.Histogram || g.Summary != w.Summary || g.Records != w.Records || g.Holes != w.Holes {
			t.Errorf("lane %d (recordsize %d, %v): %+v, want %+v", i, w.Policy.RecordSize, w.Policy.Compression, g.Summary, w.Summary)
		}
	}
}
