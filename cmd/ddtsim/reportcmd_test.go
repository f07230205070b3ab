package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// resultCSV writes a histogram as the query's result (CSV with a header).
func resultCSV(t *testing.T, h *ddt.Histogram) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize,ref_dsize\n")
	for i, r := range h {
		if r.Allocated.Blocks == 0 {
			continue
		}
		a, f := r.Allocated, r.Referenced
		fmt.Fprintf(&b, "%d,%d,%d,%d,%d,%d,%d,%d,%d\n", i, a.Blocks, a.LSize, a.PSize, a.DSize, f.Blocks, f.LSize, f.PSize, f.DSize)
	}
	path := filepath.Join(t.TempDir(), "result.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// report --histogram renders what merge prints from the same histogram
// (the SQL itself is checked against DuckDB in histsql, tag duckdb), and
// refuses what it cannot render.
func TestReportFromHistogram(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	for f, p := range map[string]string{a: "../../testdata/sample/images", b: "../../testdata/sample/docs"} {
		if code, _, errs := runT("-o", "dedup=on", "--save", f, p); code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, errs)
		}
	}
	mg, err := saved.Merge([]string{a, b}, saved.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csv := resultCSV(t, mg.Histogram)
	for _, f := range [][]string{{"--zdb"}, {"--json"}, {}} {
		_, want, _ := runT(append([]string{"merge"}, append(f, a, b)...)...)
		code, got, errs := runT(append([]string{"report", "--histogram", csv}, append(f, a, b)...)...)
		if code != 0 || errs != "" {
			t.Fatalf("report %v: exit %d: %s", f, code, errs)
		}
		if len(f) > 0 && f[0] == "--json" {
			// The merge's memory (its readers) is not the report's.
			want, got = dropLines(want, "table_bytes", "peak_rss"), dropLines(got, "table_bytes", "peak_rss")
		}
		if len(f) == 0 {
			want, got = dropLines(want, "memory"), dropLines(got, "memory")
		}
		if got != want {
			t.Errorf("report %v differs from merge:\n%s\nmerge:\n%s", f, got, want)
		}
	}
	// A result no table of these scans could give: a row's DSIZE 100
	// times its own (found by a new user: "copies = 98.96" on a pool of
	// one copy, exit 0); a block larger than the recordsize.
	for _, bend := range []func(h *ddt.Histogram){
		func(h *ddt.Histogram) { h[0].Allocated.DSize *= 100; h[0].Referenced.DSize *= 100 },
		func(h *ddt.Histogram) { h[0].Allocated.LSize *= 100; h[0].Referenced.LSize *= 100 },
	} {
		h := *mg.Histogram
		bend(&h)
		code, out, errs := runT("report", "--histogram", resultCSV(t, &h), a, b)
		if code != exitUsage || out != "" || !strings.Contains(errs, "bucket 0: ") {
			t.Errorf("a bent result: exit %d, stderr %q", code, errs)
		}
	}
	// Errors: the result's line named; a sampled scan; a scan of format 1.
	bad := filepath.Join(tmp, "bad.csv")
	os.WriteFile(bad, []byte("bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize,ref_dsize\n0,1,2,3,4,1,2,3,x\n"), 0o644)
	if code, _, errs := runT("report", "--histogram", bad, a); code != exitFailed || !strings.Contains(errs, bad+": line 2: ref_dsize") {
		t.Errorf("bad result: exit %d, %q", code, errs)
	}
	s := filepath.Join(tmp, "s")
	runT("--sample", "4", "--save", s, "../../testdata/sample/docs")
	if code, _, errs := runT("report", "--histogram", csv, s); code == 0 || !strings.Contains(errs, "use ddtsim merge") {
		t.Errorf("sampled: exit %d, %q", code, errs)
	}
	if code, _, errs := runT("report", "--histogram", csv); code != exitUsage || !strings.Contains(errs, "expected") {
		t.Errorf("no scans: exit %d, %q", code, errs)
	}
	if code, out, _ := runT("sql"); code != 0 || !strings.Contains(out, "FROM ddtsim_entries") {
		t.Errorf("sql: exit %d, %q", code, out)
	}
}

