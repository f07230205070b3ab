package analyzer

import (
	"context"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/benchdata"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// benchDataBytes is the size of the data set BenchmarkScan scans.
const benchDataBytes = 256 << 20

// BenchmarkScan measures the throughput of Scan over a 256 MiB synthetic
// data set (package benchdata: VM image clones, logs, binary-like files,
// small files), written once per run into a temporary directory and read
// from the page cache by every iteration:
//
//	go test -bench Scan -run '^$' ./analyzer/
//
// MB/s is logical bytes scanned per second; uniq-blocks is the number of DDT
// entries at the end of a scan (the table's peak size: it only grows).
func BenchmarkScan(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a 256 MiB data set; skipped with -short")
	}
	dir := b.TempDir()
	if err := benchdata.Generate(dir, benchDataBytes); err != nil {
		b.Fatal(err)
	}
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	all := runtime.GOMAXPROCS(0)
	for _, comp := range []zio.Compression{zio.LZ4, zio.Off} {
		for _, jobs := range []int{1, all} {
			name := "compression=" + comp.String() + "/jobs=" + strconv.Itoa(jobs)
			if jobs == all {
				name = "compression=" + comp.String() + "/jobs=all" // GOMAXPROCS: the -N suffix
			}
			b.Run(name, func(b *testing.B) {
				opts := Options{Policy: benchPolicy(b, comp), Jobs: jobs}
				b.SetBytes(total)
				var res *Analysis
				for b.Loop() {
					var err error
					res, err = Run(context.Background(), []string{dir}, opts)
					if err != nil {
						b.Fatal(err)
					}
					if res.Counters.Errors != 0 {
						b.Fatalf("%d errors during the scan", res.Counters.Errors)
					}
				}
				b.ReportMetric(float64(res.Counters.UniqueBlocks), "uniq-blocks")
			})
		}
	}
}

// benchPolicy is testPolicy for benchmarks: OpenZFS 2.3.2, recordsize 128K,
// one copy, ashift 12.
func benchPolicy(b *testing.B, comp zio.Compression) *zio.Policy {
	b.Helper()
	rel, err := zio.LookupRelease("2.3.2")
	if err != nil {
		b.Fatal(err)
	}
	d, err := zio.NewDisk(12)
	if err != nil {
		b.Fatal(err)
	}
	return &zio.Policy{Release: rel, RecordSize: 128 << 10, Compression: comp, Copies: 1, Vdev: d}
}
