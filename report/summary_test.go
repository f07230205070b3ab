package report

import "testing"

func TestEscapePath(t *testing.T) {
	for in, want := range map[string]string{
		"plain/name.txt":          "plain/name.txt",
		"with space/é":            "with space/é",
		"bad\xff\xfe":             `bad\xff\xfe`,
		"evil\nddtsim: fake":      `evil\nddtsim: fake`,
		"tab\there\\back\x1b[31m": `tab\there\\back\x1b[31m`,
		"only\\backslash":         "only\\backslash",
	} {
		if got := EscapePath(in); got != want {
			t.Errorf("EscapePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		noun string
		want string
	}{{1, "error", "1 error"}, {0, "error", "0 errors"}, {2, "directory", "2 directories"}, {3, "regular file", "3 regular files"}} {
		if got := plural(c.n, c.noun); got != c.want {
			t.Errorf("plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
