package analyzer

import (
	"context"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

type blockList struct {
	mu     sync.Mutex
	blocks map[string][]BlockEvent
}

func (b *blockList) add(e BlockEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blocks[filepath.Base(e.Path)] = append(b.blocks[filepath.Base(e.Path)], e)
}

func scanZvol(t *testing.T, p *zio.Policy, zvol bool, paths ...string) (*Analysis, map[string][]BlockEvent) {
	t.Helper()
	bl := &blockList{blocks: map[string][]BlockEvent{}}
	res, err := Run(context.Background(), paths, Options{Policy: p, Sparse: model.SparseNever, Zvol: zvol, OnBlock: bl.add,
		Warn: func(path string, err error) { t.Errorf("%s: %v", path, err) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, evs := range bl.blocks {
		sort.Slice(evs, func(i, j int) bool { return evs[i].BlkID < evs[j].BlkID })
	}
	return res, bl.blocks
}

// Each file becomes a volume: blocks of exactly volblocksize, the last one
// zero-padded, however small the file.
func TestZvolScanBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := testkit.Rand(21, 5000)
	testkit.Write(t, filepath.Join(dir, "f5000"), small)
	testkit.Write(t, filepath.Join(dir, "f20000"), testkit.Rand(22, 20000))
	testkit.Write(t, filepath.Join(dir, "f1m"), testkit.Rand(23, 1<<20))
	p := testkit.Policy(t, zio.Off)
	p.RecordSize = 16 << 10
	res, blocks := scanZvol(t, p, true, dir)
	for name, want := range map[string]int{"f5000": 1, "f20000": 2, "f1m": 64} {
		got := blocks[name]
		if len(got) != want {
			t.Errorf("%s: %d blocks, want %d", name, len(got), want)
		}
		for _, e := range got {
			if e.LSize != 16<<10 || e.Hole {
				t.Errorf("%s block %d: LSIZE %d, hole %v; want a 16K block", name, e.BlkID, e.LSize, e.Hole)
			}
		}
	}
	padded := make([]byte, 16<<10)
	copy(padded, small)
	if k := blocks["f5000"][0].Key; k != ddt.KeyOf(padded) {
		t.Error("f5000: the block is not the file zero-padded to 16K")
	}
	tot := res.Histogram.Total()
	if res.Counters.Records != 67 || tot.Allocated.Blocks != 67 || tot.Allocated.LSize != 67*16<<10 || tot.Allocated.PSize != 67*16<<10 {
		t.Errorf("records %d, total %+v; want 67 blocks of 16K", res.Counters.Records, tot.Allocated)
	}

	// As files, the small ones are single blocks rounded to 512.
	_, fileBlocks := scanZvol(t, p, false, dir)
	if b := fileBlocks["f5000"]; len(b) != 1 || b[0].LSize != 5120 {
		t.Errorf("f5000 as a file: %+v", b)
	}

	// With compression, the padding compresses: LSIZE stays 16K.
	res, blocks = scanZvol(t, testPolicyRS(t, zio.LZ4, 16<<10), true, filepath.Join(dir, "f5000"))
	if b := blocks["f5000"]; len(b) != 1 || b[0].LSize != 16<<10 {
		t.Errorf("f5000, lz4: %+v", b)
	}
	if tot := res.Histogram.Total(); tot.Allocated.LSize != 16<<10 || tot.Allocated.PSize >= 16<<10 {
		t.Errorf("f5000, lz4: %+v", tot.Allocated)
	}
}

func testPolicyRS(t *testing.T, comp zio.Compression, rs uint32) *zio.Policy {
	p := testkit.Policy(t, comp)
	p.RecordSize = rs
	return p
}

// A file whose size is a multiple of the block size is cut alike as a file
// (recordsize) and as a volume (volblocksize): same blocks, same table.
func TestZvolEqualsRecordsizeWhenAligned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := testkit.Rand(31, 16<<10)
	var img []byte
	for i := 0; i < 4; i++ {
		img = append(img, rec...)
	}
	img = append(img, testkit.Rand(32, 48<<10)...)
	img = append(img, make([]byte, 32<<10)...) // zero blocks, stored with compression off
	testkit.Write(t, filepath.Join(dir, "img"), img)
	testkit.Write(t, filepath.Join(dir, "one"), testkit.Rand(33, 16<<10))
	testkit.Write(t, filepath.Join(dir, "big"), testkit.Rand(34, 1<<20))
	for _, comp := range []zio.Compression{zio.Off, zio.LZ4} {
		p := testPolicyRS(t, comp, 16<<10)
		asVol, volBlocks := scanZvol(t, p, true, dir)
		asFile, fileBlocks := scanZvol(t, p, false, dir)
		if *asVol.Histogram != *asFile.Histogram {
			t.Errorf("%v: histograms differ:\nvolume %+v\nfile   %+v", comp, asVol.Histogram.Total(), asFile.Histogram.Total())
		}
		cv, cf := asVol.Counters, asFile.Counters
		if cv.Records != cf.Records || cv.Stored != cf.Stored || cv.Holes != cf.Holes || cv.ZeroBlocks != cf.ZeroBlocks || cv.UniqueBlocks != cf.UniqueBlocks {
			t.Errorf("%v: counters differ:\nvolume %+v\nfile   %+v", comp, cv, cf)
		}
		for name, fb := range fileBlocks {
			vb := volBlocks[name]
			if len(vb) != len(fb) {
				t.Fatalf("%v %s: %d blocks as a volume, %d as a file", comp, name, len(vb), len(fb))
			}
			for i := range fb {
				if vb[i].LSize != fb[i].LSize || vb[i].Key != fb[i].Key || vb[i].Hole != fb[i].Hole {
					t.Errorf("%v %s block %d differs: %+v vs %+v", comp, name, i, vb[i], fb[i])
				}
			}
		}
	}
	// With compression off the zero blocks are stored (one key, refcnt 2).
	p := testPolicyRS(t, zio.Off, 16<<10)
	res, _ := scanZvol(t, p, true, filepath.Join(dir, "img"))
	if res.Counters.ZeroBlocks != 2 {
		t.Errorf("zero blocks %d, want 2", res.Counters.ZeroBlocks)
	}
	var zeroKey ddt.Key = ddt.KeyOf(make([]byte, 16<<10))
	if e, ok := res.Table.Lookup(zeroKey); !ok || e.Refcnt != 2 {
		t.Errorf("zero block entry %+v, %v", e, ok)
	}
}
