package gzip

import (
	"fmt"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
)

func TestMain(m *testing.M) { compresstest.GoldenMain(m) }

// goldenLimits are the largest total PSIZE error (percent) and number of
// differing blocks accepted for each gzip golden case: none. The port of the
// kernel's deflate is the compressor of every build, so the pure-Go and the
// C limits are the same.
//
// Measured (760 listed blocks per case, of which 5 embedded):
//
//	case                   kernel port     before: klauspost      userland zlib 1.2.13 (differential_test.go)
//	gzip1-128k-a12          0/760  0       80/760 +0.170%          0/760  0
//	gzip-128k-a12 (6)       0/760  0       57/760 +0.055%          3/760 +0.033%
//	gzip9-128k-a12          0/760  0       59/760 +0.142%          5/760 −0.011%
//	v21-gzip-128k-a12 (6)   0/760  0       57/760 +0.055%          3/760 +0.033%
//
// Userland zlib's differences are the kernel's block-truncation rule
// (trees.mustFlush), which 1.2.13 does not have.
var goldenLimits = map[string]compresstest.GoldenLimit{
	"gzip1-128k-a12":    {Level: 1},
	"gzip-128k-a12":     {Level: 6},
	"gzip9-128k-a12":    {Level: 9},
	"v21-gzip-128k-a12": {Level: 6},
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
	t.Parallel()
	compresstest.Golden{
		Limits:      goldenLimits,
		Compression: func(level int) string { return map[int]string{1: "gzip-1", 6: "gzip", 9: "gzip-9"}[level] },
		New:         blockCompressor,
		C:           Exact,
		Label:       func(level int) string { return fmt.Sprintf("Exact=%v gzip-%d", Exact, level) },
		// The kernel's deflate has no early abort: gzip-6's 2.3.2 and
		// 2.1.11 cases compress their common blocks once.
		IgnoresRules: true,
	}.Run(t)
}
