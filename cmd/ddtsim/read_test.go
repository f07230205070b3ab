package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
)

// markedEstimate checks that a --read report says ESTIMATE: the text's
// headline and zdb text, the JSON's read_estimate.
func markedEstimate(t *testing.T, what, text, js, zdb string) {
	t.Helper()
	if !strings.Contains(text, "Verdict (ESTIMATE, 15% read): ") || !strings.Contains(text, "ESTIMATE from a 15% random read of the records") {
		t.Errorf("%s: the text does not say ESTIMATE:\n%s", what, text)
	}
	if !strings.Contains(js, `"read_estimate": {`) {
		t.Errorf("%s: the JSON has no read_estimate", what)
	}
	if !strings.HasPrefix(zdb, "ESTIMATE from a 15% random read") {
		t.Errorf("%s: the zdb -S text is not headed ESTIMATE: %.80q", what, zdb)
	}
}

// A --read scan saved, interrupted and resumed reads the records the
// uninterrupted scan reads (the plan is saved), and its report is that
// scan's; the --shard i/3 runs of it, saved and merged, give it too, the
// estimate computed once from the merged sample. Scans of another plan,
// or full scans, are not merged with them (exit status 2).
func TestReadResumeAndShardsEqualOneScan(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("golden inputs: 55 MB walked")
	}
	inputs := goldenInputs(t)
	_, args := scanCase(t, "lz4-128k-a12")
	args = append(args, "--read", "15%", "--read-seed", "5", "-j", "3")
	with := func(more ...string) []string { return append(append(append([]string{}, args...), more...), inputs...) }
	code, want, errs := runT(with()...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, wantJSON, _ := runT(with("--json")...)
	_, wantZdb, _ := runT(with("--zdb")...)
	markedEstimate(t, "one scan", want, wantJSON, wantZdb)
	dir := t.TempDir()

	// Interrupted after 20 runs of records, resumed, interrupted again,
	// resumed to the end.
	file := filepath.Join(dir, "scan")
	cl := parseCLI(t, with("--save", file)...)
	ctx, ienv := interruptAfter(t, 20)
	cl.Scan.env = ienv
	var o, e bytes.Buffer
	if code := exitCode(cl.Scan.runContext(ctx, code130, &o, &e), &e); code != exitInterrupt {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	h, err := saved.ReadHeader(file)
	if plan := (estimate.Plan{Fraction: 0.15, Seed: 5, Groups: true}); err != nil || h.Complete || h.Read == nil || *h.Read != plan {
		t.Fatalf("interrupted scan saved: %v; complete %v, plan %+v", err, h.Complete, h.Read)
	}
	if !strings.Contains(o.String(), "ESTIMATE") || !strings.Contains(o.String(), "PARTIAL") {
		t.Errorf("the interrupted scan's report is not marked ESTIMATE and PARTIAL:\n%s", o.String())
	}
	ctx, ienv = interruptAfter(t, 60)
	o.Reset()
	e.Reset()
	r := resumeCmd{File: file, OutputFlags: OutputFlags{JSON: true}, WorkFlags: WorkFlags{Jobs: 2}, env: ienv}
	if code := exitCode(r.runContext(ctx, code130, &o, &e), &e); code != exitInterrupt {
		t.Fatalf("resume: exit %d: %s", code, e.String())
	}
	code, gotJSON, errs := runT("resume", "--json", file)
	if code != 0 || errs != "" {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	if d := cmp.Diff(jsonDoc(t, wantJSON), jsonDoc(t, gotJSON)); d != "" {
		t.Errorf("resumed JSON differs from the uninterrupted scan's (-want +got):\n%s", d)
	}
	_, got, _ := runT("resume", file) // complete: its report
	if d := cmp.Diff(strings.Split(withoutMemory(want), "\n"), strings.Split(withoutMemory(got), "\n")); d != "" {
		t.Errorf("resumed text differs from the uninterrupted scan's (-want +got):\n%s", d)
	}
	_, gotZdb, _ := runT("resume", "--zdb", file)
	markedEstimate(t, "resumed", got, gotJSON, gotZdb)

	// Three shards, saved and merged.
	var shards []string
	for i := range 3 {
		f := filepath.Join(dir, "shard-"+itoa(i))
		if code, _, errs := runT(with("--shard", itoa(i)+"/3", "--save", f)...); code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, errs)
		}
		shards = append(shards, f)
	}
	code, got, errs = runT(append([]string{"merge"}, shards...)...)
	if code != 0 || errs != "" {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	_, gotJSON, _ = runT(append([]string{"merge", "--json"}, shards...)...)
	_, gotZdb, _ = runT(append([]string{"merge", "--zdb"}, shards...)...)
	markedEstimate(t, "merged", got, gotJSON, gotZdb)
	if d := cmp.Diff(strings.Split(withoutMemory(want), "\n"), strings.Split(withoutMemory(got), "\n")); d != "" {
		t.Errorf("merged text differs from the one scan's (-want +got):\n%s", d)
	}
	wd, gd := jsonDoc(t, wantJSON), jsonDoc(t, gotJSON)
	// Each shard compresses the first copy of a content it reads.
	wc, gc := wd["counters"].(map[string]any), gd["counters"].(map[string]any)
	if wc["compressed_runs"].(float64) > gc["compressed_runs"].(float64) {
		t.Errorf("compressor runs: one scan %v, merged shards %v", wc["compressed_runs"], gc["compressed_runs"])
	}
	delete(wc, "compressed_runs")
	delete(gc, "compressed_runs")
	if d := cmp.Diff(wd, gd); d != "" {
		t.Errorf("merged JSON differs from the one scan's (-want +got):\n%s", d)
	}
	if gotZdb != wantZdb {
		t.Errorf("merged zdb -S text differs from the one scan's")
	}

	// Not merged with scans of another plan, nor with a full scan.
	other := filepath.Join(dir, "other")
	for _, more := range [][]string{{"--read-seed", "6"}, {"--read", "5%"}, nil} {
		a := append(append([]string{}, args...), more...)
		if more == nil {
			a = args[:len(args)-6] // no --read
			a = append(a, "-j", "3")
		}
		if code, _, errs := runT(append(append(a, "--shard", "0/3", "--save", other), inputs...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", more, code, errs)
		}
		code, out, errs := runT("merge", other, shards[1], shards[2])
		if code != exitUsage || out != "" || !strings.Contains(errs, "different properties") || !strings.Contains(errs, "--read: ") {
			t.Errorf("%v merged with 15%% seed 5: exit %d, stderr %q", more, code, errs)
		}
	}
}

// --read-seed without --read is refused, as --top without --by is (found
// by a new user: it was accepted and did nothing); with --read it is
// taken, and --read alone seeds with 1.
func TestReadSeedNeedsRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 64 { // 50% leaves some unread: an estimate, not the exact figures
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("f", i)), []byte(fmt.Sprint("some data ", i, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runT("--read-seed", "3", dir)
	if code != exitUsage || out != "" || errs != "ddtsim: --read-seed 3: needs --read: it seeds the random choice of the records --read reads\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, c := range []struct {
		args   []string
		seed   float64
		groups bool
	}{{[]string{"--read", "50%", "--read-seed", "3"}, 3, true}, {[]string{"--read", "50%"}, 1, true},
		{[]string{"--read", "50%", "--read-by", "records"}, 1, false}, {[]string{"--read", "50%", "--read-by", "groups"}, 1, true},
		{[]string{"--read", "50%", "--read-by", "Records"}, 1, false}} { // any case, as --by
		code, out, errs = runT(append(append(c.args, "--json"), dir)...)
		read, _ := jsonDoc(t, out)["read_estimate"].(map[string]any)
		if code != 0 || read == nil || read["seed"] != c.seed || read["groups"] != c.groups {
			t.Errorf("%q: exit %d, stderr %q, read_estimate %v; want seed %v, groups %v", c.args, code, errs, read, c.seed, c.groups)
		}
	}
	// --read-by: only with --read, only its two words.
	for args, want := range map[string]string{
		"--read-by records":         "ddtsim: --read-by records: needs --read: it says what --read chooses at random\n",
		"--read 5% --read-by files": "ddtsim: --read-by files: invalid (accepted: groups, records)\n",
	} {
		code, out, errs := runT(append(strings.Fields(args), dir)...)
		if code != exitUsage || out != "" || errs != want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", args, code, out, errs, want)
		}
	}
}

// With --ram, a --read scan's headline says whether the dedup table stays
// in the ARC over its range, as a full scan's says it of its size (found
// by a new user: the --read headline dropped it); JSON gives the verdict
// at each end.
func TestReadHeadlineSaysARC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 4 {
		data := append(testkit.Rand(int64(i), 1<<20), testkit.Rand(9, 1<<20)...)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, full, errs := runT("--ram", "64M", dir)
	if code != 0 || !strings.Contains(full, "; with 64 MiB of RAM it fits in the ARC\n") {
		t.Fatalf("full scan: exit %d, stderr %q, report:\n%s", code, errs, full)
	}
	code, out, errs := runT("--ram", "64M", "--read", "15%", dir)
	if code != 0 || !strings.Contains(out, "; in 64 MiB of RAM: fits in the ARC\n") {
		t.Errorf("--read: exit %d, stderr %q, report:\n%s", code, errs, out)
	}
	code, out, _ = runT("--ram", "64M", "--read", "15%", "--json", dir)
	read, _ := jsonDoc(t, out)["read_estimate"].(map[string]any)
	if code != 0 || read == nil || read["ram"] != float64(64<<20) || read["arc_verdict_low"] != "fits" || read["arc_verdict_high"] != "fits" {
		t.Errorf("--read --json: exit %d, read_estimate %v", code, read)
	}
	code, out, _ = runT("--read", "15%", "--json", dir)
	read, _ = jsonDoc(t, out)["read_estimate"].(map[string]any)
	if _, ok := read["arc_verdict_low"]; code != 0 || ok {
		t.Errorf("without --ram: exit %d, read_estimate %v", code, read)
	}
}
