// Package escape makes file names safe to print and to put in JSON: the
// paths the scan reports (problems, breakdown groups, the paths named) can
// hold any bytes a file system allows.
package escape

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// Path makes a file name safe to print and to put in JSON: printable
// UTF-8 is kept as it is; a byte that is not valid UTF-8 becomes \xNN, a
// control character \n, \t, \xNN or (U+0080 to U+009F) \u00NN, a
// character that reorders or breaks the text around it (Bidi) \uNNNN,
// and a backslash \\ (only when something else had to be escaped, or
// when the name holds what would read as one of these escapes: \x, \u,
// \n or \t, so that ordinary names stay readable: a name "tab\there"
// with a backslash prints as tab\\there, one with a tab as tab\there).
//
// Path is injective (on Windows, see below): two different names never
// print the same (the display of one escaped always holds \x, \u, \n or
// \t, and a name shown as it is holds none), so a group or a path printed
// stands for one name.
//
// On Windows a backslash separates the names of a path, and no name holds
// one: there it is kept as it is, never doubled, and never makes a path
// escaped (C:\users\new\tab prints as it is; C:\users\evil<U+202E>txt
// as C:\users\evil\u202etxt). A name alone is still shown injectively;
// two paths print the same only when a name in one begins with what reads
// as an escape where the other holds the character escaped (the folder
// "evil" holding "u202etxt", against the name "evil<U+202E>txt"), and
// JSON keeps the bytes of the changed one (Base64).
func Path(p string) string { return escapePath(p, os.PathSeparator == '\\') }

// escapePath is Path; winSep: a backslash separates (Windows).
func escapePath(p string, winSep bool) string {
	clean := utf8.ValidString(p)
	if clean {
		for i, r := range p {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || Bidi(r) {
				clean = false
				break
			}
			if r == '\\' && !winSep && i+1 < len(p) && strings.IndexByte("xunt", p[i+1]) >= 0 {
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
		case r == '\\' && winSep:
			b.WriteByte('\\')
		case r == '\\':
			b.WriteString("\\\\")
		case r == '\n':
			b.WriteString("\\n")
		case r == '\t':
			b.WriteString("\\t")
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x80 && r < 0xa0, Bidi(r): // not \xNN: that is the byte NN, not UTF-8
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Bidi reports whether r changes how the text around it is shown rather
// than showing itself: the bidirectional embeddings, overrides and
// isolates (U+202A to U+202E, U+2066 to U+2069; "Trojan Source",
// CVE-2021-42574), the invisible direction marks (U+200E, U+200F,
// U+061C), and the line and paragraph separators (U+2028, U+2029). A name
// holding one could print as another name (evil\u202etxt.exe shows as
// "evilexe.txt").
func Bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
		r == 0x200e || r == 0x200f || r == 0x061c || r == 0x2028 || r == 0x2029
}

// Base64 is name's own bytes in standard base64 (RFC 4648, padded): what
// JSON keeps beside a name Path had to change, so that its bytes can be
// recovered (base64 -d).
func Base64(name string) string { return base64.StdEncoding.EncodeToString([]byte(name)) }
