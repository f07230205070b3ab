package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/sweep"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// sweepT sweeps dir with the -o properties given.
func sweepT(t *testing.T, ctx context.Context, opts sweep.Options, dir string, props ...string) (*Sweep, error) {
	t.Helper()
	set, lanes, err := sweep.Lanes(model.Text{Release: "2.3.2", Properties: props, Ashift: "12", Sparse: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Lanes, opts.Sparse = lanes, set.Sparse
	res, err := sweep.Run(ctx, []string{dir}, opts)
	if res == nil {
		t.Fatal(err)
	}
	return NewSweep(res, set, "space"), err
}

// The compression column is as wide as the longest name: the columns
// after it stay aligned with their titles.
func TestSweepTextLongCompressionName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(strings.Repeat("ddtsim sweep ", 50000)), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, err := sweepT(t, context.Background(), sweep.Options{}, dir, "compression=lz4,zstd-fast-1000")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := sw.WriteText(&b, 0); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	table := lines[3 : len(lines)-1] // the title row and the rows
	pad, name := "", "zstd-fast-1000 "
	if !zstd.Exact {
		// A build without cgo marks the zstd row (and widens the column
		// for the mark), and says why under the table.
		if last := table[len(table)-1]; !strings.HasPrefix(last, "* APPROXIMATE: zstd is approximated") {
			t.Errorf("no note on the approximate zstd row: %q", last)
		}
		table = table[:len(table)-1]
		pad, name = " ", "zstd-fast-1000*"
	}
	if len(table) != 3 {
		t.Fatalf("table %q", table)
	}
	want := "row  recordsize  compression      " + pad + "dedup  compress  combined       allocated (DSIZE)  DDT entries     DDT in core"
	if table[0] != want {
		t.Errorf("title row\n%q, want\n%q", table[0], want)
	}
	for _, l := range table[1:] {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(want) || !strings.Contains(l, name+"  "+pad) && !strings.Contains(l, "lz4              "+pad) {
			t.Errorf("row not aligned with the titles:\n%s\n%s", want, l)
		}
	}
}

// A sweep that could not read a path says so on stdout, with what it
// read of what it found (it said nothing: "3 files, 591K read once").
func TestSweepTextSaysWhatWasNotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(strings.Repeat("ddtsim sweep ", 50000)), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, err := sweepT(t, context.Background(), sweep.Options{}, dir, "compression=lz4")
	if err != nil {
		t.Fatal(err)
	}
	text := func() string {
		var b strings.Builder
		if err := sw.WriteText(&b, 0); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if s := text(); strings.Contains(s, "INCOMPLETE") {
		t.Errorf("a sweep that read everything says INCOMPLETE:\n%s", s)
	}
	// As the sweep counts a file it could not open: found, not read.
	sw.Counters.Errors, sw.Counters.Files, sw.Counters.LogicalBytes = 1, 2, sw.Counters.LogicalBytes+5000
	want := "INCOMPLETE: 1 path could not be read (see stderr): 635K (650000 bytes) read of 640K\n"
	if s := text(); !strings.Contains(s, want) {
		t.Errorf("no line saying what was not read, want %q:\n%s", want, s)
	}
}
