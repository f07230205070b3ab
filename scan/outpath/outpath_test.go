package outpath

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestInsideThroughSymlinks(t *testing.T) {
	dir := t.TempDir()
	scanned := filepath.Join(dir, "data")
	other := filepath.Join(dir, "other")
	for _, d := range []string{scanned, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckCreatable(filepath.Join(other, "new.html")); err != nil {
		t.Errorf("CheckCreatable in a writable directory: %v", err)
	}
	if err := CheckCreatable(other); err == nil {
		t.Error("CheckCreatable accepted a directory")
	}
	if runtime.GOOS == "windows" {
		t.Skip("windows: symbolic links need a privilege there, and Wine 8's cannot be followed")
	}
	// A link outside the scanned tree that leads into it, and a dangling
	// link whose target would be created inside it.
	if err := os.Symlink(scanned, filepath.Join(other, "to-data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(scanned, "new.html"), filepath.Join(other, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		inside string
	}{
		{filepath.Join(scanned, "x.ddts"), scanned},
		{filepath.Join(other, "to-data", "x.ddts"), scanned},
		{filepath.Join(other, "dangling"), scanned},
		{filepath.Join(other, "x.ddts"), ""},
		{filepath.Join(dir, "data2", "x"), ""}, // a sibling with the same prefix
	} {
		out, in, err := Inside(c.name, false, []string{scanned}, false)
		if err != nil || in != c.inside {
			t.Errorf("Inside(%s) = %q, %q, %v; want inside %q", c.name, out, in, err, c.inside)
		}
	}
	loop := filepath.Join(other, "loop")
	os.Symlink(loop, loop)
	if _, err := LinkTarget(loop); err == nil {
		t.Error("LinkTarget followed a symlink naming itself")
	}
}
