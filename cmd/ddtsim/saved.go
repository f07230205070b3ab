package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/escape"
	"github.com/ddtsim/ddtsim/internal/outpath"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/scanfile"
)

// Saved scans: scan --save FILE, merge FILE..., resume FILE.

// saving is what --save (and resume, which saves too) keeps during a scan.
type saving struct {
	path   string         // as named (in messages)
	target string         // what is written: path, or the file its symlink names
	resume *scanfile.Scan // the saved scan being continued; nil for a new scan
}

type mergeCmd struct {
	Zdb   bool     `help:"Print only the zdb -S text, byte for byte." xor:"format"`
	JSON  bool     `name:"json" help:"Print everything as JSON (exact integers)." xor:"format"`
	RAM   string   `name:"ram" placeholder:"SIZE" help:"The memory of the machine that would hold the merged data's pool: say whether its dedup table would stay in the ARC, as for scan."`
	Files []string `arg:"" name:"file" help:"Scans saved with ddtsim --save FILE, made with the same properties (release rules, recordsize, compression, copies, dedup, vdevs, ashift, sparse, sample). The N shards of a scan made with --shard i/N add up to the scan of the whole tree (each given once; missing ones are noted)."`
}

type resumeCmd struct {
	Zdb    bool   `help:"Print only the zdb -S text, byte for byte." xor:"format"`
	JSON   bool   `name:"json" help:"Print everything as JSON (exact integers)." xor:"format"`
	Jobs   int    `short:"j" default:"0" help:"Worker goroutines (0: one per CPU); fewer run at large recordsizes, so that the records in flight (two per worker) stay within 256 MiB: 8 at recordsize=16M."`
	Mem    string `name:"mem" placeholder:"SIZE" help:"Bound the dedup table's memory, as for scan (the saved table is read into memory first)."`
	TmpDir string `name:"tmpdir" placeholder:"DIR" help:"Where --mem writes its runs, as for scan."`
	File   string `arg:"" name:"file" help:"A scan saved with ddtsim --save FILE. It is rescanned with its own flags and paths, skipping what it did, and updated."`
}

// testDoneHook, when set by a test, runs after each Done a saving scan
// records (to interrupt a scan at a chosen point).
var testDoneHook func()

// startSave prepares --save before the scan: the file must be writable
// now, not only after hours of scanning; it must not lie inside the paths
// scanned (a resumed scan, or a later one with the same flags, would
// count it); and an existing file is replaced only if it is a saved scan
// (or empty). A symlink is written through: its target is replaced, the
// link stays.
func (s *scanCmd) startSave() error {
	if s.Save == "" {
		return nil
	}
	name := escape.Path(s.Save)
	if err := checkOutside("--save", s.Save, false, s.Paths, s.OneFileSystem); err != nil {
		return err
	}
	target, err := outpath.LinkTarget(s.Save)
	if err == nil {
		err = scanfile.CheckReplaceable(target)
		var ne *scanfile.NotSavedScanError
		if errors.As(err, &ne) {
			return usagef("--save %s: %v", name, err)
		}
	}
	if err == nil {
		err = scanfile.CheckWritable(target)
	}
	if err != nil {
		// A path that cannot be written is a bad value, as for --html.
		return usagef("--save %s: cannot write there: %s", name, scan.Reason(target, err))
	}
	if s.save == nil {
		s.save = &saving{}
	}
	s.save.path, s.save.target = s.Save, target
	return nil
}

