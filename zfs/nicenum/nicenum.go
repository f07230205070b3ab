package nicenum

import (
	"strconv"
	"strings"
)

// Format formats num the way OpenZFS zfs_nicenum_format() does
// (lib/libzutil/zutil_nicenum.c, 0.7.0+), in base 1024. With bytes = true it
// is the byte formatter (zfs_nicebytes: "512B", "1.50K"), otherwise the count
// formatter ("512", "1K"). The result has at most 5 characters.
//
// Rules: values below 1024 print as integers; exact multiples of 1024^i print
// as integer plus suffix; anything else tries %.2f, %.1f, %.0f and keeps the
// first that is at most 5 characters long.
func Format(num uint64, bytes bool) string {
	const suffixes = "KMGTPE"
	n := num
	i := 0
	for n >= 1024 && i < 6 {
		n /= 1024
		i++
	}
	suffix := ""
	if i > 0 {
		suffix = suffixes[i-1 : i]
	} else if bytes {
		suffix = "B"
	}
	if i == 0 || num%(uint64(1)<<(10*i)) == 0 {
		return strconv.FormatUint(n, 10) + suffix
	}
	v := float64(num) / float64(uint64(1)<<(10*i))
	var s string
	for p := 2; p >= 0; p-- {
		s = strconv.FormatFloat(v, 'f', p, 64) + suffix
		if len(s) <= 5 {
			break
		}
	}
	return s
}

// IEC is Format's byte size with its unit written out in IEC form, for a
// person rather than for zdb's columns: "512 B", "2.15 MiB", "128 KiB"
// (the same digits as Format(num, true), whose "K", "M", ... are KiB,
// MiB, ...), but for a size just under a unit that Format rounds up to
// 1024 of the unit below ("1024M" for 1 GiB less 16 KiB), which reads
// "1.00 GiB": a person reading "1024 MiB of the 1 GiB" took them for two
// sizes (found by a new user).
func IEC(num uint64) string {
	s := Format(num, true)
	u := s[len(s)-1]
	if u == 'B' {
		return s[:len(s)-1] + " B"
	}
	if i := strings.IndexByte(units, u); s[:len(s)-1] == "1024" && i >= 0 && i+1 < len(units) {
		return "1.00 " + string(units[i+1]) + "iB"
	}
	return s[:len(s)-1] + " " + string(u) + "iB"
}

// units are Format's unit letters above bytes, in order.
const units = "KMGTPE"
