package golden

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "golden.Cleanup:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func TestRoot(t *testing.T) {
	t.Parallel()
	r := Root()
	if !filepath.IsAbs(r) {
		t.Fatalf("Root() = %q, not absolute", r)
	}
	for _, p := range []string{"README.md", "synthetic.sha256", "cases", "inputs/binaries/asm", "inputs/text/a/licenses/GPL-2"} {
		if _, err := os.Stat(filepath.Join(r, p)); err != nil {
			t.Errorf("Root() = %q: %v", r, err)
		}
	}
}

func TestInputsAndRelPath(t *testing.T) {
	t.Parallel()
	roots, err := Inputs()
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) != 3 {
		t.Fatalf("Inputs() returned %d roots, want 3: %q", len(roots), roots)
	}
	want := []string{
		filepath.Join(Root(), "inputs", "binaries"),
		"", // synthetic: in a temp dir
		filepath.Join(Root(), "inputs", "text"),
	}
	for i, w := range want {
		if w != "" && roots[i] != w {
			t.Errorf("Inputs()[%d] = %q, want %q", i, roots[i], w)
		}
	}
	if filepath.Base(roots[1]) != "synthetic" || !filepath.IsAbs(roots[1]) {
		t.Errorf("Inputs()[1] = %q, want an absolute <tmp>/synthetic", roots[1])
	}
	again, err := Inputs()
	if err != nil || fmt.Sprint(again) != fmt.Sprint(roots) {
		t.Errorf("second Inputs() = %q, %v; want %q (generated once)", again, err, roots)
	}

	for _, tc := range []struct {
		abs, rel string
		ok       bool
	}{
		{filepath.Join(roots[0], "asm"), "/binaries/asm", true},
		{filepath.Join(roots[1], "sparse-4m"), "/synthetic/sparse-4m", true},
		{filepath.Join(roots[1], "smallfiles", "dup010"), "/synthetic/smallfiles/dup010", true},
		{filepath.Join(roots[2], "a", "licenses", "GPL-2"), "/text/a/licenses/GPL-2", true},
		{roots[2] + "/b/../a/licenses/GPL-2", "/text/a/licenses/GPL-2", true},
		{roots[0], "/binaries", true},
		{filepath.Join(roots[0], "..", "text", "b"), "/text/b", true},
		{filepath.Join(roots[0], ".."), "", false},
		{roots[0] + "-x/asm", "", false},
		{filepath.Join(Root(), "cases"), "", false},
		{"binaries/asm", "", false},
		{"/", "", false},
	} {
		rel, ok := RelPath(tc.abs)
		if rel != tc.rel || ok != tc.ok {
			t.Errorf("RelPath(%q) = %q, %v; want %q, %v", tc.abs, rel, ok, tc.rel, tc.ok)
		}
	}

	// The files under the three roots are exactly the files of the golden
	// pools, as listed by zdb (and by files.tsv).
	c, err := FindCase("lz4-128k-a12")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := c.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var got, missing []string
	for _, r := range roots {
		err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, ok := RelPath(p)
			if !ok {
				t.Errorf("RelPath(%q) not ok", p)
				return nil
			}
			got = append(got, rel)
			if _, ok := objs[rel]; !ok {
				missing = append(missing, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("input files not in the golden listing: %q", missing)
	}
	if len(got) != len(objs) {
		t.Errorf("%d input files, golden listing has %d files", len(got), len(objs))
	}
}

func TestVols(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("copies 30 MB")
	}
	dir, err := Vols()
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	// The eighteen inputs (checked against SHA256SUMS by Vols), nothing
	// else.
	if len(names) != 18 || names[0] != "bin-asm" || names[17] != "text-b.tar" {
		t.Errorf("Vols() holds %q", names)
	}
	again, err := Vols()
	if err != nil || again != dir {
		t.Errorf("second Vols() = %q, %v; want %q", again, err, dir)
	}
}
