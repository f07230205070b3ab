//go:build duckdb

package histsql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// TestGoldenShardsOnDuckDB scans the golden input set in 3 shards, saved
// as Parquet, for every golden case of a compressor this build reproduces
// exactly (off, lz4, lzjb, zle), reduces the shards' tables on DuckDB with
// Query, renders the report from its result (saved.MergeHistogram) and
// checks the zdb -S text against what real zdb -S printed, and against
// ddtsim merge of the same shards, byte for byte.
func TestGoldenShardsOnDuckDB(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	ran := 0
	for _, c := range cases {
		comp := c.Props["compression"]
		if strings.HasPrefix(comp, "gzip") || strings.HasPrefix(comp, "zstd") {
			continue // approximations in the pure Go build
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
	if ran < 26 {
		t.Errorf("only %d golden cases ran, want at least 26", ran)
	}
}
