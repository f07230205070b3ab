package analyzer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// A complete scan covers every byte of every file: ScannedBytes equals
// LogicalBytes, on the golden inputs and on generated files of every kind
// (empty, smaller than a record, with a short last record, sparse, all
// holes), cut as files and as volumes.
func TestScannedBytesOfCompleteScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "empty"), nil)
	testkit.Write(t, filepath.Join(dir, "tiny"), testkit.Rand(1, 100))
	testkit.Write(t, filepath.Join(dir, "short-tail"), testkit.Rand(2, 300<<10+7))
	testkit.Write(t, filepath.Join(dir, "zeros"), make([]byte, 260<<10))
	writeSparse(t, filepath.Join(dir, "sparse"))
	if h, err := os.Create(filepath.Join(dir, "allhole")); err != nil {
		t.Fatal(err)
	} else {
		h.Truncate(1<<20 + 5)
		h.Close()
	}
	paths := []string{dir}
	if !testing.Short() {
		in, err := golden.Inputs()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, in...)
	}
	for _, c := range []struct {
		name string
		comp zio.Compression
		rs   uint32
		sp   model.Sparse
		zvol bool
	}{
		{"lz4-128K", zio.LZ4, 128 << 10, model.SparseAuto, false},
		{"off-4K-never", zio.Off, 4 << 10, model.SparseNever, false},
		{"off-128K-always", zio.Off, 128 << 10, model.SparseAlways, false},
		{"zvol-16K", zio.LZ4, 16 << 10, model.SparseAuto, true},
	} {
		p := testkit.Policy(t, c.comp)
		p.RecordSize = c.rs
		res, err := Run(context.Background(), paths, Options{Policy: p, Sparse: c.sp, Zvol: c.zvol, Jobs: 4,
			Warn: func(path string, err error) { t.Errorf("%s: %v", path, err) }})
		if err != nil {
			t.Fatal(err)
		}
		k := res.Counters
		if k.ScannedBytes != k.LogicalBytes || k.LogicalBytes == 0 {
			t.Errorf("%s: scanned %d bytes of %d", c.name, k.ScannedBytes, k.LogicalBytes)
		}
	}
}

// An interrupted scan covers only the records it processed: ScannedBytes
// is the bytes of the records reported done, less than LogicalBytes. A
// file that cannot be read is not covered either.
func TestScannedBytesOfPartialScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, n := range []int{3 << 20, 5<<20 + 3, 2 << 20} {
		testkit.Write(t, filepath.Join(dir, string(rune('a'+i))), testkit.Rand(int64(10+i), n))
	}
	p := testkit.Policy(t, zio.LZ4)
	p.RecordSize = 16 << 10 // 16K records, chunks of 512 records
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var done uint64
	// The cancel waits until the walker has listed the three files (one
	// chunk each, which the chunk queue of one worker holds without
	// blocking the walker): cancelled at once, the walk could stop before
	// it reached the others, and then the scan covers all it knows of
	// (found under load: 2 runs in 50).
	listed, allListed := 0, make(chan struct{})
	res, err := Run(ctx, []string{dir}, Options{Policy: p, Jobs: 1,
		OnFile: func(FileEvent) int {
			if listed++; listed == 3 {
				close(allListed)
			}
			return 0
		},
		Done: func(f FileInfo, first, end uint64) {
			<-allListed
			mu.Lock()
			defer mu.Unlock()
			l, _ := zio.FileRecords(f.Size, p.RecordSize)
			done += min(end*uint64(l), f.Size) - min(first*uint64(l), f.Size)
			cancel()
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("scan not interrupted: %v", err)
	}
	// The first file's chunk done, the others left undone.
	k := res.Counters
	if k.ScannedBytes != 3<<20 || k.LogicalBytes != 10<<20+3 || k.ScannedBytes != done {
		t.Errorf("interrupted: scanned %d bytes of %d, %d reported done", k.ScannedBytes, k.LogicalBytes, done)
	}

	// An unreadable file is counted in LogicalBytes but not covered.
	bad := filepath.Join(dir, "b")
	faults := &source.Faults{ReadFault: func(path string, off uint64) error {
		if path == bad {
			return errors.New("injected EIO")
		}
		return nil
	}}
	res, err = Run(context.Background(), []string{dir}, Options{Policy: p, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	if k := res.Counters; k.Errors != 1 || k.ScannedBytes != 5<<20 {
		t.Errorf("one unreadable file: errors %d, scanned %d bytes of %d", k.Errors, k.ScannedBytes, k.LogicalBytes)
	}
}
