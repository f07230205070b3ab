package ddt

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"
)

// testDSize is a DSIZE function: whole 4K sectors, deflate ratio 512.
func testDSize(p uint64) uint64 { return (p + 4095) &^ 4095 }

// randKey returns a uniformly random key (as BLAKE3 gives).
func randKey(r *rand.Rand) Key {
	var k Key
	for i := 0; i < len(k); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			k[i+j] = byte(v >> (8 * j))
		}
	}
	return k
}

// prefixOf is k as the table keeps it: its first 16 bytes.
func prefixOf(k Key) Key {
	var p Key
	copy(p[:16], k[:16])
	return p
}

// sizesOf gives a key its fixed sizes, as compression is deterministic:
// LSIZE 512 … 128K, PSIZE 0 (embedded) or whole sectors up to LSIZE; a few
// keys get sizes that are not whole sectors (kept in the side map).
func sizesOf(k Key) (lsize, psize uint32) {
	lsize = 512 << (k[20] % 9)
	switch {
	case k[21]%8 == 0:
		return lsize, 0
	case k[23] == 0:
		return 1000 + uint32(k[24]), 777
	}
	return lsize, min(lsize, 512*(1+uint32(k[22])))
}

// TestFirstOnceConcurrent: with 8 goroutines referencing the same keys,
// each key's first Ref returns true exactly once, and every reference
// counts.
func TestFirstOnceConcurrent(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]Key, 20000)
	for i := range keys {
		keys[i] = randKey(r)
	}
	tb := NewTable(testDSize)
	var firsts [20000]int32
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(w), 9))
			for _, i := range rr.Perm(len(keys)) {
				l, p := sizesOf(keys[i])
				if tb.Ref(keys[i], l) {
					mu.Lock()
					firsts[i]++
					mu.Unlock()
					runtime.Gosched() // let others Ref it while pending
					tb.Set(keys[i], p)
				}
			}
		}()
	}
	wg.Wait()
	for i, n := range firsts {
		if n != 1 {
			t.Fatalf("key %d: first returned %d times", i, n)
		}
	}
	if tb.Len() != len(keys) {
		t.Errorf("Len %d, want %d", tb.Len(), len(keys))
	}
	for _, k := range keys {
		e, ok := tb.Lookup(k)
		l, p := sizesOf(k)
		want := Entry{Refcnt: 8, LSize: l, PSize: p}
		if p != 0 {
			want.DSize = testDSize(uint64(p))
		}
		if !ok || e != want {
			t.Fatalf("Lookup = %+v, %v; want %+v", e, ok, want)
		}
	}
}

// Refcnts past 2^32 − 1 (the zero block of a huge sparse file) are exact.
func TestRefNOverflow(t *testing.T) {
	t.Parallel()
	tb := NewTable(nil)
	r := rand.New(rand.NewPCG(3, 4))
	a, b, c := randKey(r), randKey(r), randKey(r)
	if !tb.RefN(a, 131072, 1<<31) {
		t.Fatal("first RefN not first")
	}
	tb.Set(a, 131072)
	tb.RefN(a, 131072, 1<<31) // 2^32: past uint32
	tb.RefN(a, 131072, 1<<31) // 3·2^31
	tb.Ref(a, 131072)
	tb.RefN(b, 4096, math.MaxUint32-1) // just below the side map
	tb.Set(b, 4096)
	tb.RefN(b, 4096, 1)
	tb.RefN(c, 512, 1<<40) // past uint32 at once, while pending
	tb.Set(c, 512)
	for _, x := range []struct {
		k    Key
		want uint64
	}{{a, 3<<31 + 1}, {b, math.MaxUint32}, {c, 1 << 40}} {
		if e, ok := tb.Lookup(x.k); !ok || e.Refcnt != x.want {
			t.Errorf("refcnt %d, want %d", e.Refcnt, x.want)
		}
	}
	h, s := tb.Summarize()
	if s.Refs != 3<<31+1+math.MaxUint32+1<<40 || h[32].Allocated.Blocks != 1 || h[31].Allocated.Blocks != 1 || h[40].Allocated.Blocks != 1 {
		t.Errorf("summary %+v, buckets 31 %+v 32 %+v", s, h[31], h[32])
	}
	if h[32].Referenced.LSize != (3<<31+1)*131072 {
		t.Errorf("referenced LSIZE %d", h[32].Referenced.LSize)
	}
}

// model is what a table should hold: refcnt and sizes per key prefix.
type model map[Key]Entry

func (m model) ref(k Key, n uint64) {
	l, p := sizesOf(k)
	e := m[prefixOf(k)]
	e.Refcnt += n
	e.LSize, e.PSize = l, p
	if p != 0 {
		e.DSize = testDSize(uint64(p))
	}
	m[prefixOf(k)] = e
}

func rangeAll(tb *Table) model {
	got := model{}
	tb.Range(func(k Key, e Entry) bool {
		if _, dup := got[k]; dup {
			panic("Range gave a key twice")
		}
		got[k] = e
		return true
	})
	return got
}

