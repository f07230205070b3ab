//go:build zlib

package gzip

import (
	"bytes"
	stdzlib "compress/zlib"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/compresstest"
	kpzlib "github.com/klauspost/compress/zlib"
)

// TestLevelMap (zlib build only) re-measures the choice of levelMap, the
// klauspost level used by the pure-Go build for each ZFS gzip level: over the
// stored 128 KiB blocks of the golden input tree, the total PSIZE (ZFS 2.3.2
// rules, ashift 12) of every klauspost/compress and standard-library zlib
// level is compared with C zlib's at each ZFS level. It logs the matrix and
// fails when levelMap[N] is more than 0.1 percentage point worse than the
// best klauspost level for N, or off by more than 0.5%. Run it after
// upgrading github.com/klauspost/compress:
//
//	go test -tags zlib -run TestLevelMap -v ./compress/gzip/
func TestLevelMap(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses the golden tree 27 times")
	}
	rules, srcs := compresstest.StoredBlocks(t, "gzip-128k-a12")
	// total returns Σ PSIZE over srcs for a compressor.
	total := func(comp compresstest.BlockCompressor) int64 { return rules.TotalPSize(srcs, comp) }
	type writer interface {
		Reset(w io.Writer)
		Write(p []byte) (int, error)
		Close() error
	}
	lib := func(w writer, b *bytes.Buffer) compresstest.BlockCompressor {
		return func(d, s []byte) (int, bool) {
			b.Reset()
			w.Reset(b)
			w.Write(s)
			w.Close()
			return b.Len(), b.Len() > len(d)
		}
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ref     [MaxLevel + 1]int64
		kp, std [MaxLevel + 1]int64
		sem     = make(chan struct{}, 2)
		run     = func(f func()) { wg.Add(1); go func() { defer wg.Done(); sem <- struct{}{}; f(); <-sem }() }
	)
	for l := MinLevel; l <= MaxLevel; l++ {
		run(func() {
			z, _ := New(l)
			v := total(func(d, s []byte) (int, bool) { c, err := z.Compress(d, s); return c, err != nil })
			mu.Lock()
			ref[l] = v
			mu.Unlock()
		})
		run(func() {
			var b bytes.Buffer
			w, _ := kpzlib.NewWriterLevel(&b, l)
			v := total(lib(w, &b))
			mu.Lock()
			kp[l] = v
			mu.Unlock()
		})
		run(func() {
			var b bytes.Buffer
			w, _ := stdzlib.NewWriterLevel(&b, l)
			v := total(lib(w, &b))
			mu.Lock()
			std[l] = v
			mu.Unlock()
		})
	}
	wg.Wait()
	pct := func(got, want int64) float64 { return 100 * float64(got-want) / float64(want) }
	for n := MinLevel; n <= MaxLevel; n++ {
		var row strings.Builder
		best := 0
		for m := MinLevel; m <= MaxLevel; m++ {
			fmt.Fprintf(&row, " kp%d %+.2f", m, pct(kp[m], ref[n]))
			if best == 0 || math.Abs(pct(kp[m], ref[n])) < math.Abs(pct(kp[best], ref[n])) {
				best = m
			}
		}
		row.WriteString(" |")
		for m := MinLevel; m <= MaxLevel; m++ {
			fmt.Fprintf(&row, " std%d %+.2f", m, pct(std[m], ref[n]))
		}
		t.Logf("zlib gzip-%d total %d; error %% per library level:%s", n, ref[n], row.String())
		chosen := math.Abs(pct(kp[levelMap[n]], ref[n]))
		if chosen > math.Abs(pct(kp[best], ref[n]))+0.1 || chosen > 0.5 {
			t.Errorf("gzip-%d: levelMap gives klauspost level %d (%.2f%%), level %d is better (%.2f%%)",
				n, levelMap[n], pct(kp[levelMap[n]], ref[n]), best, pct(kp[best], ref[n]))
		}
	}
}
