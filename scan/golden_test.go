package scan_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/compress/gzip"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
	"github.com/ddtsim/ddtsim/zfs/model"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	os.Exit(code)
}

// caseSettings returns a golden case's settings as ddtsim takes them (the
// release, the properties set, the vdev layout, the ashift, the copy's
// sparse mode), or says why the case is outside what this build
// reproduces exactly.
func caseSettings(t *testing.T, c golden.Case) (model.Settings, string) {
	t.Helper()
	text := model.Text{Release: c.Release, Vdevs: []string{c.Vdevs}, Ashift: strconv.Itoa(c.Ashift), Sparse: c.Sparse, Properties: c.Properties()}
	switch v := c.Props["compression"]; {
	case strings.HasPrefix(v, "gzip") && gzip.Exact, strings.HasPrefix(v, "zstd") && zstd.Exact:
	case strings.HasPrefix(v, "gzip"), strings.HasPrefix(v, "zstd"):
		return model.Settings{}, "compression " + v + " is an approximation in this build (cmd/ddtsim TestGoldenApproxCompressors)"
	}
	set, err := model.Parse(text)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return set, ""
}

// TestGoldenZdbS scans the golden input set through the library (Run,
// then Report) for every golden case this build reproduces and compares
// the zdb -S text with what real zdb -S printed, byte for byte.
func TestGoldenZdbS(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	ran := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			set, why := caseSettings(t, c)
			if why != "" {
				t.Skip(why)
			}
			ran++
			want, err := c.ZdbS()
			if err != nil {
				t.Fatal(err)
			}
			res, err := scan.Run(context.Background(), set, inputs, scan.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			if len(res.Problems) > 0 {
				t.Errorf("problems: %+v", res.Problems)
			}
			rep, err := res.Report(0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Zdb != want {
				t.Errorf("%v differs from real zdb -S (-real +ddtsim):\n%s", c.Props,
					cmp.Diff(strings.Split(want, "\n"), strings.Split(rep.Zdb, "\n")))
			}
		})
	}
	// The off/lz4/lzjb/zle and gzip cases, 2.3.2 and 2.1.11: 22 on one
	// disk, 8 on other layouts (and the zstd ones with -tags libzstd).
	if ran < 30 {
		t.Errorf("only %d golden cases ran, want at least 30", ran)
	}
}

// TestGoldenSavedScan saves the scan of the golden input set
// (Options.Save), reads it back (FromSaved) and checks its report against
// real zdb -S, with compression on and off.
func TestGoldenSavedScan(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	for _, c := range cases {
		if c.Name != "lz4-128k-a12" && c.Name != "off-128k-a12-never" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			set, _ := caseSettings(t, c)
			want, err := c.ZdbS()
			if err != nil {
				t.Fatal(err)
			}
			path := t.TempDir() + "/scan.ddts"
			res, err := scan.Run(context.Background(), set, inputs, scan.Options{Save: path})
			if err != nil {
				t.Fatal(err)
			}
			res.Close()
			saved, err := readSaved(path)
			if err != nil {
				t.Fatal(err)
			}
			back, err := scan.FromSaved(saved)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := back.Report(0)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Zdb != want {
				t.Errorf("saved scan differs from real zdb -S (-real +ddtsim):\n%s",
					cmp.Diff(strings.Split(want, "\n"), strings.Split(rep.Zdb, "\n")))
			}
		})
	}
}

func readSaved(path string) (*saved.Scan, error) {
	return saved.Read(path, saved.DecodeOptions{})
}
