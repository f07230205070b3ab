package compare

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

func TestCompareEqualAndDifferent(t *testing.T) {
	t.Parallel()
	h := workedHistogram()
	p := zdb.ParseString(workedZdbS)
	c, err := Compare(h, p, Options{BytesSuffix: true, Model: "m", Source: "s"})
	if err != nil || c.Outcome != Equal || !c.Equal || len(c.Differences) != 0 {
		t.Fatalf("equal: %v %+v", err, c)
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil || !strings.Contains(b.String(), "EQUAL within display precision: all 32 cells (3 buckets and the Total row) and the 4 ratios") {
		t.Errorf("text:\n%s", b.String())
	}

	// One more reference of the refcnt-8 block: bucket 8 and the Total
	// row differ in referenced columns only.
	h2 := &ddt.Histogram{}
	h2.Add(1, 5120, 5120, 8192)
	for range 3 {
		h2.Add(2, 131072, 131072, 131072)
	}
	h2.Add(9, 131072, 131072, 131072)
	c, err = Compare(h2, p, Options{BytesSuffix: true})
	if err != nil || c.Outcome != Different {
		t.Fatalf("different: %v %+v", err, c)
	}
	want := "refcnt 8 bucket (line 9): referenced blocks predicted 9, actual 8 (+1, +12.5%); referenced LSIZE predicted 1.12M, actual 1M (+128K, +12.5%)"
	if len(c.Differences) == 0 || !strings.HasPrefix(c.Differences[0], want) {
		t.Errorf("differences %q, want first %q", c.Differences, want)
	}
	if len(c.Causes) == 0 || !strings.Contains(c.Causes[0], "fewer blocks on the pool than predicted") {
		t.Errorf("causes %q", c.Causes)
	}
}

// A predicted value equal to the one integer a text excludes differs: zdb
// prints 2048 as "2K", never as "2.00K".
func TestCompareExcludedInteger(t *testing.T) {
	t.Parallel()
	v, _ := nicenum.Parse("2.00K")
	if v.Contains(2048) || !v.Contains(2047) || !v.Contains(2049) {
		t.Fatalf("2.00K: %+v", v)
	}
	text := strings.NewReplacer("     1        1      5K      5K      8K        1      5K      5K      8K",
		"     1        1   2.00K   2.00K      8K        1   2.00K   2.00K      8K").Replace(workedZdbS)
	h := &ddt.Histogram{}
	h.Add(1, 2048, 2048, 8192)
	for range 3 {
		h.Add(2, 131072, 131072, 131072)
	}
	h.Add(8, 131072, 131072, 131072)
	c, err := Compare(h, zdb.ParseString(text), Options{BytesSuffix: true})
	if err != nil || c.Outcome != Different || !strings.Contains(c.Differences[0], "allocated LSIZE predicted 2K, actual 2.00K (≠") {
		t.Errorf("%v %+v", err, c)
	}
}

func TestCompareUnusable(t *testing.T) {
	t.Parallel()
	h := workedHistogram()
	for name, text := range map[string]string{
		"empty":       "",
		"no table":    "DDT-sha256-zap-unique: 402 entries, size 271 on disk, 155 in core\n",
		"bad row":     strings.Replace(workedZdbS, "    384K    384K    384K        6", "    384K    3.8Q    384K        6", 1),
		"only prompt": "$ zdb -S tank\n",
		// ddtsim --read's own table (found by a new user: compared as a
		// pool's).
		"ddtsim estimate": "ESTIMATE from a 5% random read of the records: not what zdb -S would print\n" + workedZdbS,
	} {
		_, err := Compare(h, zdb.ParseString(text), Options{})
		if !errors.Is(err, ErrUnusable) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

// Without a ratio line (zpool status -D) the ratios are compared with the
// range the Total row allows; JSON holds no infinities.
func TestCompareRatiosFromTotals(t *testing.T) {
	t.Parallel()
	status := " dedup: DDT entries 5, size 1.50K on disk, 500B in core\n" + workedZdbS[len("Simulated DDT histogram:\n"):strings.Index(workedZdbS, "dedup =")]
	p := zdb.ParseString(status)
	c, err := Compare(workedHistogram(), p, Options{})
	if err != nil || c.Outcome != Equal || len(c.Ratios) != 4 || !c.Ratios[0].FromTotals {
		t.Fatalf("%v %+v", err, c)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "real DDT") {
		t.Errorf("notes %q", c.Notes)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Error(err)
	}
}

// A text from another release than the model is named as a cause.
func TestCompareEraNote(t *testing.T) {
	t.Parallel()
	text := strings.NewReplacer("      5K      5K      8K        1      5K      5K      8K",
		"      5K     512     512        1      5K     512     512").Replace(workedZdbS)
	h := &ddt.Histogram{}
	h.Add(1, 5120, 512, 512)
	for range 3 {
		h.Add(2, 131072, 131072, 131072)
	}
	h.Add(8, 131072, 131072, 131072)
	p := zdb.ParseString(text)
	if p.Era.To != "0.6" {
		t.Fatalf("era %+v", p.Era)
	}
	c, err := Compare(h, p, Options{ReleaseFrom: "2.3", ReleaseTo: "2.4"})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(append(c.Notes, c.Causes...), "\n")
	if !strings.Contains(all, "pass --release") {
		t.Errorf("no era note: %q (%v, %q)", all, c.Outcome, c.Differences)
	}
}

// zdbText is what zdb -S prints for h.
func zdbText(t *testing.T, h *ddt.Histogram) *zdb.Parsed {
	t.Helper()
	var b strings.Builder
	if err := zdb.WriteSimulated(&b, h, true); err != nil {
		t.Fatal(err)
	}
	return zdb.ParseString(b.String())
}

// The likely causes read the pattern of the totals: the same logical size
// in another number of blocks is a recordsize difference (either way);
// the same LSIZE with PSIZE, DSIZE and DSIZE/PSIZE differing is the
// sector size (ashift) or layout before the compression; the same PSIZE
// with DSIZE differing is the layout (ashift, vdevs, copies).
func TestCompareCausesRecordsizeAndAshift(t *testing.T) {
	t.Parallel()
	// The same 8 MiB of files as 64 records of 128K or 512 of 16K.
	big, small := &ddt.Histogram{}, &ddt.Histogram{}
	for i := 0; i < 64; i++ {
		big.Add(uint64(1+i%3), 128<<10, 96<<10, 96<<10)
	}
	for i := 0; i < 512; i++ {
		small.Add(uint64(1+i%3), 16<<10, 12<<10, 12<<10)
	}
	// ashift 12 vs 9: compressed blocks round to 4K vs 512 B; an
	// uncompressed 5K block is 5K of PSIZE either way but takes 8K of DSIZE
	// on 4K sectors.
	a12, a9 := &ddt.Histogram{}, &ddt.Histogram{}
	for i := 0; i < 50; i++ {
		a12.Add(1, 128<<10, 68<<10, 68<<10)
		a9.Add(1, 128<<10, 66<<10+512, 66<<10+512)
		a12.Add(2, 5<<10, 5<<10, 8<<10)
		a9.Add(2, 5<<10, 5<<10, 5<<10)
	}
	// The same blocks on raidz: DSIZE only.
	raidz := &ddt.Histogram{}
	for i := 0; i < 50; i++ {
		raidz.Add(1, 128<<10, 68<<10, 102<<10)
		raidz.Add(2, 5<<10, 5<<10, 12<<10)
	}
	// Another compression: PSIZE differs, DSIZE/PSIZE does not.
	zle := &ddt.Histogram{}
	for i := 0; i < 50; i++ {
		zle.Add(1, 128<<10, 100<<10, 100<<10)
		zle.Add(2, 5<<10, 5<<10, 8<<10)
	}
	for _, c := range []struct {
		name         string
		pred, actual *ddt.Histogram
		first        string // in the first cause
		not          string // in no cause
	}{
		{"written with 128K, modelled 16K", small, big, "written with a larger recordsize", "pool holds more data blocks"},
		{"written with 16K, modelled 128K", big, small, "written with a smaller recordsize", "pool holds more data blocks"},
		{"ashift 9, modelled 12", a12, a9, "sector size (ashift)", "recordsize"},
		{"ashift 12, modelled 9", a9, a12, "sector size (ashift)", "recordsize"},
		{"raidz, modelled a disk", a12, raidz, "same compressed size but different allocated size", "different compressed size"},
		{"zle, modelled lz4", a12, zle, "different compression on disk", "ashift"},
	} {
		cmp, err := Compare(c.pred, zdbText(t, c.actual), Options{BytesSuffix: true})
		if err != nil || cmp.Outcome != Different || len(cmp.Causes) == 0 {
			t.Fatalf("%s: %v %+v", c.name, err, cmp)
		}
		if !strings.Contains(cmp.Causes[0], c.first) {
			t.Errorf("%s: first cause %q, want %q", c.name, cmp.Causes[0], c.first)
		}
		for _, cause := range cmp.Causes {
			if strings.Contains(cause, c.not) {
				t.Errorf("%s: cause %q should not be given", c.name, cause)
			}
		}
	}
}

// The worked example of zfs-semantics §2.3 (internal/testkit).
const workedZdbS = testkit.WorkedZdbS

var workedHistogram = testkit.WorkedHistogram
