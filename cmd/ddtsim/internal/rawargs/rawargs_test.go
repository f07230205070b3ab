package rawargs

import (
	"testing"
	"unicode/utf8"
)

func TestProtectRestore(t *testing.T) {
	type cmd struct {
		Save  string
		Paths []string
		inner string
	}
	args := []string{"--save=out\xff.ddts", "plain", "bad\xfe", "--flag"}
	safe, raw := Protect(args)
	for _, a := range safe {
		if !utf8.ValidString(a) {
			t.Errorf("%q is still not UTF-8", a)
		}
	}
	if safe[1] != "plain" || safe[3] != "--flag" || safe[0][:7] != "--save=" {
		t.Errorf("safe = %q", safe)
	}
	// What a parser would have stored: the flag's value and the paths.
	c := cmd{Save: safe[0][len("--save="):], Paths: []string{safe[1], safe[2]}, inner: safe[2]}
	raw.Restore(&c)
	if c.Save != "out\xff.ddts" || c.Paths[0] != "plain" || c.Paths[1] != "bad\xfe" || c.inner != safe[2] {
		t.Errorf("restored %q", c)
	}
	if _, raw := Protect([]string{"all", "utf-8"}); raw != nil {
		t.Errorf("nothing to protect, got %v", raw)
	}
}