// run merges the saved scans and prints the report. Exit status: 0
// merged; 1 a file could not be read (missing, not a saved scan, of
// another version, truncated, corrupt); 2 the scans have different
// properties (listed); 3 merged, but some paths could not be read when the
// scans were made.
func (m *mergeCmd) Run(std *streams) error {
	stdout, stderr := std.stdout, std.stderr
	ram, err := parseRAM(m.RAM)
	if err != nil {
		return usage(err)
	}
	shardNotes, groups, err := checkShards(m.Files)
	if err != nil {
		return err
	}
	mg, err := scanfile.Merge(m.Files)
	if err != nil {
		return err // a *scanfile.ModelError or ErrSameScan is a usage error
	}
	for _, n := range append(withoutShardOverlaps(mg.Notes, groups), shardNotes...) {
		fmt.Fprintln(stderr, "ddtsim: note:", n)
	}
	if len(groups) > 0 {
		mg.Paths = shardPaths(m.Files, groups)
	}
	err = printSaved(&mg.Scan, m.Zdb, m.JSON, ram, stdout, stderr)
	if st := (statusError{}); len(mg.Partial) > 0 && (err == nil || errors.As(err, &st)) {
		fmt.Fprintf(stderr, "ddtsim: the result is partial: interrupted scans: %s (ddtsim resume FILE completes one)\n",
			strings.Join(mg.Partial, ", "))
	}
	return err
}

// checkShards looks at the shards among the saved scans to merge (scan
// --shard i/N): the shards of one sharded scan, those with the same count
// and the same paths, must each be given once and made with the same
// options; missing ones are noted (the merge covers the shards given). It
// returns the notes, and the groups of files that are shards of one scan.
// Files that cannot be read are left to Merge to report.
func checkShards(files []string) (notes []string, groups [][]string, err error) {
	type group struct {
		files []string
		hdrs  []*scanfile.Header
	}
	byKey := map[string]*group{}
	var keys []string
	for _, f := range files {
		h, err := scanfile.ReadHeader(f)
		if err != nil || h.Shard == nil || !h.Shard.Sharded() {
			continue
		}
		key := fmt.Sprintf("%d\x00%s", h.Shard.Count, strings.Join(scanfile.Strings(h.Paths), "\x00"))
		g := byKey[key]
		if g == nil {
			g = &group{}
			byKey[key] = g
			keys = append(keys, key)
		}
		g.files = append(g.files, f)
		g.hdrs = append(g.hdrs, h)
	}
	for _, key := range keys {
		g := byKey[key]
		first := g.hdrs[0]
		paths := escape.Path(strings.Join(scanfile.Strings(first.Paths), " "))
		count := first.Shard.Count
		seen := map[uint32]string{}
		for i, h := range g.hdrs {
			if o := seen[h.Shard.Index]; o != "" && !sameFile(o, g.files[i]) {
				return nil, nil, usagef("%s and %s are both shard %s of the scan of %s: merging both would count its files twice",
					escape.Path(o), escape.Path(g.files[i]), h.Shard, paths)
			}
			seen[h.Shard.Index] = g.files[i]
			if h.Options != first.Options {
				return nil, nil, usagef("%s and %s are shards of the scan of %s made with different options (--follow, --count-links, -x): their shares do not add up to one scan",
					escape.Path(g.files[0]), escape.Path(g.files[i]), paths)
			}
		}
		var missing []string
		for i := uint32(0); i < count; i++ {
			if seen[i] == "" {
				missing = append(missing, fmt.Sprintf("%d/%d", i, count))
			}
		}
		if len(missing) > 0 {
			if len(missing) > 10 {
				missing = append(missing[:10], fmt.Sprintf("and %d more", len(missing)-10))
			}
			notes = append(notes, fmt.Sprintf("%d of the %d shards of the scan of %s are missing (%s): the result covers the shares of the %d given only",
				int(count)-len(g.files), count, paths, strings.Join(missing, ", "), len(g.files)))
		}
		groups = append(groups, g.files)
	}
	return notes, groups, nil
}

// shardPaths are the paths of the merged scans, as Merge lists them (each
// scan's in turn), but those of a sharded scan once, not once per shard.
func shardPaths(files []string, groups [][]string) []scanfile.Path {
	follower := map[string]bool{}
	for _, g := range groups {
		for _, f := range g[1:] {
			follower[f] = true
		}
	}
	var paths []scanfile.Path
	for _, f := range files {
		if h, err := scanfile.ReadHeader(f); err == nil && !follower[f] {
			paths = append(paths, h.Paths...)
		}
	}
	return paths
}

