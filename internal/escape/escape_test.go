package escape

import "testing"

func TestPath(t *testing.T) {
	for in, want := range map[string]string{
		"plain/name.txt":          "plain/name.txt",
		"with space/é":            "with space/é",
		"bad\xff\xfe":             `bad\xff\xfe`,
		"evil\nddtsim: fake":      `evil\nddtsim: fake`,
		"tab\there\\back\x1b[31m": `tab\there\\back\x1b[31m`,
		"only\\backslash":         "only\\backslash",
	} {
		if got := Path(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}
