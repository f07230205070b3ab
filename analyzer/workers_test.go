package analyzer

import (
	"context"
	"encoding/binary"
	"runtime"
	"strconv"
	"testing"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// synthSource yields files of records that are all different (the file's
// number and the offset in their first bytes, zeros after), read from
// memory.
type synthSource struct{ files, size uint64 }

func (s synthSource) Walk(ctx context.Context, yield func(*source.File), warn func(string, error)) source.Counters {
	for i := range s.files {
		yield(&source.File{Path: "f" + strconv.FormatUint(i, 10), Size: s.size, Regular: true, Reader: synthReader(i)})
	}
	return source.Counters{Files: s.files, LogicalBytes: s.files * s.size}
}

type synthReader uint64

func (r synthReader) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	binary.LittleEndian.PutUint64(p, uint64(r)+1)
	binary.LittleEndian.PutUint64(p[8:], uint64(off))
	return len(p), nil
}
func (synthReader) Changed() error { return nil }
func (synthReader) Close() error   { return nil }

// The workers hold at most WorkerMemory bytes of records, whatever -j:
// 256 jobs at recordsize=16M (24 records, one chunk each) run 8 workers,
// which allocate 2 records each, when they first need them (found by a
// new user: -j 256 -o recordsize=16M took 2.4 GB and 35 s, -j 2 58 MB and
// 2.8 s). What the scan allocates in all is measured, garbage included.
func TestWorkersMemoryBound(t *testing.T) {
	if w := Workers(MaxJobs, 16<<20); w != 8 {
		t.Errorf("Workers(%d, 16M) = %d, want 8", MaxJobs, w)
	}
	for _, c := range []struct {
		jobs int
		rs   uint32
		want int
	}{{MaxJobs, 128 << 10, MaxJobs}, {MaxJobs, 512 << 10, MaxJobs}, {MaxJobs, 1 << 20, 128}, {3, 16 << 20, 3}, {1, 16 << 20, 1}} {
		if w := Workers(c.jobs, c.rs); w != c.want {
			t.Errorf("Workers(%d, %d) = %d, want %d", c.jobs, c.rs, w, c.want)
		}
	}
	p := testkit.Policy(t, zio.LZ4)
	p.RecordSize = 16 << 20
	const records = 24
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res, err := scanSource(context.Background(), synthSource{1, records * 16 << 20}, Options{Policy: p, Jobs: MaxJobs})
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if k := res.Counters; k.Records != records || k.Stored != records || k.UniqueBlocks != records || k.Compressed != records {
		t.Errorf("counters %+v", k)
	}
	// The workers' records, and the scan's one record of zeros.
	limit := uint64(WorkerMemory + 16<<20 + 4<<20)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > limit {
		t.Errorf("the scan allocated %d MiB, more than %d MiB", got>>20, limit>>20)
	} else {
		t.Logf("the scan allocated %d MiB", got>>20)
	}
}
