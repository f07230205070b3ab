package nicenum

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Value is a number as OpenZFS printed it, kept at its display precision:
// the text and the set of integers that print as that text.
//
// The set is every integer in [Lo, Hi] except Except (when Except is not
// 0). A plain integer ("512", "1000", or any raw integer as `zdb -P` prints
// it) is exact: Lo = Hi. A nicenum with a suffix ("10.1G", "128K", "1.50K")
// stands for every integer that zfs_nicenum_format() prints as that text,
// which is found with the formatter itself (Format), so the rounding of
// %.2f, %.1f and %.0f, the switch between them and the exact-multiple rule
// are all accounted for. Only the exact-multiple rule can leave a gap: the
// integer 2048 prints as "2K", so the set of "2.00K" is [2043, 2053] without
// 2048, and that one integer is Except.
type Value struct {
	Text   string `json:"text"`
	Lo     uint64 `json:"lo"`
	Hi     uint64 `json:"hi"`
	Except uint64 `json:"except,omitempty"`
}

// Exact reports whether the text stands for exactly one integer.
func (v Value) Exact() bool { return v.Lo == v.Hi }

// Contains reports whether the integer x prints as v's text.
func (v Value) Contains(x uint64) bool {
	return x >= v.Lo && x <= v.Hi && (v.Except == 0 || x != v.Except)
}

// Distance returns how far x lies outside [Lo, Hi]: negative when x is
// below, positive above, 0 inside. (An x equal to Except is inside the
// range; Contains tells it apart.)
func (v Value) Distance(x uint64) float64 {
	switch {
	case x < v.Lo:
		return -float64(v.Lo - x)
	case x > v.Hi:
		return float64(x - v.Hi)
	}
	return 0
}

// Mid returns the middle of [Lo, Hi].
func (v Value) Mid() float64 { return float64(v.Lo)/2 + float64(v.Hi)/2 }

func (v Value) String() string { return v.Text }

// ExactValue returns the Value of an exactly known integer.
func ExactValue(x uint64) Value { return Value{Text: strconv.FormatUint(x, 10), Lo: x, Hi: x} }

// Interval is a closed interval of integers, used for sums of Values.
type Interval struct {
	Lo uint64 `json:"lo"`
	Hi uint64 `json:"hi"`
}

// Interval returns v's [Lo, Hi].
func (v Value) Interval() Interval { return Interval{v.Lo, v.Hi} }

// Add returns the interval sum s + o, saturating at 2^64-1.
func (s Interval) Add(o Interval) Interval { return Interval{SatAdd(s.Lo, o.Lo), SatAdd(s.Hi, o.Hi)} }

// Mul returns s × k, saturating.
func (s Interval) Mul(k uint64) Interval { return Interval{SatMul(s.Lo, k), SatMul(s.Hi, k)} }

// Overlaps reports whether the two intervals share an integer.
func (s Interval) Overlaps(o Interval) bool { return s.Lo <= o.Hi && o.Lo <= s.Hi }

// Contains reports whether x is in s.
func (s Interval) Contains(x uint64) bool { return x >= s.Lo && x <= s.Hi }

// Outside returns how far x lies outside s, relative to s's middle: 0
// inside, negative below, positive above (0.05 = 5% too high).
func (s Interval) Outside(x uint64) float64 {
	mid := float64(s.Lo)/2 + float64(s.Hi)/2
	switch {
	case mid == 0 || s.Contains(x):
		return 0
	case x < s.Lo:
		return (float64(x) - float64(s.Lo)) / mid
	}
	return (float64(x) - float64(s.Hi)) / mid
}

func (s Interval) String() string {
	if s.Lo == s.Hi {
		return strconv.FormatUint(s.Lo, 10)
	}
	return strconv.FormatUint(s.Lo, 10) + ".." + strconv.FormatUint(s.Hi, 10)
}

// SatAdd is a+b, or math.MaxUint64 when the sum overflows.
func SatAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return math.MaxUint64
	}
	return s
}

