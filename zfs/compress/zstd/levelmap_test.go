//go:build cgo && !nolibzstd

package zstd

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/internal/testutil/stress"
	kzstd "github.com/klauspost/compress/zstd"
)

// TestLevelMap (cgo build only; a calibration, run with DDTSIM_STRESS=1)
// re-measures settingFor, the klauspost
// setting the pure-Go build uses for each ZFS level: over the stored 128 KiB
// blocks of the golden input tree, the total PSIZE (ZFS 2.3.2 rules, ashift
// 12, no early abort) of every klauspost setting is compared with the system
// libzstd's at each ZFS level. It logs the matrix and fails when the chosen
// setting is more than 0.3 percentage points worse than the best one (zstd-1
// is chosen partly on the 1 MiB golden pool, where the best 128 KiB setting
// is far off). Run it after upgrading github.com/klauspost/compress:
//
//	DDTSIM_STRESS=1 go test -run TestLevelMap -v ./zfs/compress/zstd/
func TestLevelMap(t *testing.T) {
	stress.Require(t) // compresses the golden tree 62 times
	t.Parallel()
	rules, srcs := compresstest.StoredBlocks(t, "zstd-128k-a12")
	total := func(comp compresstest.BlockCompressor) int64 { return rules.TotalPSize(srcs, comp) }
	levels := allLevels()
	var settings []setting
	for _, lv := range []kzstd.EncoderLevel{kzstd.SpeedFastest, kzstd.SpeedDefault, kzstd.SpeedBetterCompression, kzstd.SpeedBestCompression} {
		settings = append(settings, setting{level: lv}, setting{level: lv, allLit: true}, setting{level: lv, noEntropy: true})
	}
	// Small windows, standing in for libzstd's acceleration at negative
	// levels (see settingFor).
	for _, lv := range []kzstd.EncoderLevel{kzstd.SpeedFastest, kzstd.SpeedDefault} {
		for w := 1 << 10; w <= 16<<10; w <<= 1 {
			settings = append(settings, setting{level: lv, noEntropy: true, window: w})
		}
	}
	name := func(s setting) string {
		n := s.level.String()
		switch {
		case s.noEntropy:
			n += "/raw"
		case s.allLit:
			n += "/all"
		}
		if s.window != 0 {
			n += fmt.Sprintf("/w%dK", s.window>>10)
		}
		return n
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		ref = map[int]int64{}
		got = map[setting]int64{}
		sem = make(chan struct{}, 2)
		run = func(f func()) { wg.Add(1); go func() { defer wg.Done(); sem <- struct{}{}; f(); <-sem }() }
	)
	for _, l := range levels {
		run(func() {
			z, err := New(l)
			if err != nil {
				panic(err)
			}
			v := total(func(d, s []byte) (int, bool) { c, err := z.Compress(d, s); return c, err != nil })
			mu.Lock()
			ref[l] = v
			mu.Unlock()
		})
	}
	for _, s := range settings {
		run(func() {
			w := 1 << 21 // ≥ any 128 KiB block: libzstd's windowLog does not matter
			if s.window != 0 {
				w = s.window
			}
			enc, err := kzstd.NewWriter(nil, kzstd.WithWindowSize(w), kzstd.WithEncoderLevel(s.level),
				kzstd.WithEncoderConcurrency(1), kzstd.WithEncoderCRC(false), kzstd.WithSingleSegment(false),
				kzstd.WithNoEntropyCompression(s.noEntropy), kzstd.WithAllLitEntropyCompression(s.allLit))
			if err != nil {
				panic(err)
			}
			var buf []byte
			v := total(func(d, src []byte) (int, bool) {
				buf = enc.EncodeAll(src, buf[:0])
				n, ok := reframe(d[HeaderSize:], buf, len(src))
				return HeaderSize + n, !ok
			})
			mu.Lock()
			got[s] = v
			mu.Unlock()
		})
	}
	wg.Wait()
	pct := func(g, w int64) float64 { return 100 * float64(g-w) / float64(w) }
	for _, l := range levels {
		var row strings.Builder
		best := settings[0]
		for _, s := range settings {
			if s.window != 0 && l > 0 {
				continue
			}
			fmt.Fprintf(&row, " %s %+.2f", name(s), pct(got[s], ref[l]))
			if math.Abs(pct(got[s], ref[l])) < math.Abs(pct(got[best], ref[l])) {
				best = s
			}
		}
		ch := settingFor(l)
		if _, ok := got[ch]; !ok {
			t.Fatalf("level %d: setting %s not among the candidates", l, name(ch))
		}
		t.Logf("level %d: libzstd %d total %d; chosen %s %+.2f%%, best %s %+.2f%%; all:%s", l, LibraryVersion, ref[l],
			name(ch), pct(got[ch], ref[l]), name(best), pct(got[best], ref[l]), row.String())
		if math.Abs(pct(got[ch], ref[l])) > math.Abs(pct(got[best], ref[l]))+0.3 {
			t.Errorf("level %d: settingFor gives %s (%+.2f%%), %s is better (%+.2f%%)",
				l, name(ch), pct(got[ch], ref[l]), name(best), pct(got[best], ref[l]))
		}
	}
}
