package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// volTree holds two files of 5000 and 20000 random bytes.
func volTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r := rand.New(rand.NewSource(5))
	for name, n := range map[string]int{"f5000": 5000, "f20000": 20000} {
		b := make([]byte, n)
		r.Read(b)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// counterDoc is the counters object of a --json report: the numbers by
// name (the nested metadata tallies are left out).
type counterDoc map[string]uint64

func (c *counterDoc) UnmarshalJSON(b []byte) error {
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	*c = counterDoc{}
	for k, v := range all {
		if f, ok := v.(float64); ok {
			(*c)[k] = uint64(f)
		}
	}
	return nil
}

type volDoc struct {
	Properties map[string]string
	Total      struct {
		Allocated struct{ Blocks, LSize uint64 }
	}
	Counters counterDoc
	DDT      *struct {
		Format          string
		Entries, Unique uint64
		OnDisk          uint64 `json:"on_disk"`
		InCore          uint64 `json:"in_core"`
		RuleOfThumb     uint64 `json:"rule_of_thumb"`
		ARC             *struct{ Verdict string }
	} `json:"ddt_size"`
}

func runJSON(t *testing.T, args ...string) volDoc {
	t.Helper()
	code, out, errs := runT(append([]string{"--json"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	var d volDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return d
}

func TestZvolFlags(t *testing.T) {
	t.Parallel()
	dir := volTree(t)
	for _, c := range []struct {
		args   []string
		vbs    string
		blocks uint64
	}{
		{[]string{"--zvol"}, "16K", 1 + 2},                           // 2.4 default
		{[]string{"--zvol", "--release", "2.1"}, "8K", 1 + 3},        // 8K before 2.2
		{[]string{"--zvol", "--vdev", "draid2:8d:11c:1s"}, "32K", 2}, // the pool's width
		{[]string{"--volblocksize", "8K"}, "8K", 1 + 3},              // 5000 → 1, 20000 → 3
		{[]string{"-o", "volblocksize=64K"}, "64K", 2},               // one block each
		{[]string{"--volblocksize", "4k", "-o", "volblock=4K"}, "4K", 2 + 5},
	} {
		d := runJSON(t, append(append(c.args, "-o", "compression=off"), dir)...)
		if d.Properties["volblocksize"] != c.vbs || d.Properties["type"] != "volume" || d.Properties["recordsize"] != "" {
			t.Errorf("%v: properties %v", c.args, d.Properties)
		}
		if d.Total.Allocated.Blocks != c.blocks || d.Counters["records"] != c.blocks {
			t.Errorf("%v: %d blocks, %d records; want %d", c.args, d.Total.Allocated.Blocks, d.Counters["records"], c.blocks)
		}
	}
	code, out, _ := runT("--volblocksize", "16K", dir)
	if code != 0 || !strings.Contains(out, "Summary: OpenZFS 2.4.4, volblocksize=16K, compression=lz4") {
		t.Errorf("text summary: %s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--volblocksize", "3K", dir}, "power of two from 512 to 16M"},
		{[]string{"--volblocksize", "32M", dir}, "power of two from 512 to 16M"},
		{[]string{"--release", "0.6.4", "--volblocksize", "256K", dir}, "power of two from 512 to 128K"},
		{[]string{"--zvol", "-o", "recordsize=4K", dir}, "recordsize does not apply to volumes"},
		{[]string{"--volblocksize", "8K", "-o", "volblocksize=16K", dir}, "disagree"},
		{[]string{"--ram", "12Q", dir}, "--ram 12Q: invalid"},
		{[]string{"--ram", "1M", dir}, "at least 64M"},
	} {
		code, _, errs := runT(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, exitUsage, c.want)
		}
	}
}

// The DDT block: in JSON always, in the text summary with dedup=on or
// --ram, with the ARC verdict for --ram.
func TestDDTSizeReport(t *testing.T) {
	t.Parallel()
	dir := volTree(t)
	d := runJSON(t, "-o", "recordsize=4K", "-o", "compression=off", dir)
	if d.DDT == nil || d.DDT.Format != "FDT" || d.DDT.Entries != 7 || d.DDT.Unique != 7 || d.DDT.RuleOfThumb != 7*320 ||
		d.DDT.OnDisk == 0 || d.DDT.InCore != 2*32<<10 || d.DDT.ARC != nil {
		t.Errorf("ddt_size %+v", d.DDT)
	}
	d = runJSON(t, "--release", "2.1", "--ram", "16G", dir)
	if d.DDT == nil || d.DDT.Format != "legacy" || d.DDT.ARC == nil || d.DDT.ARC.Verdict != "fits" {
		t.Errorf("ddt_size %+v", d.DDT)
	}
	_, out, _ := runT(dir)
	if strings.Contains(out, "  DDT   ") {
		t.Errorf("DDT block without dedup or --ram:\n%s", out)
	}
	_, out, _ = runT("-o", "dedup=on", dir)
	for _, want := range []string{"  DDT          2 entries (2 unique, 0 duplicate) in a fast-dedup table", "    on disk    ", "    in core    ", "at the classic 320 B/entry rule of thumb", "    basis      "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runT("--ram", "8G", "--release", "2.2", dir)
	if !strings.Contains(out, "    ARC        with 8 GiB of RAM: ARC max 4 GiB (RAM/2") || !strings.Contains(out, "    verdict    fits:") {
		t.Errorf("summary lacks the ARC verdict:\n%s", out)
	}
}

// The CSV summary names the volume's block size (it listed only recordsize).
func TestZvolCSVNamesVolblocksize(t *testing.T) {
	t.Parallel()
	code, out, errs := runT("--csv", "--zvol", "../../testdata/sample")
	if code != 0 || !strings.Contains(out, "\nvolblocksize,16K\n") || strings.Contains(out, "\nrecordsize,") {
		t.Errorf("exit %d, stderr %q, csv:\n%s", code, errs, out)
	}
}

// The HTML page's header names the volume's block size, as the text does
// (issue 29, item 4: it said "recordsize=," for --zvol).
func TestZvolHTMLHeader(t *testing.T) {
	t.Parallel()
	dir := volTree(t)
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := runT("--zvol", "--html", page, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "OpenZFS 2.4.4, volblocksize=16K, compression=lz4,") || strings.Contains(string(b), "recordsize=") {
		t.Errorf("HTML header:\n%.1500s", b)
	}
}
