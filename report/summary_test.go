package report

import "testing"

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
