package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

func zdbOutputsDir() string { return filepath.Join("..", "..", "testdata", "zdb-outputs") }

// Every real text parses with exit 0; the summary names the era and the
// Total row.
func TestParseCommandFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(zdbOutputsDir(), "*.txt"))
	if err != nil || len(files) < 14 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	for _, f := range files {
		code, out, errs := runT("parse", f)
		if code != 0 || !strings.Contains(out, "era ") || !strings.Contains(out, "checks ") {
			t.Errorf("%s: exit %d\n%s%s", f, code, out, errs)
		}
	}
	code, out, _ := runT("parse", filepath.Join(zdbOutputsDir(), "03-zdb-S-freebsd12-minecraft-compress.txt"))
	for _, w := range []string{"zdb -S simulated DDT histogram", "refcnt buckets 1 2 4 8 16 32",
		"referenced 31.4K [32103..32204] blocks, LSIZE 3.79G", "ratios (line 18): dedup 3.58, compress 1.41, copies 1.00, dedup*compress/copies 5.04",
		"checks       3 passed, 0 failed"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("03: output does not say %q:\n%s", w, out)
		}
	}
}

func TestParseCommandJSONStdin(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(zdbOutputsDir(), "17-zpool-status-D-2.3-totals-rootpool-lz4.txt"))
	if err != nil {
		t.Fatal(err)
	}
	e := testEnv()
	e.stdin = strings.NewReader(string(b))
	code, out, errs := runWith(e, "parse", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Summaries []struct {
			Entries uint64
			OnDisk  struct {
				Printed struct{ Text string }
				Meaning string
				Total   struct{ Lo, Hi uint64 }
			} `json:"on_disk"`
		} `json:"dedup_summaries"`
		Tables []struct {
			Kind  string
			Total struct {
				Allocated struct {
					Blocks struct {
						Text   string
						Lo, Hi uint64
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := doc.Summaries
	// "dedup: DDT entries 445552, size 124M on disk": a total; 124M is
	// 123.5M..124.5M (both ties round to the even 124).
	if len(s) != 1 || s[0].Entries != 445552 || s[0].OnDisk.Printed.Text != "124M" || s[0].OnDisk.Meaning != "total" ||
		s[0].OnDisk.Total.Lo != 123.5*(1<<20) || s[0].OnDisk.Total.Hi != 124.5*(1<<20) {
		t.Errorf("summaries %+v", s)
	}
	// "Total 435K": between 434.5K and 435.5K, both excluded (the ties
	// round to the even 434 and 436).
	if len(doc.Tables) != 1 || doc.Tables[0].Kind != "zpool-status" || doc.Tables[0].Total.Allocated.Blocks.Text != "435K" ||
		doc.Tables[0].Total.Allocated.Blocks.Lo != 434.5*1024+1 || doc.Tables[0].Total.Allocated.Blocks.Hi != 435.5*1024-1 {
		t.Errorf("tables %+v", doc.Tables)
	}
}

func TestParseCommandExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b, err := os.ReadFile(filepath.Join(zdbOutputsDir(), "20-seed000-zdb-S-2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	inconsistent := write("bad.txt", strings.Replace(string(b), "Total 81.1K", "Total 91.1K", 1))
	for _, tc := range []struct {
		file string
		code int
		want string
	}{
		{write("garbage.txt", "nothing\nto see\n"), 2, "no DDT histogram"},
		{filepath.Join(dir, "missing.txt"), 2, testkit.NotExistText(t)},
		{inconsistent, 1, ": 0 unreadable lines, 1 failed check (see above)\n"},
	} {
		code, out, errs := runT("parse", tc.file)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q\n%s", tc.file, code, errs, tc.code, tc.want, out)
		}
	}
	// A directory: named once, with the reason.
	code, out, errs := runT("parse", dir)
	if code != 2 || out != "" || errs != "ddtsim: "+dir+": is a directory\n" {
		t.Errorf("a directory: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runT("parse", inconsistent)
	if code != 1 || !strings.Contains(out, "MISMATCH   line 14: totals: Total allocated blocks is 91.1K") {
		t.Errorf("inconsistent: %s", out)
	}
}

// parse (and compare) refuse a binary file plainly, naming it, exit 2;
// a line of megabytes is one line not understood, named by its number;
// the lines not understood are listed up to 20.
func TestParseCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	bin, err := os.Executable() // this test binary: ELF
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runT("parse", bin)
	if code != 2 || out != "" || errs != "ddtsim: "+bin+": binary data, not zdb or zpool output\n" {
		t.Errorf("binary: exit %d, stdout %d bytes, stderr %q", code, len(out), errs)
	}
	elf, _ := os.ReadFile(bin)
	e := testEnv()
	e.stdin = strings.NewReader(string(elf[:50000]))
	code, _, errs = runWith(e, "parse", "--json", "-")
	if code != 2 || errs != "ddtsim: standard input: binary data, not zdb or zpool output\n" {
		t.Errorf("binary on stdin: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runT("compare", "--zdb-output", bin, dir)
	if code != 2 || !strings.Contains(errs, bin+": binary data, not zdb or zpool output") {
		t.Errorf("compare with a binary: exit %d, stderr %q", code, errs)
	}

	real, err := os.ReadFile(filepath.Join(zdbOutputsDir(), "03-zdb-S-freebsd12-minecraft-compress.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(real), "\n")
	long := filepath.Join(dir, "long.txt")
	os.WriteFile(long, []byte(string(real)+strings.Repeat("0123456789", 200000)+"\n"+string(real)), 0o644)
	code, out, errs = runT("parse", long)
	want := fmt.Sprintf("line %d: warning: not understood, left out: a line of 2000000 bytes", lines+1)
	if code != 0 || !strings.Contains(out, want) || strings.Count(out, "zdb -S simulated DDT histogram") != 2 {
		t.Errorf("long line: exit %d, want 0 and %q\n%s%s", code, want, out, errs)
	}

	var garbage strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&garbage, "garbage %d\n", i)
	}
	many := filepath.Join(dir, "many.txt")
	os.WriteFile(many, []byte(garbage.String()+string(real)), 0o644)
	code, out, _ = runT("parse", many)
	if code != 0 || strings.Count(out, "not understood, left out") != 20 || !strings.Contains(out, "... and 4980 more lines not understood") {
		t.Errorf("5000 garbage lines: exit %d, %d listed\n%s", code, strings.Count(out, "not understood, left out"), out)
	}
}
