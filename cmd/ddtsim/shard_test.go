package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// --shard values and combinations that cannot work are refused before
// anything is scanned or saved, saying why.
func TestShardFlagErrors(t *testing.T) {
	t.Parallel()
	dir := sampleTree(t)
	save := filepath.Join(t.TempDir(), "s.ddts")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "7/4", "--save", save, dir}, "ddtsim: --shard 7/4: index must be below the count"},
		{[]string{"--shard", "4/4", "--save", save, dir}, "--shard 4/4: index must be below the count"},
		{[]string{"--shard", "1/0", "--save", save, dir}, "--shard 1/0: the count must be at least 1"},
		{[]string{"--shard", "0/65537", "--save", save, dir}, "--shard 0/65537: the count must be at most 65536"},
		{[]string{"--shard", "two/4", "--save", save, dir}, `--shard two/4: the index "two" is not a whole number`},
		{[]string{"--shard", "3", "--save", save, dir}, "--shard 3: not i/N"},
		{[]string{"--shard=-1/4", "--save", save, dir}, `--shard -1/4: the index "-1" is not a whole number`},
		{[]string{"--shard=", "--save", save, dir}, `--shard "": needs a value`},
		{[]string{"--shard", "1/4", dir}, "--shard 1/4: needs --save DIR"},
		{[]string{"--shard", "1/4", "--by", "dir", "--save", save, dir}, "--shard 1/4: not with --by: a shard's breakdown covers only its share"},
		{[]string{"scan", "--shard", "1/4", "--by", "ext", "--json", "--save", save, dir}, "--shard 1/4: not with --by"},
		{[]string{"compare", "--zdb-output", save, "--shard", "0/2", dir}, "--shard belongs to the scan command"},
		{[]string{"--release", "list", "--shard", "0/2"}, "not with --shard"},
		{[]string{"sweep", "--shard", "0/2", dir}, "unknown flag --shard"},
	} {
		code, out, errs := runT(c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errs, c.want)
		}
		if _, err := os.Stat(save); err == nil {
			t.Fatalf("%q: %s written", c.args, save)
		}
	}
}

