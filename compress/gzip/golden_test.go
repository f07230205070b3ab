package gzip

import (
	"fmt"
	"testing"

	"github.com/ddtsim/ddtsim/internal/compresstest"
)

func TestMain(m *testing.M) { compresstest.GoldenMain(m) }

// goldenLimits are the largest total PSIZE error (percent) and number of
// differing blocks accepted for each gzip golden case, in the pure-Go build
// (Exact false) and the zlib build (Exact true): the measured figures rounded
// up a little (see TestGolden's log).
//
// Measured (760 listed blocks per case, of which 5 embedded):
//
//	case               pure Go: differ  error     zlib 1.2.13: differ  error
//	gzip1-128k-a12             80/760   +0.170%                 0/760  0 (exact)
//	gzip-128k-a12 (6)          57/760   +0.055%                 3/760  +0.033%
//	gzip9-128k-a12             59/760   +0.142%                 5/760  −0.011%
//	v21-gzip-128k-a12 (6)      57/760   +0.055%                 3/760  +0.033%
//
// The zlib build's differences are the Linux kernel's deflate
// (lib/zlib_deflate) disagreeing with userland zlib on a few blocks.
var goldenLimits = map[string]compresstest.GoldenLimit{
	"gzip1-128k-a12":    {Level: 1, Pure: 0.20, C: 0.001, PureDiff: 85, CDiff: 0},
	"gzip-128k-a12":     {Level: 6, Pure: 0.08, C: 0.04, PureDiff: 62, CDiff: 3},
	"gzip9-128k-a12":    {Level: 9, Pure: 0.17, C: 0.02, PureDiff: 64, CDiff: 5},
	"v21-gzip-128k-a12": {Level: 6, Pure: 0.08, C: 0.04, PureDiff: 62, CDiff: 3},
}

// blockCompressor is the compressor of a ZFS gzip level for the golden
// harness.
func blockCompressor(t testing.TB, level int, _ compresstest.Rules) compresstest.BlockCompressor {
	z, err := New(level)
	if err != nil {
		t.Fatal(err)
	}
	return func(dst, src []byte) (int, bool) {
		n, err := z.Compress(dst, src)
		return n, err != nil
	}
}

// TestGolden compresses every stored block of the gzip golden cases and
// compares the PSIZE that ZFS derives from c with what real ZFS wrote.
func TestGolden(t *testing.T) {
	compresstest.Golden{
		Limits:      goldenLimits,
		Compression: func(level int) string { return map[int]string{1: "gzip-1", 6: "gzip", 9: "gzip-9"}[level] },
		New:         blockCompressor,
		C:           Exact,
		Label:       func(level int) string { return fmt.Sprintf("Exact=%v gzip-%d", Exact, level) },
	}.Run(t)
}
