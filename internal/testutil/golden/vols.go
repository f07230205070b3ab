package golden

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// volsDir is the name of the zvol cases' input directory, under the temp
// dir of Inputs (in the repository: inputs/vols holds the two tar files
// and SHA256SUMS only).
const volsDir = "vols"

// Vols returns the directory holding input "vols" of the zvol cases
// (README: eighteen files, each written to its own volume): copies of
// five binaries and eleven synthetic files, prefixed bin- and syn-, and
// the two tar files shipped in inputs/vols. It is built next to the
// synthetic tree of Inputs the first time it is called (Cleanup removes
// it) and checked against inputs/vols/SHA256SUMS. The copies are dense
// (dd reads holes as zeros, so the golden volumes saw zeros there).
func Vols() (string, error) {
	roots, err := Inputs()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(roots[1]), volsDir)
	inputsMu.Lock()
	defer inputsMu.Unlock()
	sums := filepath.Join(Root(), "inputs", volsDir, "SHA256SUMS")
	if _, err := os.Stat(dir + ".ok"); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.Open(sums)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		sum, name, ok := strings.Cut(strings.TrimSpace(sc.Text()), "  ")
		if !ok {
			continue
		}
		var src string
		switch {
		case strings.HasPrefix(name, "bin-"):
			src = filepath.Join(roots[0], strings.TrimPrefix(name, "bin-"))
		case strings.HasPrefix(name, "syn-"):
			src = filepath.Join(roots[1], strings.TrimPrefix(name, "syn-"))
		default:
			src = filepath.Join(Root(), "inputs", volsDir, name)
		}
		if err := copyChecked(src, filepath.Join(dir, name), sum); err != nil {
			return "", err
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if n != 18 {
		return "", fmt.Errorf("golden: %s lists %d files, want 18", sums, n)
	}
	return dir, os.WriteFile(dir+".ok", nil, 0o644) // beside, not in, the scanned directory
}

// copyChecked copies src to dst (densely) and checks its sha256.
func copyChecked(src, dst, sum string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("golden: %s: sha256 %s, SHA256SUMS says %s", dst, got, sum)
	}
	return nil
}
