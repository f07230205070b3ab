// Package escape makes file names safe to print and to put in JSON: the
// paths the scan reports (problems, breakdown groups, the paths named) can
// hold any bytes a file system allows.
package escape

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Path makes a file name safe to print and to put in JSON: printable
// UTF-8 is kept as it is; a byte that is not valid UTF-8 becomes \xNN, a
// control character \n, \t, \xNN or (U+0080 to U+009F) \u00NN, and a
// backslash \\ (only when something else had to be escaped, or when the
// name holds what would read as one of these escapes: \x, \u, \n or \t,
// so that ordinary names stay readable).
//
// Path is injective: two different names never print the same (the
// display of one escaped always holds \x, \u, \n or \t, and a name
// shown as it is holds none), so a group or a path printed stands for one
// name.
func Path(p string) string {
	clean := utf8.ValidString(p)
	if clean {
		for i, r := range p {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				clean = false
				break
			}
			if r == '\\' && i+1 < len(p) && strings.IndexByte("xunt", p[i+1]) >= 0 {
				clean = false // would read as an escape
				break
			}
		}
	}
	if clean {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "\\x%02x", p[i])
		case r == '\\':
			b.WriteString("\\\\")
		case r == '\n':
			b.WriteString("\\n")
		case r == '\t':
			b.WriteString("\\t")
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x80 && r < 0xa0: // not \xNN: that is the byte NN, not UTF-8
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}
