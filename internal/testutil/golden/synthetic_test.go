package golden

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readSums reads testdata/golden/synthetic.sha256 (sha256sum format, paths
// relative to synthetic/).
func readSums(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(Root(), "synthetic.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("synthetic.sha256: bad line %q", sc.Text())
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

func TestGenerateSynthetic(t *testing.T) {
	t.Parallel()
	want := readSums(t)
	dir := t.TempDir()
	if err := GenerateSynthetic(dir); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "synthetic")
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s: not a regular file", p)
			return nil
		}
		n++
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		if w, ok := want[rel]; !ok {
			t.Errorf("%s: generated, not in synthetic.sha256", rel)
		} else if got := hex.EncodeToString(sum[:]); got != w {
			t.Errorf("%s: sha256 %s, want %s", rel, got, w)
		}
		delete(want, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range want {
		t.Errorf("%s: in synthetic.sha256, not generated", rel)
	}
	if n != 238 {
		t.Errorf("generated %d files, want 238", n)
	}
}

func TestGenerateSyntheticError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A regular file where the synthetic/ directory should be.
	if err := os.WriteFile(filepath.Join(dir, "synthetic"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := GenerateSynthetic(dir)
	if err == nil || !strings.Contains(err.Error(), "synthetic/empty") {
		t.Errorf("GenerateSynthetic over a file: %v, want an error naming synthetic/empty", err)
	}
}

func TestTextLikeAndMasked(t *testing.T) {
	t.Parallel()
	// tiny-100 is text_like(1, 100): words and spaces only.
	words := map[string]bool{}
	for _, w := range textWords {
		words[string(w)] = true
	}
	b := textLike(1, 100)
	if len(b) != 100 {
		t.Fatalf("len(textLike(1, 100)) = %d", len(b))
	}
	if len(textLike(5, 7)) != 7 || len(rnd(5, 7)) != 7 || len(rnd(5, 0)) != 0 {
		t.Error("lengths not honoured")
	}
	for _, c := range masked(9, 4096, 0x0F) {
		if c > 0x0F {
			t.Fatalf("masked byte %#x > mask", c)
		}
	}
}
