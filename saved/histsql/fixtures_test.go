package histsql

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// entryRow is one row of a scan's Parquet files, in the layout of the
// contract (the parquet tags are the column names; [16]byte is a
// FIXED_LEN_BYTE_ARRAY(16)). The DuckDB test writes these.
type entryRow struct {
	Key    [16]byte `parquet:"key"`
	Refcnt int64    `parquet:"refcnt"`
	LSize  int64    `parquet:"lsize"`
	PSize  int64    `parquet:"psize"`
	DSize  int64    `parquet:"dsize"`
}

// fixture is a set of scans, each the rows of one scan (one row per key).
type fixture struct {
	name  string
	scans [][]entryRow
}

// keyOf makes the key of block id: the first 16 bytes of a digest, so that
// keys spread over the 16 partitions.
func keyOf(id uint64) (k [16]byte) {
	d := sha256.Sum256(binary.LittleEndian.AppendUint64(nil, id))
	copy(k[:], d[:])
	return k
}

// sizes is the per-reference sizes of a block.
type sizes struct{ l, p, d int64 }

// sizesOf draws the sizes of block id: records of 512 B to 16 MiB,
// compressed to a multiple of 512 no larger, allocated in 4 KiB sectors
// with 1 to 3 copies.
func sizesOf(id uint64) sizes {
	r := rand.New(rand.NewPCG(id, 0x5eed))
	l := int64(512) << r.IntN(16) // 512 B to 16 MiB
	p := (1 + r.Int64N(l/512)) * 512
	d := (p + 4095) / 4096 * 4096 * (1 + r.Int64N(3))
	return sizes{l, p, d}
}

func row(id uint64, refcnt int64, s sizes) entryRow {
	return entryRow{Key: keyOf(id), Refcnt: refcnt, LSize: s.l, PSize: s.p, DSize: s.d}
}

func embedded(id uint64, refcnt int64) entryRow {
	return entryRow{Key: keyOf(id), Refcnt: refcnt, LSize: 4096, PSize: 0, DSize: 0}
}

// fixtures are the cases the query is checked on.
func fixtures() []fixture {
	return []fixture{
		{"one scan", [][]entryRow{oneScan()}},
		{"overlapping scans", overlapping()},
		{"large refcnts and sums", large()},
		{"embedded only", [][]entryRow{{embedded(1, 1), embedded(2, 7)}, {embedded(2, 9)}}},
		{"no rows", [][]entryRow{{}}},
	}
}

// oneScan has keys in buckets 0 to 11, at both ends of each and between,
// one key with 2^40 + 12345 references (bucket 40), and embedded blocks.
func oneScan() []entryRow {
	var rows []entryRow
	id := uint64(1000)
	r := rand.New(rand.NewPCG(1, 2))
	for b := range 12 {
		lo, hi := int64(1)<<b, int64(2)<<b-1
		for _, n := range []int64{lo, hi, lo + r.Int64N(hi-lo+1), lo + r.Int64N(hi-lo+1)} {
			rows = append(rows, row(id, n, sizesOf(id)))
			id++
		}
	}
	for range 300 { // most blocks are unique
		rows = append(rows, row(id, 1, sizesOf(id)))
		id++
	}
	rows = append(rows, row(id, 1<<40+12345, sizes{4096, 4096, 8192}))
	id++
	for i := range 20 {
		rows = append(rows, embedded(id, 1+int64(i)))
		id++
	}
	return rows
}

// overlapping is three scans (hosts) sharing keys: a key's references in
// the scans add up, often into a higher bucket than any scan's own.
func overlapping() [][]entryRow {
	scans := make([][]entryRow, 3)
	r := rand.New(rand.NewPCG(3, 4))
	for id := uint64(1); id <= 3000; id++ {
		s := sizesOf(id)
		for i := range scans {
			if r.IntN(3) == 0 {
				continue
			}
			n := int64(1)
			switch r.IntN(10) {
			case 0:
				n = 2 + r.Int64N(30)
			case 1:
				n = 100 + r.Int64N(1500)
			}
			scans[i] = append(scans[i], row(id, n, s))
		}
	}
	// Sums across a bucket boundary: 1+1 = 2, 3+1 = 4, 511+1 = 512,
	// 1000+1000+48 = 2048, and one key in every scan.
	for id, ns := range map[uint64][]int64{
		5001: {1, 1, 0}, 5002: {3, 0, 1}, 5003: {0, 511, 1}, 5004: {1000, 1000, 48}, 5005: {1, 1, 1},
	} {
		for i, n := range ns {
			if n > 0 {
				scans[i] = append(scans[i], row(id, n, sizesOf(id)))
			}
		}
	}
	// Embedded blocks, in several scans.
	for i := range scans {
		scans[i] = append(scans[i], embedded(6001, 5), embedded(6002+uint64(i), 2))
	}
	return scans
}

