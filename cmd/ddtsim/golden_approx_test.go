package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
)

// zstd is an approximation in the default (pure Go) build: the whole
// pipeline (capacity, early abort, rounding, embedding) run on the golden
// input must give a total PSIZE within these bounds (percent) of what real
// ZFS stored, per the zdb -ddddd listing. The bounds are the errors
// measured when this test was written, rounded up (README). (gzip is exact
// in every build and compared byte for byte by TestGoldenZdbS.)
var approxBounds = map[string]float64{
	"zstd-128k-a12":      0.15,
	"zstd19-128k-a12":    1.95,
	"zstdfast1-128k-a12": 0.45,
	"zstd1-1m-a12":       0.20,
	"v21-zstd-128k-a12":  0.15,
}

func TestGoldenApproxCompressors(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	ran, exact := 0, 0
	for _, c := range cases {
		bound, ok := approxBounds[c.Name]
		if !ok {
			continue
		}
		if exactCompression(c.Props["compression"]) {
			exact++ // exact in this build: compared byte for byte (TestGolden)
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			objs, err := c.Objects()
			if err != nil {
				t.Fatal(err)
			}
			var real uint64
			for _, blocks := range objs {
				for _, b := range blocks {
					if !b.Embedded {
						real += b.PSize
					}
				}
			}
			args := []string{"--json", "--release", c.Release, "--ashift", itoa(c.Ashift), "--sparse", c.Sparse,
				"--vdev", c.Vdevs}
			for k, v := range c.Props {
				args = append(args, "-o", k+"="+v)
			}
			code, out, errs := runT(append(args, inputs...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var doc struct {
				Total struct{ Referenced struct{ PSize uint64 } }
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			pred := doc.Total.Referenced.PSize
			e := 100 * (float64(pred) - float64(real)) / float64(real)
			t.Logf("%s: total PSIZE real %d, predicted %d (%+.3f%%)", strings.Join(args[1:], " "), real, pred, e)
			if math.Abs(e) > bound {
				t.Errorf("total PSIZE error %+.3f%% is over the documented %.2f%%", e, bound)
			}
		})
	}
	if ran+exact != len(approxBounds) {
		t.Errorf("%d of %d zstd cases found (%d exact in this build)", ran+exact, len(approxBounds), exact)
	}
}
