package escape

import (
	"runtime"
	"testing"
)

func TestPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain/name.txt":               "plain/name.txt",
		"with space/é":                 "with space/é",
		"bad\xff\xfe":                  `bad\xff\xfe`,
		"evil\nddtsim: fake":           `evil\nddtsim: fake`,
		"tab\there\\back\x1b[31m":      `tab\there\\back\x1b[31m`,
		"only\\backslash":              "only\\backslash",
		`C:\dir\sub`:                   `C:\dir\sub`,
		`d\xff1`:                       `d\\xff1`, // as d<0xff>1 would print, but for the backslash
		"d\xff1":                       `d\xff1`,
		`new\name`:                     `new\\name`,
		`tab\t`:                        `tab\\t`,
		`u\u0085`:                      `u\\u0085`,
		"c1\u0085":                     `c1\u0085`, // U+0085 (UTF-8 c2 85), not the byte 0x85
		"byte\x85":                     `byte\x85`,
		"del\x7f":                      `del\x7f`,
		`end\`:                         `end\`,
		"evil\u202etxt.exe":            `evil\u202etxt.exe`, // shows as "evilexe.txt" raw
		"lre\u202aa\u202b\u202c\u202d": `lre\u202aa\u202b\u202c\u202d`,
		"iso\u2066\u2067\u2068\u2069":  `iso\u2066\u2067\u2068\u2069`,
		"mark\u200e\u200f\u061c":       `mark\u200e\u200f\u061c`,
		"line\u2028para\u2029":         `line\u2028para\u2029`,
		"rlo\u202e\\back":              `rlo\u202e\\back`,
		"tab\\there.txt":               `tab\\there.txt`, // a backslash: not the tab below
		"tab\there.txt":                `tab\there.txt`,
		"arabic \u0627":                "arabic \u0627", // right-to-left letters are not controls
	} {
		if got := escapePath(in, false); got != want {
			t.Errorf("Path(%q) = %q, want %q (Unix)", in, got, want)
		}
		if runtime.GOOS != "windows" && Path(in) != want {
			t.Errorf("Path(%q) = %q, want %q", in, Path(in), want)
		}
	}
}

// On Windows a backslash separates: never doubled, never read as the
// start of an escape.
func TestPathWindows(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`C:\users\new\tab\x64\u1234`:   `C:\users\new\tab\x64\u1234`,
		`\\server\share\not\escaped`:   `\\server\share\not\escaped`,
		"C:\\users\\evil\u202etxt.exe": `C:\users\evil\u202etxt.exe`,
		"C:\\users\\d\xff1":            `C:\users\d\xff1`,
		"C:\\tmp\\c1\u0085\\new":       `C:\tmp\c1\u0085\new`,
		"C:\\tmp\\line\nbreak\\x":      `C:\tmp\line\nbreak\x`,
		"plain/slash\\mixed":           `plain/slash\mixed`,
	} {
		if got := escapePath(in, true); got != want {
			t.Errorf("Path(%q) = %q, want %q (Windows)", in, got, want)
		}
		if runtime.GOOS == "windows" && Path(in) != want {
			t.Errorf("Path(%q) = %q, want %q", in, Path(in), want)
		}
	}
}

// Path is injective: no two names of up to 5 symbols made of backslashes,
// the letters of the escapes, hex digits, bytes that are not UTF-8 and
// control characters print the same.
// On Windows, no name holds a backslash: names of up to 5 of the other
// symbols print apart there too.
func TestPathInjective(t *testing.T) {
	t.Parallel()
	symbols := []string{`\`, "x", "u", "n", "t", "f", "8", "5", "\xff", "\x85", "\xc2", "\n", "\t", "\u0085", "\x7f", "\u202e"}
	for _, win := range []bool{false, true} {
		syms := symbols
		if win {
			syms = symbols[1:]
		}
		seen := map[string]string{}
		var walk func(s string, depth int)
		walk = func(s string, depth int) {
			p := escapePath(s, win)
			if prev, ok := seen[p]; ok && prev != s {
				t.Fatalf("windows %v: Path(%q) = Path(%q) = %q", win, prev, s, p)
			}
			seen[p] = s
			if depth == 5 {
				return
			}
			for _, c := range syms {
				walk(s+c, depth+1)
			}
		}
		walk("", 0)
	}
}

func TestBase64(t *testing.T) {
	t.Parallel()
	if got := Base64("bad\xff\u202e"); got != "YmFk/+KArg==" {
		t.Errorf("Base64 = %q", got)
	}
}
