package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// TestSampleAgainstRealZFS compares ddtsim on the bundled sample with what
// real OpenZFS 2.3.2 printed for the same files (testdata/sample-zfs).
func TestSampleAgainstRealZFS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file string
		args []string
	}{
		{"lz4-128k-a12.zdb-S.txt", []string{"--release", "2.3.2", "-o", "compression=lz4", "--sparse", "always"}},
		{"off-128k-a12-never.zdb-S.txt", []string{"--release", "2.3.2", "-o", "compression=off", "--sparse", "never"}},
	} {
		want, err := os.ReadFile("../../testdata/sample-zfs/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		code, got, errs := runT(append(append([]string{"--zdb"}, c.args...), "../../testdata/sample")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.file, code, errs)
		}
		if got != string(want) {
			t.Errorf("%s: ddtsim differs from real zdb -S (-real +ddtsim):\n%s", c.file,
				cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")))
		}
	}
}

// The report leads with the answer (issue 29): `ddtsim testdata/sample`'s
// first three lines state zfs list USED and zpool list ALLOC without and
// with dedup, the dedup table's RAM and the verdict, in IEC units with
// the unit written, each at most 100 columns; an empty line and the zdb
// -S text follow. The figures are those the summary (and --json, exact)
// gives.
func TestSampleFirstScreen(t *testing.T) {
	t.Parallel()
	code, out, errs := runT("../../testdata/sample")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines[:3] {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("line %d has %d columns: %q", i+1, n, l)
		}
	}
	_, js, _ := runT("--json", "../../testdata/sample")
	var doc struct {
		Space struct {
			Used  uint64 `json:"used"`
			Alloc uint64 `json:"alloc"`
			Other struct {
				Used  uint64 `json:"used"`
				Alloc uint64 `json:"alloc"`
			} `json:"other_dedup"`
		} `json:"space"`
		DDT struct {
			InCore uint64 `json:"in_core"`
		} `json:"ddt_size"`
		Decision struct{ Text string }
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	iec := nicenum.IEC
	// dedup=off by default: Space is without dedup, Space.Other with.
	want := []string{
		fmt.Sprintf("Space: without dedup USED %s, ALLOC %s; with dedup USED %s, ALLOC %s",
			iec(doc.Space.Used), iec(doc.Space.Alloc), iec(doc.Space.Other.Used), iec(doc.Space.Other.Alloc)),
		fmt.Sprintf("RAM: dedup table %s (17 entries)", iec(doc.DDT.InCore)),
		doc.Decision.Text,
		"",
		"Simulated DDT histogram:",
	}
	if !slices.Equal(lines[:5], want) || !strings.HasPrefix(lines[2], "Verdict: probably not worth it: ") ||
		!strings.Contains(lines[0], " MiB") {
		t.Errorf("first lines\n%q\nwant\n%q", lines[:5], want)
	}
	// The summary: every line at most 100 columns; exact bytes only with --bytes.
	_, summary, _ := strings.Cut(out, "\nSummary: ")
	for _, l := range strings.Split(summary, "\n") {
		if utf8.RuneCountInString(l) > 100 || strings.Contains(l, " bytes)") {
			t.Errorf("summary line %q", l)
		}
	}
	_, withBytes, _ := runT("--bytes", "../../testdata/sample")
	if !strings.Contains(withBytes, "  files        11 regular files, 2.48 MiB (2602136 bytes); 5 directories\n") ||
		!strings.HasPrefix(withBytes, strings.Join(lines[:3], "\n")) {
		t.Errorf("--bytes:\n%s", withBytes)
	}
}