func TestRangeAndLookup(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	tb := NewTable(testDSize)
	want := model{}
	var keys []Key
	for i := 0; i < 50000; i++ {
		var k Key
		if i > 0 && r.IntN(3) == 0 {
			k = keys[r.IntN(len(keys))]
		} else {
			k = randKey(r)
			keys = append(keys, k)
		}
		n := uint64(1 + r.IntN(3))
		l, p := sizesOf(k)
		if tb.RefN(k, l, n) {
			tb.Set(k, p)
		}
		want.ref(k, n)
	}
	got := rangeAll(tb)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Range gave %d entries, want %d", len(got), len(want))
	}
	for k, e := range want {
		if g, ok := tb.Lookup(k); !ok || g != e {
			t.Fatalf("Lookup = %+v, %v; want %+v", g, ok, e)
		}
	}
	if _, ok := tb.Lookup(randKey(r)); ok {
		t.Error("Lookup found a key never added")
	}
	n := 0
	tb.Range(func(Key, Entry) bool { n++; return n < 10 })
	if n != 10 {
		t.Errorf("Range went on after false: %d calls", n)
	}
	// A pending entry (no Set yet) has PSize 0.
	k := randKey(r)
	tb.Ref(k, 4096)
	if e, ok := tb.Lookup(k); !ok || e != (Entry{Refcnt: 1, LSize: 4096}) {
		t.Errorf("pending entry %+v", e)
	}
}

// Keys that are not random (only a few bytes vary) still work, and many
// keys in one shard.
func TestStructuredKeys(t *testing.T) {
	t.Parallel()
	tb := NewTable(nil)
	for i := 0; i < 100000; i++ {
		var k Key
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		if !tb.Ref(k, 512) {
			t.Fatalf("key %d not first", i)
		}
		tb.Set(k, 512)
	}
	if tb.Len() != 100000 {
		t.Errorf("Len %d", tb.Len())
	}
	var k Key
	k[0], k[1] = 0x34, 0x12
	if e, ok := tb.Lookup(k); !ok || e.Refcnt != 1 {
		t.Errorf("Lookup %+v %v", e, ok)
	}
}

// BenchmarkTable1M inserts 1M unique keys (each referenced once, then its
// PSIZE set) and reports the table's memory: B/entry and MiB from the heap
// (runtime.MemStats.HeapAlloc after a GC, minus the same before), peak-MiB
// the largest heap growth seen while filling it, table-B/entry the table's
// own accounting (Bytes). It fails above 64 MiB.
//
//	go test -bench Table -run '^$' ./ddt/
func BenchmarkTable1M(b *testing.B) { benchTable(b, 1_000_000) }

// BenchmarkTable10M is BenchmarkTable1M with 10M keys (skipped with -short).
func BenchmarkTable10M(b *testing.B) {
	if testing.Short() {
		b.Skip("10M entries; skipped with -short")
	}
	benchTable(b, 10_000_000)
}

func benchTable(b *testing.B, n int) {
	var m0, m1, m runtime.MemStats
	var tb *Table
	var peak uint64
	var insert time.Duration
	for b.Loop() {
		tb = nil
		runtime.GC()
		runtime.ReadMemStats(&m0)
		r := rand.New(rand.NewPCG(7, 8))
		start := time.Now()
		tb = NewTable(testDSize)
		peak = 0
		for i := 0; i < n; i++ {
			k := randKey(r)
			tb.Ref(k, 131072)
			tb.Set(k, 65536)
			if i%(1<<16) == 0 {
				b.StopTimer()
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc-m0.HeapAlloc)
				b.StartTimer()
			}
		}
		insert = time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&m1)
	}
	live := m1.HeapAlloc - m0.HeapAlloc
	peak = max(peak, live)
	b.ReportMetric(float64(live)/float64(n), "B/entry")
	b.ReportMetric(float64(live)/(1<<20), "MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(tb.PeakBytes())/float64(n), "table-B/entry")
	b.ReportMetric(float64(insert.Nanoseconds())/float64(n), "ns/insert")
	if n == 1_000_000 && peak > 64<<20 {
		b.Errorf("1M entries take %.1f MiB at the peak, more than 64 MiB", float64(peak)/(1<<20))
	}
	runtime.KeepAlive(tb)
}

// Settled gives a key's PSIZE once Set, 0 for an embedded one (an odd
// LSIZE too), and nothing for a key not in the table or still pending.
func TestSettled(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	tb := NewTable(testDSize)
	a, b, c, d := randKey(r), randKey(r), randKey(r), randKey(r)
	for _, x := range []struct {
		k     Key
		lsize uint32
	}{{a, 4096}, {b, 4096}, {c, 1000}, {d, 4096}} {
		if !tb.Ref(x.k, x.lsize) {
			t.Fatal("first Ref not first")
		}
	}
	if _, ok := tb.Settled(a); ok {
		t.Error("a pending key settled")
	}
	tb.Set(a, 0)
	tb.Set(b, 2048)
	tb.Set(c, 0)
	for _, x := range []struct {
		k     Key
		psize uint32
		ok    bool
	}{{a, 0, true}, {b, 2048, true}, {c, 0, true}, {d, 0, false}, {randKey(r), 0, false}} {
		if p, ok := tb.Settled(x.k); p != x.psize || ok != x.ok {
			t.Errorf("Settled = %d, %v; want %d, %v", p, ok, x.psize, x.ok)
		}
	}
}
