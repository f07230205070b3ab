package nicenum

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkInterval asserts the defining property of Parse: every integer
// of the set prints as the text, the integers just outside do not, and the
// excluded one does not.
func checkInterval(t *testing.T, tok string, v Value) {
	t.Helper()
	pr := func(x uint64) string { return Format(x, false) }
	if tok[len(tok)-1] == 'B' {
		pr = func(x uint64) string { return Format(x, true) }
	}
	if v.Lo > v.Hi {
		t.Fatalf("%s: empty interval %d..%d", tok, v.Lo, v.Hi)
	}
	if v.Hi-v.Lo <= 1<<16 {
		for x := v.Lo; ; x++ {
			if got := pr(x); (got == tok) != v.Contains(x) {
				t.Fatalf("%s: %d prints as %q, Contains = %v", tok, x, got, v.Contains(x))
			}
			if x == v.Hi {
				break
			}
		}
	} else {
		r := rand.New(rand.NewPCG(1, uint64(v.Lo)))
		for range 2000 {
			x := v.Lo + r.Uint64N(v.Hi-v.Lo+1)
			if got := pr(x); (got == tok) != v.Contains(x) {
				t.Fatalf("%s: %d prints as %q, Contains = %v", tok, x, got, v.Contains(x))
			}
		}
		for _, x := range []uint64{v.Lo, v.Lo + 1, v.Hi - 1, v.Hi} {
			if pr(x) != tok && x != v.Except {
				t.Fatalf("%s: %d prints as %q", tok, x, pr(x))
			}
		}
	}
	if v.Lo > 0 && pr(v.Lo-1) == tok {
		t.Errorf("%s: %d (below Lo) prints as the token too", tok, v.Lo-1)
	}
	if v.Hi < math.MaxUint64 && pr(v.Hi+1) == tok {
		t.Errorf("%s: %d (above Hi) prints as the token too", tok, v.Hi+1)
	}
	if v.Except != 0 && pr(v.Except) == tok {
		t.Errorf("%s: excluded %d prints as the token", tok, v.Except)
	}
}

func TestParseValueKnown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tok    string
		lo, hi uint64
		except uint64
	}{
		{"0", 0, 0, 0},
		{"0B", 0, 0, 0},
		{"512", 512, 512, 0},
		{"512B", 512, 512, 0},
		{"1023B", 1023, 1023, 0},
		{"1K", 1024, 1024, 0},
		{"2K", 2048, 2048, 0},
		{"64K", 65536, 65536, 0},
		{"1.00K", 1025, 1029, 0},
		{"1.12K", 1142, 1152, 0}, // 1152 = 1.125 K exactly: a tie, rounds to even
		{"1.50K", 1531, 1541, 0},
		{"2.00K", 2043, 2053, 2048},
		{"10.0K", 10235, 10291, 10240},
		{"10K", 10240, 10240, 0},
		{"128K", 130560, 131584, 0}, // 127.5K .. 128.5K (both ties round to even), the exact 131072 included
		{"1024K", 1048064, 1048575, 0},
		{"1M", 1 << 20, 1 << 20, 0},
		{"3.00G", 3*(1<<30) - 5368709, 3*(1<<30) + 5368709, 3 << 30},
		{"16.0E", 18389097998479209473, math.MaxUint64, 0}, // from 15.95E, as far as float64 resolves it
		{"10844792422", 10844792422, 10844792422, 0},       // raw (-P)
	}
	for _, c := range cases {
		v, err := Parse(c.tok)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.tok, err)
			continue
		}
		if v.Lo != c.lo || v.Hi != c.hi || v.Except != c.except {
			t.Errorf("Parse(%q) = [%d, %d] except %d; want [%d, %d] except %d",
				c.tok, v.Lo, v.Hi, v.Except, c.lo, c.hi, c.except)
		}
		if raw := c.tok[len(c.tok)-1] <= '9' && c.lo >= 1024; !raw {
			checkInterval(t, c.tok, v)
		}
	}
}

func TestParseValueRejects(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{"", "B", "K", "1.5K", "2.0K", "10.00K", "100.0K", "0K", "1025K", "1024B",
		"0.5K", "-1", "1e3", "1.", ".5K", "01K", "1.5", "12Q", "17.0E", "99999999999999999999", "1,5K", "10.1"} {
		if v, err := Parse(tok); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", tok, v)
		}
	}
}

// Every text the formatter prints parses back to an interval containing
// the number, and that interval is exactly the set of numbers printing so.
func TestParseValueRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	var nums []uint64
	for x := uint64(0); x < 3<<20; x += 1 + x/997 {
		nums = append(nums, x)
	}
	for range 3000 {
		nums = append(nums, r.Uint64()>>r.UintN(64))
	}
	for k := 1; k <= 6; k++ {
		u := uint64(1) << (10 * k)
		for _, n := range []uint64{1, 2, 9, 10, 99, 100, 1023} {
			if n*u/u == n && (k < 6 || n < 16) {
				nums = append(nums, n*u-1, n*u, n*u+1)
			}
		}
	}
	nums = append(nums, math.MaxUint64)
	seen := map[string]bool{}
	for _, x := range nums {
		for _, bytes := range []bool{false, true} {
			tok := Format(x, bytes)
			v, err := Parse(tok)
			if err != nil {
				t.Fatalf("Format(%d) = %q does not parse: %v", x, tok, err)
			}
			if !v.Contains(x) {
				t.Fatalf("Format(%d) = %q parses to [%d, %d] except %d", x, tok, v.Lo, v.Hi, v.Except)
			}
			if !seen[tok] {
				seen[tok] = true
				checkInterval(t, tok, v)
			}
		}
	}
}

func TestParseRatio(t *testing.T) {
	t.Parallel()
	r, err := ParseRatio("1.90")
	if err != nil || !r.Contains(1.895) || !r.Contains(1.9049) || r.Contains(1.906) || r.Contains(1.894) {
		t.Errorf("ParseRatio(1.90) = %+v, %v", r, err)
	}
	for _, tok := range []string{"", "x", "1.", "-1.00", "1.0.0", "inf"} {
		if _, err := ParseRatio(tok); err == nil {
			t.Errorf("ParseRatio(%q) accepted", tok)
		}
	}
}