// large has refcnts of 2^40 and more in one row and in a sum of rows,
// referenced sums about 2^53 (one key's, and one bucket's of many keys)
// and up to just below 2^63, the top buckets 61 and 62, and an embedded
// block with 2^50 references. Each bucket's sums stay below 2^63.
func large() [][]entryRow {
	a := []entryRow{
		row(1, 1<<40+3, sizes{131072, 65536, 65536}),
		// ref_lsize 2^53 + 2^37 + ..., odd: not a DOUBLE.
		row(2, 1<<36+1<<20+1, sizes{131071, 131071, 393216}),
		// 2^43 + 1 references over two scans; ref_lsize just below 2^63.
		row(3, 1<<42, sizes{1048575, 524287, 1048575}),
		row(4, 1<<62-1, sizes{1, 1, 1}),
		row(5, 1<<62+12345, sizes{1, 1, 1}),
		embedded(6, 1<<50),
	}
	b := []entryRow{
		row(3, 1<<42+1, sizes{1048575, 524287, 1048575}),
		embedded(6, 1),
	}
	// 512 keys in bucket 20 of 16 MiB blocks: a ref_lsize of about 2^53.
	for id := uint64(100); id < 612; id++ {
		s := sizes{16 << 20, 16 << 20, 16 << 20}
		a = append(a, row(id, 1<<20+int64(id), s))
	}
	return [][]entryRow{a, b}
}

// native is the histogram of the scans computed in Go: the rows merged by
// key (refcnts added), then ddt.Histogram.Add for each key that is not
// embedded. It fails the test if a key's sizes differ between scans.
func native(t testing.TB, scans [][]entryRow) *ddt.Histogram {
	t.Helper()
	type agg struct {
		refcnt uint64
		s      sizes
	}
	merged := map[[16]byte]*agg{}
	var order [][16]byte
	for _, scan := range scans {
		for _, r := range scan {
			s := sizes{r.LSize, r.PSize, r.DSize}
			m := merged[r.Key]
			if m == nil {
				m = &agg{s: s}
				merged[r.Key] = m
				order = append(order, r.Key)
			}
			if m.s != s {
				t.Fatalf("fixture: key %x has sizes %v and %v", r.Key, m.s, s)
			}
			m.refcnt += uint64(r.Refcnt)
		}
	}
	h := new(ddt.Histogram)
	for _, k := range order {
		m := merged[k]
		if m.s.p == 0 {
			continue
		}
		h.Add(m.refcnt, uint64(m.s.l), uint64(m.s.p), uint64(m.s.d))
	}
	return h
}

// TestFixtures checks that the fixtures hold the cases they are meant to.
func TestFixtures(t *testing.T) {
	t.Parallel()
	nonEmpty := func(h *ddt.Histogram) (bs []int) {
		for b := range h {
			if h[b].Allocated.Blocks != 0 {
				bs = append(bs, b)
			}
		}
		return bs
	}
	h := native(t, [][]entryRow{oneScan()})
	for b := range 12 {
		if h[b].Allocated.Blocks == 0 {
			t.Errorf("one scan: bucket %d empty", b)
		}
	}
	if h[40].Allocated.Blocks != 1 {
		t.Errorf("one scan: bucket 40 has %d blocks, want 1", h[40].Allocated.Blocks)
	}

	// Overlapping: merged, some keys land in a higher bucket than in any
	// one scan.
	scans := overlapping()
	sum, most := map[[16]byte]int64{}, map[[16]byte]int64{}
	for _, scan := range scans {
		for _, r := range scan {
			sum[r.Key] += r.Refcnt
			most[r.Key] = max(most[r.Key], r.Refcnt)
		}
	}
	higher := 0
	for k := range sum {
		if bits.Len64(uint64(sum[k])) > bits.Len64(uint64(most[k])) {
			higher++
		}
	}
	if higher < 100 {
		t.Errorf("overlapping: %d keys change bucket when merged, want many", higher)
	}

	h = native(t, large())
	want := []int{20, 36, 40, 43, 61, 62}
	if got := nonEmpty(h); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("large: buckets %v, want %v", got, want)
	}
	if r := h[20].Referenced.LSize; r < 1<<53 || r > 1<<54 {
		t.Errorf("large: bucket 20 ref_lsize %d, want about 2^53", r)
	}
	if r := h[36].Referenced.LSize; r <= 1<<53 || r&1 == 0 {
		t.Errorf("large: bucket 36 ref_lsize %d, want an odd number above 2^53", r)
	}
	for b := range h {
		for _, v := range []uint64{h[b].Referenced.Blocks, h[b].Referenced.LSize, h[b].Referenced.PSize, h[b].Referenced.DSize} {
			if v >= 1<<63 {
				t.Errorf("large: bucket %d has a sum %d beyond BIGINT", b, v)
			}
		}
	}
	if h[43].Referenced.LSize < 1<<62 {
		t.Errorf("large: bucket 43 ref_lsize %d, want near 2^63", h[43].Referenced.LSize)
	}

	for _, f := range fixtures() {
		if f.name == "embedded only" || f.name == "no rows" {
			if got := nonEmpty(native(t, f.scans)); got != nil {
				t.Errorf("%s: buckets %v, want none", f.name, got)
			}
		}
	}
}