// SatMul is a*b, or math.MaxUint64 when the product overflows.
func SatMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// Parse reads one number as OpenZFS prints it in DDT tables and dedup
// summaries: a plain integer (exact), an integer with a "B" suffix (the byte
// formatter below 1 KiB, exact), or a nicenum with one of the suffixes K, M,
// G, T, P, E. A text the formatter can never produce ("1.5K", "2.0K",
// "10.00K", "1025K") is an error, never a guess.
func Parse(tok string) (Value, error) {
	bad := func(why string) (Value, error) {
		return Value{}, fmt.Errorf("%q is not a number zdb prints: %s", tok, why)
	}
	if tok == "" {
		return bad("empty")
	}
	body := tok
	suffix := byte(0)
	if c := tok[len(tok)-1]; c < '0' || c > '9' {
		suffix = c
		body = tok[:len(tok)-1]
	}
	intPart, frac, hasDot := strings.Cut(body, ".")
	if intPart == "" || !allDigits(intPart) || (hasDot && (frac == "" || !allDigits(frac))) {
		return bad("expected digits, an optional fraction and an optional suffix (B K M G T P E)")
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		return bad("leading zero")
	}
	switch {
	case suffix == 0 || suffix == 'B':
		if hasDot {
			return bad("a fraction needs a K, M, G, T, P or E suffix")
		}
		n, err := strconv.ParseUint(intPart, 10, 64)
		if err != nil {
			return bad("out of range")
		}
		if suffix == 'B' && n >= 1024 {
			return bad("the B suffix is printed only below 1024")
		}
		return Value{Text: tok, Lo: n, Hi: n}, nil
	case strings.IndexByte("KMGTPE", suffix) < 0:
		return bad(fmt.Sprintf("unknown suffix %q", suffix))
	}
	if len(frac) > 2 || len(intPart) > 4 {
		return bad("more digits than the 5-character field holds")
	}
	i := strings.IndexByte("KMGTPE", suffix) + 1
	m, _ := strconv.ParseUint(intPart, 10, 64)
	m *= 100
	if hasDot {
		f, _ := strconv.ParseUint(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
		m += f
	}
	want := nicekey{i, m}
	// Format's displayed value is non-decreasing in its argument, so the
	// integers with the same displayed value form one range [lo, hi].
	// The boundaries lie near (m/100 ± half a unit of the last digit) ×
	// 1024^i; search a small window there first, everything if that fails.
	unitF := math.Ldexp(1, 10*i)
	// The fraction digits the formatter uses at this magnitude: %.2f for
	// 1.00-9.99, %.1f for 10.0-99.9, %.0f above (also around an exact
	// multiple printed without a fraction, such as "2K").
	half := 0.5 * math.Pow(10, -float64(max(0, 3-len(intPart))))
	mf := float64(m) / 100
	lo, ok := searchNear((mf-half)*unitF, func(x uint64) bool { return !keyOf(x).less(want) })
	if !ok {
		return bad("no integer prints like this")
	}
	hi, ok := searchNear((mf+half)*unitF, func(x uint64) bool { return want.less(keyOf(x)) })
	switch {
	case !ok:
		hi = math.MaxUint64
	case hi <= lo:
		return bad("no integer prints like this")
	default:
		hi--
	}
	v := Value{Text: tok, Lo: lo, Hi: hi}
	// Inside that range the exact multiple of 1024^i (if any) prints as an
	// integer with the suffix, everything else with the fraction digits the
	// width allows.
	unit := uint64(1) << (10 * i)
	exactN := m / 100
	exact := uint64(0)
	if m%100 == 0 && exactN <= math.MaxUint64/unit {
		exact = exactN * unit
	}
	hasExact := exact != 0 && v.Contains(exact)
	switch {
	case !hasDot && len(intPart) <= 2:
		// "2K", "64K": only the exact multiple prints without a fraction.
		if !hasExact {
			return bad("no integer prints like this")
		}
		v.Lo, v.Hi = exact, exact
	case hasExact && Format(exact, false) != tok:
		v.Except = exact
		if v.Lo == exact {
			v.Lo++
		}
		if v.Hi == exact {
			v.Hi--
		}
		if v.Lo == v.Hi+1 {
			return bad("no integer prints like this")
		}
		if v.Except == v.Lo-1 || v.Except == v.Hi+1 {
			v.Except = 0
		}
	}
	if Format(v.Lo, false) != tok || Format(v.Hi, false) != tok {
		return bad("no integer prints like this")
	}
	return v, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// nicekey is the displayed value of a nicenum: the suffix index and the
// digits in hundredths ("10.1G" → {3, 1010}).
type nicekey struct {
	i int
	m uint64
}

func (a nicekey) less(b nicekey) bool { return a.i < b.i || (a.i == b.i && a.m < b.m) }

// keyOf returns the displayed value of Format(x).
func keyOf(x uint64) nicekey {
	s := Format(x, false)
	i := 0
	if c := s[len(s)-1]; c < '0' || c > '9' {
		i = strings.IndexByte("KMGTPE", c) + 1
		s = s[:len(s)-1]
	}
	ip, fp, _ := strings.Cut(s, ".")
	m, _ := strconv.ParseUint(ip, 10, 64)
	m *= 100
	if fp != "" {
		f, _ := strconv.ParseUint(fp, 10, 64)
		if len(fp) == 1 {
			f *= 10
		}
		m += f
	}
	return nicekey{i, m}
}

// searchNear is searchFirst for an f that turns true near guess: it
// searches a window of a few units in the last place around it, and the
// whole range when f does not change inside the window.
func searchNear(guess float64, f func(uint64) bool) (uint64, bool) {
	d := 4 + math.Abs(guess)*0x1p-48
	a, b := guess-d, guess+d
	if a > 0 && b < 0x1p63 {
		lo, hi := uint64(a), uint64(b)
		if !f(lo) && f(hi) {
			for lo+1 < hi { // f(lo) false, f(hi) true
				mid := lo + (hi-lo)/2
				if f(mid) {
					hi = mid
				} else {
					lo = mid
				}
			}
			return hi, true
		}
	}
	return searchFirst(f)
}

// searchFirst returns the smallest x in [0, 2^64-1] with f(x) true, for f
// false then true; ok is false when f is never true.
func searchFirst(f func(uint64) bool) (x uint64, ok bool) {
	if !f(math.MaxUint64) {
		return 0, false
	}
	lo, hi := uint64(0), uint64(math.MaxUint64) // f(hi) is true
	for lo < hi {
		mid := lo + (hi-lo)/2
		if f(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, true
}

// Ratio is one figure of the ratio line, printed with %.2f: the text and
// the interval of values that print as it.
type Ratio struct {
	Text string  `json:"text"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// ParseRatio reads a ratio printed with %.Nf ("1.90", "34.60").
func ParseRatio(tok string) (Ratio, error) {
	ip, fp, hasDot := strings.Cut(tok, ".")
	if ip == "" || !allDigits(ip) || (hasDot && (fp == "" || !allDigits(fp))) {
		return Ratio{}, fmt.Errorf("%q is not a ratio (digits with an optional fraction)", tok)
	}
	v, err := strconv.ParseFloat(tok, 64)
	if err != nil || math.IsInf(v, 0) {
		return Ratio{}, fmt.Errorf("%q is not a ratio", tok)
	}
	half := 0.5 * math.Pow(10, -float64(len(fp)))
	return Ratio{Text: tok, Lo: math.Max(0, v-half), Hi: v + half}, nil
}

// Contains reports whether x prints as r (the interval is closed: a tie
// may round either way).
func (r Ratio) Contains(x float64) bool { return x >= r.Lo && x <= r.Hi }

// Distance returns how far x lies outside r: negative below, positive
// above, 0 inside.
func (r Ratio) Distance(x float64) float64 {
	switch {
	case x < r.Lo:
		return x - r.Lo
	case x > r.Hi:
		return x - r.Hi
	}
	return 0
}
