package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/benchdata"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// TestValidationZdbS runs ddtsim --zdb on the inputs of the DDT validation
// pools (testdata/ddt-validation/benchdata-SIZE-RECORDSIZE: the synthetic
// data set of that size, copied onto real OpenZFS 2.3.2 with lz4, dedup=on,
// ashift 12) and checks it prints what the real pool's zdb -S printed, byte
// for byte. 400 MiB of data in all: skipped with -short.
func TestValidationZdbS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates and scans 400 MiB")
	}
	dirs, err := filepath.Glob("../../testdata/ddt-validation/benchdata-*")
	if err != nil || len(dirs) < 4 {
		t.Fatalf("validation cases: %v, %v", dirs, err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			parts := strings.Split(name, "-") // benchdata, 48M, 8k
			size, err := model.ParseSize(parts[1])
			if err != nil || len(parts) != 3 {
				t.Fatalf("%s: %v", name, err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "zdb-S.txt"))
			if err != nil {
				t.Fatal(err)
			}
			_, body, _ := strings.Cut(string(want), "\n") // the "# zdb ..." line
			in := filepath.Join(t.TempDir(), "in")
			if err := benchdata.Generate(in, int64(size)); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runT("--zdb", "--release", "2.3.2", "-o", "dedup=on", "-o", "compression=lz4",
				"-o", "recordsize="+strings.ToUpper(parts[2]), "--ashift", "12", in)
			if code != 0 || out != body {
				t.Errorf("exit %d, stderr %q\nddtsim:\n%s\nreal zdb -S:\n%s", code, errs, out, body)
			}
		})
	}
}
