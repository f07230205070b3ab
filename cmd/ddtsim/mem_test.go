package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// tinyMem is a testEnv whose --mem may go below its minimum, so that
// small inputs spill again and again.
func tinyMem() *env {
	e := testEnv()
	e.minMem = 1
	return e
}

// --mem reports its spills and the memory in JSON and in the summary, and
// gives the same table as without it.
func TestMemReport(t *testing.T) {
	e := tinyMem()
	dir := sampleTree(t)
	tmp := t.TempDir()
	code, out, errs := runWith(e, "--json", "--mem", "1K", "--tmpdir", tmp, dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Zdb      string         `json:"zdb_S"`
		Counters map[string]any `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Counters["spill_runs"] == float64(0) || doc.Counters["table_bytes"] == float64(0) || doc.Counters["peak_rss"] == float64(0) {
		t.Errorf("counters %v", doc.Counters)
	}
	_, plain, _ := runWith(e, "--zdb", dir)
	if doc.Zdb != plain {
		t.Errorf("--mem changed the table:\n%s\nwithout:\n%s", doc.Zdb, plain)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d files left in --tmpdir", len(left))
	}
	_, text, _ := runWith(e, "--mem", "1K", "--tmpdir", tmp, dir)
	if !strings.Contains(text, "\n  memory       table ") || !strings.Contains(text, "peak RSS; spilled to disk in ") {
		t.Errorf("no memory line:\n%s", text)
	}
}

// Bad --mem values and unusable temporary directories are refused before
// the scan, with exit 2 and a clear message.
func TestMemErrors(t *testing.T) {
	dir := sampleTree(t)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	spill := t.TempDir()
	noParent, notDir := testkit.NoParentText(t), testkit.NotDirText(t)
	missing := filepath.Join(t.TempDir(), "nonexistent")
	// The system's temporary directory comes from $TMPDIR on Unix, %TMP%
	// on Windows.
	tmpVar := strings.Trim(tmpDirVar(), "$%")
	for _, c := range []struct {
		args []string
		env  string // $TMPDIR
		want string
	}{
		{[]string{"--mem", "0", dir}, "", "--mem 0: invalid (accepted: the table's memory bound as a size"},
		{[]string{"--mem", "lots", dir}, "", "--mem lots: invalid"},
		{[]string{"--tmpdir", spill, dir}, "", "--tmpdir " + spill + ": needs --mem SIZE: it is where --mem spills the table"},
		{[]string{"--mem", "1G", "--tmpdir", filepath.Join(missing, "x"), dir}, "", "ddtsim: --tmpdir " + filepath.Join(missing, "x") + ": cannot create the spill directory there: " + noParent},
		{[]string{"--mem", "1G", "--tmpdir", file, dir}, "", "ddtsim: --tmpdir " + file + ": cannot create the spill directory there: " + notDir},
		{[]string{"--mem", "1G", dir}, filepath.Join(missing, "y"), "ddtsim: --mem: " + filepath.Join(missing, "y") + " (" + tmpDirVar() + ", or --tmpdir DIR): cannot create the spill directory there: " + noParent},
	} {
		if c.env != "" {
			t.Setenv(tmpVar, c.env)
		}
		code, out, errs := runT(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errs, c.want)
		}
	}
}
