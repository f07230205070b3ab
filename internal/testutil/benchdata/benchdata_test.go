package benchdata

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// readTree returns the contents of every regular file under dir by relative
// path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestGenerateDeterministicAndSized(t *testing.T) {
	t.Parallel()
	const total = 8 << 20
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := Generate(d, total); err != nil {
			t.Fatal(err)
		}
	}
	fa, fb := readTree(t, a), readTree(t, b)
	if len(fa) != len(fb) {
		t.Fatalf("file counts differ: %d vs %d", len(fa), len(fb))
	}
	var sum int64
	parts := map[string]int64{}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Errorf("%s differs between two runs", name)
		}
		sum += int64(len(data))
		parts[firstElem(name)] += int64(len(data))
	}
	if sum > total || sum < total*95/100 {
		t.Errorf("total %d bytes, want about %d", sum, total)
	}
	for _, p := range []string{"images", "logs", "bin", "small"} {
		if parts[p] == 0 {
			t.Errorf("no bytes in %s/", p)
		}
	}
	// The images are whole records and clones share records.
	imgs, _ := filepath.Glob(filepath.Join(a, "images", "*.raw"))
	if len(imgs) < 2 {
		t.Fatalf("%d images, want several", len(imgs))
	}
	first := fa[filepath.Join("images", "vm-00.raw")]
	second := fa[filepath.Join("images", "vm-01.raw")]
	if len(first)%RecordSize != 0 || len(first) != len(second) {
		t.Fatalf("image sizes %d, %d", len(first), len(second))
	}
	shared := 0
	for off := 0; off < len(first); off += RecordSize {
		if bytes.Equal(first[off:off+RecordSize], second[off:off+RecordSize]) {
			shared++
		}
	}
	if n := len(first) / RecordSize; shared == 0 || shared == n {
		t.Errorf("clone shares %d of %d records, want most but not all", shared, n)
	}
}

func firstElem(rel string) string {
	for i := range len(rel) {
		if rel[i] == filepath.Separator {
			return rel[:i]
		}
	}
	return rel
}

func TestGenerateRejectsBadSize(t *testing.T) {
	t.Parallel()
	if err := Generate(t.TempDir(), 0); err == nil {
		t.Error("Generate(0) succeeded")
	}
}
