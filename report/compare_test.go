package report

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/ddt"
)

func TestCompareEqualAndDifferent(t *testing.T) {
	h := workedHistogram()
	p := ParseString(workedZdbS)
	c, err := Compare(h, p, CompareOptions{BytesSuffix: true, Model: "m", Source: "s"})
	if err != nil || c.Exit != CompareEqual || !c.Equal || len(c.Differences) != 0 {
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
	c, err = Compare(h2, p, CompareOptions{BytesSuffix: true})
	if err != nil || c.Exit != CompareDiffer {
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
	v, _ := ParseValue("2.00K")
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
	c, err := Compare(h, ParseString(text), CompareOptions{BytesSuffix: true})
	if err != nil || c.Exit != CompareDiffer || !strings.Contains(c.Differences[0], "allocated LSIZE predicted 2K, actual 2.00K (≠") {
		t.Errorf("%v %+v", err, c)
	}
}

func TestCompareUnusable(t *testing.T) {
	h := workedHistogram()
	for name, text := range map[string]string{
		"empty":       "",
		"no table":    "DDT-sha256-zap-unique: 402 entries, size 271 on disk, 155 in core\n",
		"bad row":     strings.Replace(workedZdbS, "    384K    384K    384K        6", "    384K    3.8Q    384K        6", 1),
		"only prompt": "$ zdb -S tank\n",
	} {
		_, err := Compare(h, ParseString(text), CompareOptions{})
		if !errors.Is(err, ErrUnusable) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

// Without a ratio line (zpool status -D) the ratios are compared with the
// range the Total row allows; JSON holds no infinities.
func TestCompareRatiosFromTotals(t *testing.T) {
	status := " dedup: DDT entries 5, size 1.50K on disk, 500B in core\n" + workedZdbS[len("Simulated DDT histogram:\n"):strings.Index(workedZdbS, "dedup =")]
	p := ParseString(status)
	c, err := Compare(workedHistogram(), p, CompareOptions{})
	if err != nil || c.Exit != CompareEqual || len(c.Ratios) != 4 || !c.Ratios[0].FromTotals {
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
	text := strings.NewReplacer("      5K      5K      8K        1      5K      5K      8K",
		"      5K     512     512        1      5K     512     512").Replace(workedZdbS)
	h := &ddt.Histogram{}
	h.Add(1, 5120, 512, 512)
	for range 3 {
		h.Add(2, 131072, 131072, 131072)
	}
	h.Add(8, 131072, 131072, 131072)
	p := ParseString(text)
	if p.Era.To != "0.6" {
		t.Fatalf("era %+v", p.Era)
	}
	c, err := Compare(h, p, CompareOptions{ReleaseFrom: "2.3", ReleaseTo: "2.4"})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(append(c.Notes, c.Causes...), "\n")
	if !strings.Contains(all, "pass --release") {
		t.Errorf("no era note: %q (exit %d, %q)", all, c.Exit, c.Differences)
	}
}
