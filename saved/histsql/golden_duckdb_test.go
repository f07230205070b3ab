//go:build duckdb

package histsql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	os.Exit(code)
}

// duckdbCases are the golden cases TestGoldenShardsOnDuckDB reduces on
// DuckDB: what the query's sums depend on (refcounts with dedup, embedded
// blocks, zero blocks stored, copies, raidz's allocation, 4K records,
// release 2.1). Every case is held to real zdb -S by scan TestGolden.
var duckdbCases = map[string]bool{"lz4-128k-a12": true, "lz4-128k-a12-dedup": true, "off-128k-a12-never-dedup": true,
	"lz4-128k-a12-copies3": true, "lz4-raidz2x6-a12": true, "lz4-4k-a12": true, "v21-lz4-128k-a12": true}

// TestGoldenShardsOnDuckDB scans the golden input set in 3 shards, saved
// as Parquet, for the duckdbCases, reduces the shards' tables on DuckDB
// with Query, renders the report from its result (saved.MergeHistogram)
// and checks the zdb -S text against what real zdb -S printed, and
// against ddtsim merge of the same shards, byte for byte.
func TestGoldenShardsOnDuckDB(t *testing.T) {
	t.Parallel()
	cases, inputs := golden.ForScanTest(t)
	ran := 0
	for _, c := range cases {
		if !duckdbCases[c.Name] {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			set, err := model.Parse(model.Text{Release: c.Release, Vdevs: []string{c.Vdevs}, Ashift: strconv.Itoa(c.Ashift), Sparse: c.Sparse, Properties: c.Properties()})
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.ZdbS()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var dirs, globs []string
			for i := range 3 {
				save := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
				res, err := scan.Run(context.Background(), set, inputs, scan.Options{Save: save, Shard: source.Shard{Index: uint32(i), Count: 3}})
				if err != nil {
					t.Fatal(err)
				}
				res.Close()
				dirs = append(dirs, save)
			}
			globs = append(globs, filepath.Join(dir, "shard-*", "part-*.parquet"))
			render := func(m *saved.Merged) string {
				t.Helper()
				res, err := scan.FromMerged(m)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := res.Report(0)
				if err != nil {
					t.Fatal(err)
				}
				return rep.Zdb
			}
			m, err := saved.MergeHistogram(dirs, runDuckDB(t, globs))
			if err != nil {
				t.Fatal(err)
			}
			if got := render(m); got != want {
				t.Errorf("DuckDB's histogram of 3 shards differs from real zdb -S:\n%s\nwant\n%s", got, want)
			}
			native, err := saved.Merge(dirs, saved.MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := render(native); got != want {
				t.Errorf("merge of 3 shards differs from real zdb -S:\n%s\nwant\n%s", got, want)
			}
			ran++
		})
	}
	if ran != len(duckdbCases) {
		t.Errorf("%d of the %d cases ran", ran, len(duckdbCases))
	}
}