// sameFile reports whether a and b name one file (Merge refuses it).
func sameFile(a, b string) bool {
	fa, ea := os.Stat(a)
	fb, eb := os.Stat(b)
	return ea == nil && eb == nil && os.SameFile(fa, fb)
}

// withoutShardOverlaps leaves out of Merge's notes those about two scans
// naming the same paths when they are shards of one scan (checkShards'
// groups): they share their paths, not their files.
func withoutShardOverlaps(notes []string, groups [][]string) []string {
	var out []string
next:
	for _, n := range notes {
		for _, g := range groups {
			for _, a := range g {
				for _, b := range g {
					if a != b && (strings.HasPrefix(n, a+" and "+b+" both scanned ") ||
						strings.HasPrefix(n, a+" (host ") && strings.Contains(n, ") and "+b+" (host ")) {
						continue next
					}
				}
			}
		}
		out = append(out, n)
	}
	return out
}

// printSaved prints the report of a saved (or merged) scan in the format
// asked for (ram > 0, bytes: with the ARC verdict), assembled as for a
// scan with the saved settings; exit 3 when paths could not be read.
func printSaved(sc *scanfile.Scan, zdb, json bool, ram uint64, stdout, stderr io.Writer) error {
	res, err := scan.FromSaved(sc)
	var rep *report.Scan
	if err == nil {
		rep, err = res.Report(ram)
	}
	if err != nil {
		return err
	}
	rep.Counters.PeakRSS = analyzer.PeakRSS()
	if err := writeReport(rep, format{zdb: zdb, json: json}, stdout, stderr); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if res.Scan.Counters.Errors > 0 {
		return statusError{exitWithErrors, ""}
	}
	return nil
}

func (r *resumeCmd) Run(std *streams) error {
	stdout, stderr := std.stdout, std.stderr
	ctx, interruptCode, stop := interruptContext(context.Background())
	defer stop()
	return r.runContext(ctx, interruptCode, stdout, stderr)
}

// runContext continues the saved scan until done or ctx is cancelled,
// saves it again and prints the report; it ends as a scan does, or with 1
// when the file cannot be read, 2 when it cannot be resumed here.
func (r *resumeCmd) runContext(ctx context.Context, interruptCode func() int, stdout, stderr io.Writer) error {
	if err := checkJobs(r.Jobs); err != nil {
		return err
	}
	saved, err := scanfile.Read(r.File, scanfile.DecodeOptions{})
	if err != nil {
		return err
	}
	name := escape.Path(r.File)
	if saved.Complete {
		fmt.Fprintf(stderr, "ddtsim: %s: the scan is complete; nothing to resume\n", name)
		return printSaved(saved, r.Zdb, r.JSON, 0, stdout, stderr)
	}
	if v := scan.Version(); saved.Ddtsim != v {
		fmt.Fprintf(stderr, "ddtsim: note: %s was saved by %s; this is %s\n", name, saved.Ddtsim, v)
	}
	if host, _ := os.Hostname(); saved.Host != "" && host != saved.Host {
		fmt.Fprintf(stderr, "ddtsim: note: %s was scanned on host %s, this is %s: its paths must name the same files here\n", name, saved.Host, host)
	}
	set, err := scan.Resumable(saved, name)
	if err != nil {
		return err
	}
	h := &saved.Header
	s := &scanCmd{
		Zdb: r.Zdb, JSON: r.JSON, Jobs: r.Jobs, Mem: r.Mem, TmpDir: r.TmpDir, Save: r.File,
		Follow: h.Options.Follow, CountLinks: h.Options.CountLinks, OneFileSystem: h.Options.OneFileSystem,
		Paths:  scanfile.Strings(h.Paths),
		preset: &set,
		save:   &saving{resume: saved},
	}
	if h.Shard != nil && h.Shard.Sharded() {
		s.Shard = h.Shard.String() // the shard continues its own share
	}
	return s.runContext(ctx, interruptCode, stdout, stderr)
}
