package scan_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// compareRecordsizes scans paths with the model's recordsize and sets it
// beside the zdb -S text of a scan of the same paths with the pool's.
func compareRecordsizes(t *testing.T, model_, pool uint32, paths ...string) *compare.Comparison {
	t.Helper()
	run := func(rs uint32) *scan.Result {
		res, err := scan.Run(context.Background(), model.Settings{Release: "2.3.2", RecordSize: rs, Sparse: model.SparseAlways}, paths, scan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(res.Close)
		return res
	}
	poolRep, err := run(pool).Report(0)
	if err != nil {
		t.Fatal(err)
	}
	res := run(model_)
	rep, err := res.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := res.Compare(rep, zdb.ParseString(poolRep.Zdb), "pool.zdb", compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Outcome != compare.Different || len(c.Causes) == 0 {
		t.Fatalf("model %d, pool %d: %s, causes %q", model_, pool, c.Verdict, c.Causes)
	}
	return c
}

// A model whose recordsize is larger than the pool's predicts fewer
// blocks, and (the last record of each file padded to it) no less LSIZE:
// the first likely cause names the recordsize, not snapshots or
// compression. The other way round too.
func TestCompareBlamesRecordsizeBothWays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewSource(7))
	for i, size := range []int{300 << 10, 1500 << 10, 700 << 10, 3300 << 10, 90 << 10, 2100 << 10} {
		b := make([]byte, size)
		if i%2 == 0 {
			r.Read(b)
		} else {
			for j := range b {
				b[j] = "ddtsim compresses text "[(j+i)%23]
			}
		}
		if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name        string
		paths       []string
		model, pool uint32
		want        string
	}{
		{"generated, model 1M, pool 128K", []string{dir}, 1 << 20, 128 << 10, "fewer blocks predicted than the pool holds"},
		{"sample, model 1M, pool 128K", []string{"../testdata/sample"}, 1 << 20, 128 << 10, "fewer blocks predicted than the pool holds (11 predicted, averaging 231K; 24 actual, averaging 89.2K) for no less logical size (2.48M predicted, 2.09M actual: "},
		{"generated, model 128K, pool 1M", []string{dir}, 128 << 10, 1 << 20, "larger recordsize than modelled"},
		{"sample, model 128K, pool 1M", []string{"../testdata/sample"}, 128 << 10, 1 << 20, "larger recordsize than modelled"},
	} {
		c := compareRecordsizes(t, tc.model, tc.pool, tc.paths...)
		first := c.Causes[0]
		if !strings.Contains(first, tc.want) || !strings.Contains(first, "check -o recordsize") {
			t.Errorf("%s: first cause %q, want one naming the recordsize (%q)", tc.name, first, tc.want)
		}
		wantDir := "the files were written with a smaller recordsize than modelled"
		if tc.model < tc.pool {
			wantDir = "the files were written with a larger recordsize than modelled"
		}
		if !strings.Contains(first, wantDir) {
			t.Errorf("%s: first cause %q, want %q", tc.name, first, wantDir)
		}
		for _, cause := range c.Causes {
			if strings.Contains(cause, "snapshots") || strings.Contains(cause, "compression ratio differs") {
				t.Errorf("%s: blames %q", tc.name, cause)
			}
		}
	}
}
