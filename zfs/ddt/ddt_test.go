package ddt

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"
)

func TestHistogramBuckets(t *testing.T) {
	t.Parallel()
	// refcnt 1 → bucket 0, 2–3 → 1, 4–7 → 2, 64 → 6 (zfs-semantics §1.5).
	for _, c := range []struct {
		refcnt uint64
		bucket int
	}{{1, 0}, {2, 1}, {3, 1}, {4, 2}, {7, 2}, {8, 3}, {64, 6}, {1023, 9}, {1024, 10}} {
		h := &Histogram{}
		h.Add(c.refcnt, 4096, 4096, 4096)
		if h[c.bucket].Allocated.Blocks != 1 || h[c.bucket].Referenced.Blocks != c.refcnt {
			t.Errorf("refcnt %d: bucket %d = %+v", c.refcnt, c.bucket, h[c.bucket])
		}
	}
}

func TestRatios(t *testing.T) {
	t.Parallel()
	// The §2.3 worked example: dedup 3.46, compress 1.00, copies 1.00.
	h := &Histogram{}
	h.Add(1, 5120, 5120, 8192)
	for i := 0; i < 3; i++ {
		h.Add(2, 131072, 131072, 131072)
	}
	h.Add(8, 131072, 131072, 131072)
	r, ok := RatiosOf(h.Total())
	if !ok {
		t.Fatal("no ratios")
	}
	got := fmt.Sprintf("%.2f %.2f %.2f %.2f", r.Dedup, r.Compress, r.Copies, r.Combined)
	if got != "3.46 1.00 1.00 3.46" {
		t.Errorf("ratios = %s, want 3.46 1.00 1.00 3.46", got)
	}
	if _, ok := RatiosOf(Bucket{}); ok {
		t.Error("ratios of an empty table reported ok")
	}
}

func TestTableConcurrentRefs(t *testing.T) {
	t.Parallel()
	tb := NewTable(func(p uint64) uint64 { return (p + 4095) &^ 4095 })
	var wg sync.WaitGroup
	var firsts sync.Map
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				var k Key
				k[0], k[1] = byte(i), byte(i>>8)
				if tb.Ref(k, 512) {
					if _, dup := firsts.LoadOrStore(k, true); dup {
						t.Errorf("key %d reported first twice", i)
					}
					tb.Set(k, 512)
				}
			}
		}()
	}
	wg.Wait()
	h, s := tb.Summarize()
	if s.Entries != 1000 || s.Refs != 8000 {
		t.Fatalf("summary = %+v, want 1000 entries, 8000 refs", s)
	}
	if h[3].Allocated.Blocks != 1000 || h[3].Referenced.DSize != 8000*4096 {
		t.Errorf("bucket 8 = %+v", h[3])
	}
}

func TestEmbeddedLeftOut(t *testing.T) {
	t.Parallel()
	tb := NewTable(nil)
	var a, b Key
	b[0] = 1
	tb.Ref(a, 512)
	tb.Set(a, 0) // embedded
	tb.Ref(a, 512)
	tb.Ref(b, 4096)
	tb.Set(b, 4096)
	h, s := tb.Summarize()
	if s.EmbeddedEntries != 1 || s.EmbeddedRefs != 2 || s.Entries != 1 || h.Total().Referenced.Blocks != 1 {
		t.Errorf("summary %+v total %+v", s, h.Total())
	}
}

func TestSampleReliability(t *testing.T) {
	t.Parallel()
	gen := func(n int) func(func(Entry) bool) {
		return func(f func(Entry) bool) {
			for i := 0; i < n; i++ {
				if !f(Entry{Refcnt: uint64(1 + i%3), LSize: 131072, PSize: 65536, DSize: 65536}) {
					return
				}
			}
		}
	}
	if e := EstimateSample(gen(5), 16); e.Reliable || e.Sampled != 5 {
		t.Errorf("5 sampled contents: reliable %v", e.Reliable)
	}
	if e := EstimateSample(gen(MinReliableSample), 16); !e.Reliable {
		t.Errorf("%d sampled contents: not reliable", MinReliableSample)
	}
	// The estimate scales the sample: 300 keys at 1/16 stand for 4800.
	if e := EstimateSample(gen(300), 16); e.Entries.Value != 4800 || e.Histogram.Total().Allocated.Blocks != 4800 {
		t.Errorf("entries %v, histogram %+v", e.Entries, e.Histogram.Total())
	}
}

// A sample that kept nothing estimates nothing: its JSON has null
// intervals (no ratio of 0 within 0 to 0) and reliable false. One kept
// content gives intervals of width 0, and reliable false too.
func TestSampleEstimateJSON(t *testing.T) {
	t.Parallel()
	none := EstimateSample(func(func(Entry) bool) {}, 1<<20)
	b, err := json.Marshal(none)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"n":1048576,"sampled":0,"entries":null,"dedup":null,"compress":null,"combined":null,"allocated":null,"reliable":false}`
	if string(b) != want {
		t.Errorf("nothing sampled:\n got %s\nwant %s", b, want)
	}
	one := EstimateSample(func(f func(Entry) bool) { f(Entry{Refcnt: 2, LSize: 4096, PSize: 4096, DSize: 4096}) }, 1024)
	b, err = json.Marshal(one)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["reliable"] != false || doc["sampled"] != 1.0 || doc["dedup"] == nil || doc["histogram"] != nil {
		t.Errorf("one content sampled: %s", b)
	}
}

// A skewed sample's hint from the count of every block is a dedup ratio:
// at least 1 (found by a new user: "counting every block suggests about
// 0.67" for 70 blocks estimated, 24 counted, dedup 1.96).
func TestDedupByCountAtLeastOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		counted uint64
		want    float64
	}{{24, 1}, {140, 3.92}} {
		e := SampleEstimate{N: 10, Sampled: 5, Dedup: Interval{Value: 1.96}, Blocks: Interval{Value: 70, Low: 60, High: 80}}
		e.CheckCounted(c.counted)
		if !e.Skewed || math.Abs(e.DedupByCount-c.want) > 1e-9 {
			t.Errorf("counted %d: skewed %v, by count %g; want skewed, %g", c.counted, e.Skewed, e.DedupByCount, c.want)
		}
	}
}