// dropLines removes the lines containing any of the words.
func dropLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		keep := true
		for _, w := range words {
			if strings.Contains(l, w) {
				keep = false
			}
		}
		if keep {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A scan saved in format 1 (by an older ddtsim) is merged, refused by
// report --histogram with how to convert it, and converted by resume.
func TestSavedFormat1(t *testing.T) {
	tmp := t.TempDir()
	old := filepath.Join(tmp, "docs.ddts")
	b, err := os.ReadFile("../../testdata/saved/docs-v1.ddts")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(old, b, 0o644)
	t.Chdir("../..") // its path is relative to the repository's root
	_, want, _ := runT("-o", "dedup=on", "--zdb", "testdata/sample/docs")
	code, got, errs := runT("merge", "--zdb", old)
	if code != 0 || got != want {
		t.Errorf("merge of a format 1 scan: exit %d, %s\n%s\nwant\n%s", code, errs, got, want)
	}
	csv := resultCSV(t, &ddt.Histogram{})
	if code, _, errs := runT("report", "--histogram", csv, old); code == 0 || !strings.Contains(errs, old+": a saved scan of format version 1 has no Parquet table") || !strings.Contains(errs, "ddtsim resume") {
		t.Errorf("report of a format 1 scan: exit %d, %q", code, errs)
	}
	code, got, errs = runT("resume", "--zdb", old)
	if code != 0 || got != want || !strings.Contains(errs, "converted from format 1") {
		t.Errorf("resume of a format 1 scan: exit %d, %q", code, errs)
	}
	if _, err := saved.ReadManifest(old); err != nil {
		t.Errorf("not converted: %v", err)
	}
	if code, got, _ := runT("merge", "--zdb", old); code != 0 || got != want {
		t.Errorf("merge after the conversion: exit %d\n%s", code, got)
	}
}

// A sampled scan saved in two halves and merged reports what one sampled
// scan of both reports (the estimate and its intervals as printed).
func TestSampledScansMerged(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	imgs, docs := "../../testdata/sample/images", "../../testdata/sample/docs"
	for f, p := range map[string]string{a: imgs, b: docs} {
		if code, _, errs := runT("--sample", "2", "--save", f, p); code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, errs)
		}
	}
	_, want, _ := runT("--sample", "2", imgs, docs)
	code, got, errs := runT("merge", a, b)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	want, got = dropLines(want, "memory", "paths", "ddtsim"), dropLines(got, "memory", "paths", "ddtsim")
	if !strings.Contains(got, "sample") || got != want {
		t.Errorf("merged sampled scans:\n%s\nwant (one scan):\n%s", got, want)
	}
}

// What the first user trying to break --save found: files of the user's
// in a scan's directory, the directory itself named as ".", a path
// scanned inside DIR, a FIFO for a part file, a result of other scans.
func TestSaveAndReportRefusals(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	docs := "../../testdata/sample/docs"
	s := filepath.Join(tmp, "s")
	if code, _, errs := runT("--save", s, docs); code != 0 {
		t.Fatal(errs)
	}
	os.WriteFile(filepath.Join(s, "NOTES.txt"), []byte("keep"), 0o644)
	if code, _, errs := runT("--save", s, docs); code != exitUsage || !strings.Contains(errs, "it holds a saved scan and other files (NOTES.txt)") {
		t.Errorf("a scan with the user's files: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(s, "NOTES.txt")); err != nil {
		t.Error("the user's file is gone")
	}
	os.Remove(filepath.Join(s, "NOTES.txt"))
	if code, _, errs := runT("--save", s+"/.", docs); code != exitUsage || !strings.Contains(errs, "name the directory itself") {
		t.Errorf("--save DIR/.: exit %d, %q", code, errs)
	}
	if code, _, errs := runT("--save", s, filepath.Join(s, "part-00.parquet")); code != exitUsage || !strings.Contains(errs, "lies inside it, and saving replaces it") {
		t.Errorf("a path scanned inside DIR: exit %d, %q", code, errs)
	}
	// A FIFO in place of a part file: refused, not waited on.
	f := filepath.Join(tmp, "f")
	os.CopyFS(f, os.DirFS(s))
	os.Remove(filepath.Join(f, "part-02.parquet"))
	if err := testkit.Mkfifo(t, filepath.Join(f, "part-02.parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runT("merge", f); code != exitFailed || !strings.Contains(errs, "part-02.parquet: bad table partition: not a regular file") {
		t.Errorf("a FIFO part: exit %d, %q", code, errs)
	}
	// A result that is not the query's over the scans named.
	mg, err := saved.Merge([]string{s}, saved.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := *mg.Histogram
	h[0].Referenced.Blocks++
	h[0].Allocated.Blocks++
	if code, _, errs := runT("report", "--histogram", resultCSV(t, &h), s); code != exitUsage || !strings.Contains(errs, "it is not the query's over exactly these scans") {
		t.Errorf("a result of other scans: exit %d, %q", code, errs)
	}
}
