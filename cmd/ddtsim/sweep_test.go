package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/sweep"
	"github.com/ddtsim/ddtsim/zfs/model"
)

type sweepOut struct {
	Counters struct {
		LogicalBytes uint64 `json:"logical_bytes"`
		ReadBytes    uint64 `json:"read_bytes"`
		HoleBytes    uint64 `json:"hole_bytes"`
	} `json:"counters"`
	Rows []struct {
		Row         int    `json:"row"`
		RecordSize  uint32 `json:"recordsize"`
		Compression string `json:"compression"`
		DSize       uint64 `json:"allocated_dsize"`
		InCore      uint64 `json:"ddt_in_core"`
		Zdb         string `json:"zdb_S"`
	} `json:"rows"`
}

func runSweepJSON(t *testing.T, args ...string) sweepOut {
	t.Helper()
	code, out, errs := runT(append([]string{"sweep", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("sweep %v: exit %d: %s", args, code, errs)
	}
	var o sweepOut
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// Every row of the sweep command is, byte for byte, the zdb -S text of
// the single run with the same properties; every byte is read once. (On
// the sample tree: package sweep holds its lanes to the analyzer's scans
// on the golden inputs, TestSweepEqualsScans.)
func TestSweepEqualsSingleRuns(t *testing.T) {
	t.Parallel()
	paths := []string{sampleDir}
	args := append([]string{"--release", "2.3.2", "--sparse", "always", "-o", "recordsize=4K,128K,1M", "-o", "compression=off,lz4"}, paths...)
	o := runSweepJSON(t, args...)
	if len(o.Rows) != 6 {
		t.Fatalf("%d rows, want 6", len(o.Rows))
	}
	if o.Counters.ReadBytes+o.Counters.HoleBytes != o.Counters.LogicalBytes || o.Counters.ReadBytes == 0 {
		t.Errorf("read %d bytes + %d in holes, of %d", o.Counters.ReadBytes, o.Counters.HoleBytes, o.Counters.LogicalBytes)
	}
	seen := map[string]bool{}
	for _, r := range o.Rows {
		rs := map[uint32]string{4 << 10: "4K", 128 << 10: "128K", 1 << 20: "1M"}[r.RecordSize]
		seen[rs+"/"+r.Compression] = true
		code, want, errs := runT(append([]string{"--zdb", "--release", "2.3.2", "--sparse", "always", "-o", "recordsize=" + rs, "-o", "compression=" + r.Compression}, paths...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if r.Zdb != want {
			t.Errorf("recordsize=%s compression=%s: sweep row\n%s\nsingle run\n%s", rs, r.Compression, r.Zdb, want)
		}
	}
	if len(seen) != 6 {
		t.Errorf("combinations %v", seen)
	}
	// The text table and --histogram.
	code, out, errs := runT(append([]string{"sweep", "--histogram", "2"}, args...)...)
	if code != 0 || !strings.Contains(out, "row 2: recordsize=") || !strings.Contains(out, o.Rows[1].Zdb) {
		t.Errorf("--histogram 2: exit %d, %s\n%s", code, errs, out)
	}
}

func TestSweepSort(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"space", "ram"} {
		o := runSweepJSON(t, "--sort", by, "-o", "recordsize=4K,16K,128K,1M", "-o", "compression=off,lz4,zle", "../../testdata/sample")
		if len(o.Rows) != 12 {
			t.Fatalf("%d rows", len(o.Rows))
		}
		for i := 1; i < len(o.Rows); i++ {
			a, b := o.Rows[i-1], o.Rows[i]
			ka, kb := a.DSize, b.DSize
			if by == "ram" {
				ka, kb = a.InCore, b.InCore
			}
			if ka > kb || ka == kb && a.RecordSize > b.RecordSize || b.Row != i+1 {
				t.Errorf("--sort %s: row %d (%d) before row %d (%d)", by, a.Row, ka, b.Row, kb)
			}
		}
	}
}

func TestSweepBadLists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "recordsize=4K,,8K"}, "empty value"},
		{[]string{"-o", "recordsize=4K,4k"}, "listed twice"},
		{[]string{"-o", "recordsize=4K,100K"}, "recordsize=100K: invalid"},
		{[]string{"-o", "compression=lz4,nope"}, "nope"},
		{[]string{"-o", "compression=zstd,zstd-3"}, "the values zstd and zstd-3 are the same compression (zstd-3)"},
		{[]string{"-o", "compression=on,lz4,zstd"}, "the values on and lz4 are the same compression (lz4)"},
		{[]string{"-o", "recordsize=128K,131072"}, "the values 128K and 131072 are the same recordsize"},
		{[]string{"-o", "recordsize=4K", "-o", "recordsize=8K"}, "given twice"},
		{[]string{"-o", "copies=1,2"}, "copies=1,2: a sweep takes lists for recordsize and compression only; run one sweep per copies value"},
		{[]string{"-o", "volblocksize=8K", "-o", "recordsize=8K"}, "recordsize does not apply to volumes"},
		{[]string{"-o", "volblocksize=8K,8k"}, "listed twice"},
		{[]string{"-o", "volblocksize=8K,100K"}, "-o volblocksize=100K: invalid"},
		{[]string{"--sort", "speed"}, "--sort"},
		{[]string{"--histogram", "3", "-o", "recordsize=4K,8K"}, "--histogram 3"},
		{[]string{"--histogram", "1", "--json"}, "--histogram with --json"},
		{[]string{"--read", "5%"}, "sweep --read: sweep reads every record"},
	} {
		code, _, errs := runT(append(append([]string{"sweep"}, c.args...), dir)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// A sweep's JSON says what every row shares (found by a new user: the
// rows could not be traced back to copies, dedup, pool or sparse mode).
func TestSweepJSONProperties(t *testing.T) {
	t.Parallel()
	code, out, errs := runT("sweep", "--json", "-o", "copies=2", "-o", "dedup=on", "--vdev", "raidz1 4", "--ashift", "9",
		"--sparse", "always", "-o", "compression=off,lz4", "../../testdata/sample/docs")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"copies": 2.0, "dedup": "on", "vdev": "raidz1 4", "ashift": 9.0, "sparse": "always", "guest": false}
	if fmt.Sprint(doc.Properties) != fmt.Sprint(want) {
		t.Errorf("properties %v, want %v", doc.Properties, want)
	}
}

// A sweep of nothing prints no ratios ("-", JSON null) rather than 0.00,
// and a special file named is warned about (exit 3), as a scan does.
func TestSweepEmptyAndSpecial(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := testkit.Mkfifo(t, fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runT("sweep", empty)
	if code != 0 || !strings.Contains(out, "  1        128K  lz4               -         -         -") {
		t.Errorf("empty: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runT("sweep", "--json", empty)
	if code != 0 || !strings.Contains(out, `"ratios": null`) {
		t.Errorf("empty, JSON: exit %d\n%s", code, out)
	}
	code, _, errs = runT("sweep", fifo, empty)
	if code != 3 || !strings.Contains(errs, "fifo: skipped: not a regular file") {
		t.Errorf("FIFO: exit %d, %q", code, errs)
	}
	code, out, errs = runT("sweep", fifo)
	if code != exitUsage || out != "" || !strings.Contains(errs, "nothing to scan: "+fifo+": a FIFO") {
		t.Errorf("FIFO alone: exit %d, %q, %q", code, out, errs)
	}
}

// A terabyte sparse file costs a sweep its data, not its size: its hole is
// skipped (SEEK_DATA), and every row still equals the single scan (found
// by a new user: 10 minutes for `truncate -s 1T`).
func TestSweepSparseTerabyte(t *testing.T) {
	testkit.Stress(t)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "thin.raw"))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7 % 251)
	}
	for _, at := range []int64{0, 1 << 39, 1<<40 - 1<<20} {
		if _, err := f.WriteAt(data, at); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	args := []string{"--sparse", "never", "-o", "recordsize=128K,1M", "-o", "compression=off,lz4", dir}
	o := runSweepJSON(t, args...)
	if o.Counters.LogicalBytes != 1<<40 || o.Counters.ReadBytes > 8<<20 || o.Counters.ReadBytes+o.Counters.HoleBytes != 1<<40 {
		t.Errorf("read %d bytes + %d in holes of %d", o.Counters.ReadBytes, o.Counters.HoleBytes, o.Counters.LogicalBytes)
	}
	for _, r := range o.Rows {
		code, want, errs := runT("--zdb", "--sparse", "never", "-o", fmt.Sprintf("recordsize=%d", r.RecordSize), "-o", "compression="+r.Compression, dir)
		if code != 0 || want != r.Zdb {
			t.Errorf("row %d (%d, %s) differs from the scan (exit %d, %s):\n%s\nscan:\n%s", r.Row, r.RecordSize, r.Compression, code, errs, r.Zdb, want)
		}
	}
}

// An interrupted sweep's report says it is partial on stdout, as a
// scan's does: the PARTIAL line in the text, "partial": true in JSON (a
// complete one: false).
func TestInterruptedSweepMarkedPartial(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, format := range []string{"", "--json"} {
		s := sweepCmd{Paths: []string{"../../testdata/sample"}, Sort: "space", JSON: format == "--json"}
		set, lanes, err := sweep.Lanes(model.Text{Release: "latest", Properties: []string{"compression=off,lz4"}, Ashift: "12", Sparse: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		var o, e bytes.Buffer
		code := exitCode(s.runContext(ctx, func() int { return 130 }, set, lanes, &o, &e), &e)
		if code != 130 || !strings.Contains(e.String(), "interrupted") {
			t.Errorf("%s: exit %d, stderr %q", format, code, e.String())
		}
		want := "\nPARTIAL: the sweep was interrupted; the figures cover only what was read: 0B (0 bytes) of the 0B found\n\nrow  recordsize"
		if format == "--json" {
			want = "\n  \"partial\": true,\n"
		}
		if !strings.Contains(o.String(), want) {
			t.Errorf("%s: stdout has no %q:\n%s", format, want, o.String())
		}
	}
	code, out, _ := runT("sweep", "--json", "../../testdata/sample/docs")
	if code != 0 || !strings.Contains(out, "\n  \"partial\": false,\n") {
		t.Errorf("complete sweep: exit %d\n%s", code, out)
	}
	code, out, _ = runT("sweep", "../../testdata/sample/docs")
	if code != 0 || strings.Contains(out, "PARTIAL") {
		t.Errorf("complete sweep: exit %d\n%s", code, out)
	}
}

// TestSweepZvolEqualsSingleRuns: sweep --zvol -o volblocksize=LIST (issue
// 29, item 11) gives one row per volblocksize and compression, each, byte
// for byte, the zdb -S text of the single ddtsim --zvol -o volblocksize=X
// run; with --zvol alone, one row of the default volblocksize, that of
// ddtsim --zvol. The tree: the sample (holes included) and files whose
// sizes are not multiples of any volblocksize, zero-padded as a volume's
// last block is. Sparse copies (always) and not (never) both.
func TestSweepZvolEqualsSingleRuns(t *testing.T) {
	t.Parallel()
	odd := t.TempDir()
	testkit.Write(t, filepath.Join(odd, "a"), testkit.Rand(1, 5000))
	testkit.Write(t, filepath.Join(odd, "b"), append(testkit.Rand(2, 70000), make([]byte, 40000)...))
	testkit.Write(t, filepath.Join(odd, "c"), append(testkit.Rand(2, 70000), testkit.Rand(1, 5000)...))
	sizes := map[uint32]string{8 << 10: "8K", 16 << 10: "16K", 64 << 10: "64K"}
	for _, sparse := range []string{"always", "never"} {
		common := []string{"--release", "2.3.2", "--sparse", sparse}
		paths := []string{sampleDir, odd}
		code, out, errs := runT(append(append([]string{"sweep", "--json", "--zvol", "-o", "volblocksize=8K,16K,64K", "-o", "compression=off,lz4"}, common...), paths...)...)
		if code != 0 {
			t.Fatalf("sweep --zvol: exit %d: %s", code, errs)
		}
		var o struct {
			Rows []struct {
				RecordSize   uint32 `json:"recordsize"`
				VolBlockSize uint32 `json:"volblocksize"`
				Compression  string `json:"compression"`
				Zdb          string `json:"zdb_S"`
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Rows) != 6 {
			t.Fatalf("sparse=%s: %d rows, want 6", sparse, len(o.Rows))
		}
		seen := map[string]bool{}
		for _, r := range o.Rows {
			vbs := sizes[r.VolBlockSize]
			if vbs == "" || r.RecordSize != 0 {
				t.Fatalf("row of volblocksize %d, recordsize %d", r.VolBlockSize, r.RecordSize)
			}
			seen[vbs+"/"+r.Compression] = true
			code, want, errs := runT(append(append([]string{"--zdb", "--zvol", "-o", "volblocksize=" + vbs, "-o", "compression=" + r.Compression}, common...), paths...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if r.Zdb != want {
				t.Errorf("sparse=%s volblocksize=%s compression=%s: sweep row\n%s\nsingle run\n%s", sparse, vbs, r.Compression, r.Zdb, want)
			}
		}
		if len(seen) != 6 {
			t.Errorf("combinations %v", seen)
		}
	}
	// --zvol alone: the default volblocksize (16K from 2.2), one row;
	// the text names the column and the row's volblocksize.
	code, out, errs := runT("sweep", "--zvol", "--histogram", "1", sampleDir)
	_, want, _ := runT("--zdb", "--zvol", sampleDir)
	if code != 0 || !strings.Contains(out, "row  volblocksize  compression") || !strings.Contains(out, "\nrow 1: volblocksize=16K compression=lz4\n"+want) {
		t.Errorf("sweep --zvol --histogram 1: exit %d, stderr %s, stdout\n%s\nwant the row of volblocksize=16K, with\n%s", code, errs, out, want)
	}
	// recordsize does not apply to volumes.
	if code, _, errs := runT("sweep", "--zvol", "-o", "recordsize=8K,16K", sampleDir); code != exitUsage || !strings.Contains(errs, "recordsize does not apply to volumes") {
		t.Errorf("sweep --zvol -o recordsize: exit %d, stderr %q", code, errs)
	}
}