// The golden input set as 3 shards on the command line, with its larger
// files split, shard 1 interrupted and resumed: each saved scan keeps its
// shard; merged, the real zdb -S text and the report of one scan. merge
// notes missing shards, refuses one given twice, and does not call the
// shards' common paths an overlap.
func TestShardCommandsMergeAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("golden cases scan 55 MB each")
	}
	// The commands split the files larger than 256 KiB into chunks.
	split := &source.Faults{ShardSplitBytes: 256 << 10}
	runS := func(args ...string) (int, string, string) {
		e := testEnv()
		e.faults = split
		return runWith(e, args...)
	}
	inputs := goldenInputs(t)
	c, args := scanCase(t, "lz4-128k-a12")
	want, err := c.ZdbS()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "shard-0"), filepath.Join(dir, "shard-1"), filepath.Join(dir, "shard-2")}
	for _, i := range []int{0, 2} {
		code, _, errs := runS(append(append(append([]string{}, args...), "--shard", itoa(i)+"/3", "--save", files[i]), inputs...)...)
		if code != 0 || !strings.Contains(errs, "note: shard "+itoa(i)+"/3: the report above covers this shard's share of the files only") {
			t.Fatalf("shard %d: exit %d: %s", i, code, errs)
		}
	}
	// Shard 1, interrupted after 10 runs of records, then resumed.
	cl := parseCLI(t, append(append(append([]string{}, args...), "--shard", "1/3", "--save", files[1]), inputs...)...)
	ctx, ienv := interruptAfter(t, 10)
	ienv.faults = split
	cl.Scan.env = ienv
	var o, e bytes.Buffer
	if code := exitCode(cl.Scan.runContext(ctx, code130, &o, &e), &e); code != exitInterrupt {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	h, err := saved.ReadHeader(files[1])
	if err != nil || h.Complete || h.Shard == nil || *h.Shard != (source.Shard{Index: 1, Count: 3}) {
		t.Fatalf("interrupted shard saved: %v; %+v", err, h)
	}
	// Without all the shards: a note, a result marked PARTIAL, and its
	// own exit status (issue 29, item 3).
	missing := "1 of the 3 shards of the scan of " + strings.Join(inputs, " ") + " are missing (1/3): the result covers the shares of the 2 given only"
	code, _, errs := runS("merge", "--zdb", files[0], files[2])
	if code != exitIncomplete || !strings.Contains(errs, missing) {
		t.Errorf("merge without shard 1: exit %d, stderr %q", code, errs)
	}
	code, out, _ := runS("merge", files[0], files[2])
	if code != exitIncomplete || !strings.Contains(out, "\n  PARTIAL      1 of the 3 shards of the scan of ") || !strings.Contains(out, "\nVerdict (partial): ") {
		t.Errorf("merge without shard 1: exit %d, no PARTIAL line:\n%s", code, out)
	}
	code, out, _ = runS("merge", "--json", files[0], files[2])
	var doc struct {
		Partial    bool     `json:"partial"`
		PartialWhy []string `json:"partial_why"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitIncomplete || !doc.Partial || len(doc.PartialWhy) != 1 || doc.PartialWhy[0] != missing {
		t.Errorf("merge --json without shard 1: exit %d, %v, %+v", code, err, doc)
	}
	code, _, errs = runS("resume", files[1])
	if code != 0 || !strings.Contains(errs, "note: shard 1/3") {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	h, err = saved.ReadHeader(files[1])
	if err != nil || !h.Complete || h.Shard == nil || *h.Shard != (source.Shard{Index: 1, Count: 3}) {
		t.Fatalf("resumed shard saved: %v; %+v", err, h)
	}

	code, got, errs := runS(append([]string{"merge", "--zdb"}, files...)...)
	if code != 0 || errs != "" {
		t.Fatalf("merge: exit %d, stderr %q", code, errs)
	}
	if got != want {
		t.Errorf("merged shards differ from real zdb -S (-real +merged):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")))
	}
	_, full, _ := runS(append(append(append([]string{}, args...), "--json"), inputs...)...)
	_, merged, _ := runS(append([]string{"merge", "--json"}, files...)...)
	fd, md := jsonDoc(t, full), jsonDoc(t, merged)
	fc, mc := fd["counters"].(map[string]any), md["counters"].(map[string]any)
	if fc["compressed_runs"].(float64) > mc["compressed_runs"].(float64) {
		t.Errorf("compressor runs: one scan %v, merged shards %v", fc["compressed_runs"], mc["compressed_runs"])
	}
	delete(fc, "compressed_runs")
	delete(mc, "compressed_runs")
	// A file split between shards has the indirect blocks of each piece
	// counted (analyzer.Counters): at least as many.
	if fi, mi := fc["indirect_blocks"].(map[string]any), mc["indirect_blocks"].(map[string]any); fi["count"].(float64) > mi["count"].(float64) {
		t.Errorf("indirect blocks: one scan %v, merged shards %v", fi, mi)
	}
	delete(fc, "indirect_blocks")
	delete(mc, "indirect_blocks")
	for _, k := range []string{"counters", "total", "histogram", "ratios", "raw_capacity", "zdb_S", "partial", "problems", "properties", "pool", "decision", "paths"} {
		if d := cmp.Diff(fd[k], md[k]); d != "" {
			t.Errorf("%s differs (-one scan +merged shards):\n%s", k, d)
		}
	}

	// A shard given twice (a copy under another name) would count its
	// files twice.
	twice := filepath.Join(dir, "copy-of-shard-0")
	if err := os.CopyFS(twice, os.DirFS(files[0])); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runS("merge", files[0], files[1], files[2], twice)
	if code != exitUsage || out != "" || !strings.Contains(errs, files[0]+" and "+twice+" are both shard 0/3 of the scan of ") {
		t.Errorf("a shard twice: exit %d, stderr %q", code, errs)
	}
	// Shards of the same paths with other counts do not add up (found by
	// a new user: 0/2 and 1/3 merged with exit 4, files counted twice).
	other := filepath.Join(dir, "shard-1-of-2")
	runS(append(append(append([]string{}, args...), "--shard", "1/2", "--save", other), inputs...)...)
	code, out, errs = runS("merge", files[0], other)
	if code != exitUsage || out != "" || !strings.Contains(errs, files[0]+" is shard 0/3 and "+other+" shard 1/2 of the scan of ") {
		t.Errorf("shards of different counts: exit %d, stderr %q", code, errs)
	}
	// A whole scan merged with the shards is another host's, or the same
	// files twice: merge adds it, and notes the overlap as before.
	whole := filepath.Join(dir, "whole")
	runS(append(append(append([]string{}, args...), "--save", whole), inputs...)...)
	code, _, errs = runS("merge", "--zdb", files[0], files[1], files[2], whole)
	if code != 0 || strings.Count(errs, " and "+whole+" both scanned ") != 3*len(inputs) || strings.Count(errs, "both scanned") != 3*len(inputs) {
		t.Errorf("shards and a whole scan: exit %d, stderr %q", code, errs)
	}
}

// A shard's report says it is partial, and its figures are of its own
// share (issue 29, item 3: a shard reading only chunks of files whose
// first chunk another shard counts printed "0 regular files, 0B" and
// "covered 10G of the 0B of file data"): share_bytes is the file data of
// its chunks, the bytes it covered, and the shards' add up to the files'
// sizes.
func TestShardReportSaysItsShare(t *testing.T) {
	t.Parallel()
	split := &source.Faults{ShardSplitBytes: 256 << 10}
	dir := t.TempDir()
	sizes := []int{4 << 20, 1<<20 + 12345, 3000}
	var total uint64
	for i, n := range sizes {
		testkit.Write(t, filepath.Join(dir, "f"+itoa(i)), testkit.Rand(int64(40+i), n))
		total += uint64(n)
	}
	var shares uint64
	for i := range 4 {
		e := testEnv()
		e.faults = split
		save := filepath.Join(t.TempDir(), "s")
		code, out, errs := runWith(e, "--json", "--shard", itoa(i)+"/4", "--save", save, dir)
		var doc struct {
			Partial    bool     `json:"partial"`
			PartialWhy []string `json:"partial_why"`
			Counters   struct {
				Logical uint64 `json:"logical_bytes"`
				Share   uint64 `json:"share_bytes"`
				Scanned uint64 `json:"scanned_bytes"`
			} `json:"counters"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
			t.Fatalf("shard %d: exit %d, %v: %s", i, code, err, errs)
		}
		c := doc.Counters
		if !doc.Partial || len(doc.PartialWhy) != 1 || !strings.HasPrefix(doc.PartialWhy[0], "shard "+itoa(i)+"/4: ") ||
			c.Scanned != c.Share {
			t.Errorf("shard %d: partial %v %q, counters %+v", i, doc.Partial, doc.PartialWhy, c)
		}
		shares += c.Share
		_, text, _ := runWith(e, "--shard", itoa(i)+"/4", "--save", save, dir)
		if strings.Contains(text, "  covered  ") || !strings.Contains(text, "\n  PARTIAL      shard "+itoa(i)+"/4: ") ||
			c.Share != c.Logical && !strings.Contains(text, "\n  share        "+nicenum.IEC(c.Share)+" of file data in the shards' shares scanned") {
			t.Errorf("shard %d (%+v):\n%s", i, c, text)
		}
	}
	if shares != total {
		t.Errorf("the shards' shares add up to %d bytes, the files hold %d", shares, total)
	}
}

// The messages about shards say the count given (found by a new user:
// "(the shards of N runs are 0/N to 3/N)"), and in whole sentences: the
// note after a shard, and its PARTIAL line, ended "ddtsim merge of the 4
// saved shards gives the whole".
func TestShardMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("some data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	save := filepath.Join(t.TempDir(), "s")
	code, _, errs := runT("--shard", "4/4", "--save", save, dir)
	if code != exitUsage || errs != "ddtsim: --shard 4/4: index must be below the count (the shards of 4 runs are 0/4 to 3/4)\n" {
		t.Errorf("4/4: exit %d, stderr %q", code, errs)
	}
	code, out, errs := runT("--shard", "1/4", "--save", save, dir)
	note := "ddtsim: note: shard 1/4: the report above covers this shard's share of the files only (and the directories only in shard 0); " +
		"ddtsim merge of the 4 saved shards gives the report of the whole tree\n"
	if code != 0 || !strings.HasSuffix(errs, note) ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "ddtsim merge of the 4 saved shards gives the report of the whole tree") {
		t.Errorf("1/4: exit %d, stderr %q, report:\n%s", code, errs, out)
	}
}
