package analyzer

import (
	"fmt"
	"os"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	os.Exit(code)
}

// goldenPolicy is the write policy and sparse mode of a golden case, for
// the tests that run the analyzer on the golden inputs. (The golden cases
// are held to real zdb -S and zdb -ddddd, record by record, by the
// pipeline's test: scan TestGolden.)
func goldenPolicy(t *testing.T, c golden.Case) (*zio.Policy, model.Sparse) {
	t.Helper()
	rel, err := zio.LookupRelease(c.Release)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := zio.NewPool([]string{c.Vdevs}, c.Ashift)
	if err != nil {
		t.Fatal(err)
	}
	p := &zio.Policy{Release: rel, RecordSize: 128 << 10, Compression: zio.LZ4, Copies: 1, Vdev: pool}
	for k, v := range c.Props {
		switch k {
		case "compression":
			if p.Compression, p.Level, err = zio.ParseCompression(v, rel); err != nil {
				t.Fatal(err)
			}
		case "recordsize":
			n := map[string]uint32{"4K": 4 << 10, "16K": 16 << 10, "128K": 128 << 10, "1M": 1 << 20}[v]
			if n == 0 {
				t.Fatalf("recordsize %s not in this test's table", v)
			}
			p.RecordSize = n
		case "copies":
			p.Copies = int(v[0] - '0')
		case "dedup":
			p.Dedup = v == "on"
		default:
			t.Fatalf("property %s not handled", k)
		}
	}
	sp, err := model.ParseSparse(c.Sparse)
	if err != nil {
		t.Fatal(err)
	}
	return p, sp
}
