package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/scan/outpath"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// Saved scans: scan --save DIR, merge DIR..., resume DIR.

type mergeCmd struct {
	OutputFlags  `embed:"" set:"bytes_help=In the text summary, give the exact byte count beside every size; JSON always holds exact bytes."`
	SavedRAMFlag `embed:""`
	Jobs         int      `short:"j" default:"0" help:"Table partitions merged at once (0: one per CPU, at most 16)."`
	Mem          string   `name:"mem" placeholder:"SIZE" help:"Bound the merge's memory (e.g. 256M): fewer partitions are merged at once. The merge streams the saved tables, so its memory does not grow with their entries; it needs about 2 MiB per saved scan at least. The groups of a --read sample (read by groups) go to sorted runs in $TMPDIR past it."`
	Files        []string `arg:"" name:"scan" help:"Scans saved with ddtsim --save DIR (or files saved by ddtsim before version 2 of the format), made with the same properties (release rules, recordsize, compression, copies, dedup, vdevs, ashift, sparse, sample) and, for scans made with --read, the same fraction and seed (their samples add up; the estimate is computed once). The N shards of a scan made with --shard i/N add up to the scan of the whole tree (each given once; missing ones are noted)."`
}

type resumeCmd struct {
	OutputFlags `embed:"" set:"bytes_help=In the text summary, give the exact byte count beside every size; JSON always holds exact bytes."`
	WorkFlags   `embed:"" set:"mem_help=Bound the dedup table's memory, as for scan (the saved table is read into memory first)." set:"tmpdir_help=Where --mem writes its runs, as for scan."`
	Checkpoint  time.Duration `name:"checkpoint" default:"5m" placeholder:"DURATION" help:"Save the scan every DURATION while it runs, as for scan --save (0: only at the end)."`
	File        string        `arg:"" name:"scan" help:"A scan saved with ddtsim --save DIR (or a file saved by ddtsim before version 2 of the format: it is saved again as a directory). It is rescanned with its own flags and paths, skipping what it did, and updated."`

	env *env // the process's (env.go); nil: main's
}

// startSave opens --save before the scan (scan.OpenSaver): the directory
// must not lie inside the paths scanned nor hold one, must be a saved
// scan (or empty) if it exists, and writable now, not only after hours of
// scanning. A symlink is written through: its target is replaced, the
// link stays.
func (s *scanCmd) startSave() error {
	if s.Save == "" {
		return nil
	}
	sv, err := scan.OpenSaver(s.Save, s.Paths, s.OneFileSystem)
	if err != nil {
		return err
	}
	s.saver = sv
	return nil
}

// run merges the saved scans and prints the report. Exit status: 0
// merged; 1 a file could not be read (missing, not a saved scan, of
// another version, truncated, corrupt); 2 the scans have different
// properties (listed); 3 merged, but some paths could not be read when the
// scans were made; 4 merged, but incomplete: shards missing or
// interrupted scans among them (before 3).
func (m *mergeCmd) Run(std *streams) error {
	stdout, stderr := std.stdout, std.stderr
	ram, err := parseRAM(m.RAM)
	if err != nil {
		return usage(err)
	}
	if err := scan.CheckJobs(m.Jobs); err != nil {
		return err
	}
	var mem int64
	if m.Mem != "" {
		n, err := model.ParseSize(m.Mem)
		if err != nil || n == 0 || n > math.MaxInt64 {
			return &scan.OptionError{Option: "--mem", Value: m.Mem, Reason: "invalid (accepted: the merge's memory bound as a size, a whole number with an optional K, M, G, T, P or E suffix (powers of 1024; KiB or KB the same), e.g. 256M, 2G)"}
		}
		mem = int64(n)
	}
	if need := saved.MinMergeMemory(len(m.Files)); mem > 0 && mem < need {
		fmt.Fprintf(stderr, "ddtsim: note: --mem %s is less than the %s that merging %d saved scans needs (a partition of each open at once): it uses that\n",
			m.Mem, nicenum.Format(uint64(need), true), len(m.Files))
	}
	mg, err := saved.Merge(m.Files, saved.MergeOptions{Jobs: m.Jobs, Mem: mem})
	if err != nil {
		return err // a *saved.ModelError or ErrSameScan is a usage error
	}
	return printMerged(mg, format{zdb: m.Zdb, json: m.JSON, bytes: m.Bytes}, ram, stdout, stderr)
}

// printMerged prints merged scans' notes and report (merge, report
// --histogram); a merge missing shards or holding interrupted scans ends
// with exitIncomplete and says so.
func printMerged(mg *saved.Merged, f format, ram uint64, stdout, stderr io.Writer) error {
	for _, n := range mg.Notes {
		fmt.Fprintln(stderr, "ddtsim: note:", n)
	}
	res, err := scan.FromMerged(mg)
	if err == nil {
		err = printResult(res, f, ram, stdout, stderr)
	}
	if st := (statusError{}); (len(mg.Partial) > 0 || len(mg.Missing) > 0) && (err == nil || errors.As(err, &st)) {
		var why []string
		if len(mg.Partial) > 0 {
			why = append(why, "interrupted scans: "+escape.Path(strings.Join(mg.Partial, ", "))+" (ddtsim resume DIR completes one)")
		}
		if len(mg.Missing) > 0 {
			why = append(why, "shards missing (see the notes above)")
		}
		return statusError{exitIncomplete, "the result is partial: " + strings.Join(why, "; ")}
	}
	return err
}

// printSaved prints the report of a saved (or merged) scan in the format
// asked for (ram > 0, bytes: with the ARC verdict), assembled as for a
// scan with the saved settings; exit 3 when paths could not be read.
func printSaved(sc *saved.Scan, f format, ram uint64, stdout, stderr io.Writer) error {
	res, err := scan.FromSaved(sc)
	if err != nil {
		return err
	}
	return printResult(res, f, ram, stdout, stderr)
}

// printResult prints the report of res, as printSaved.
func printResult(res *scan.Result, f format, ram uint64, stdout, stderr io.Writer) error {
	rep, err := res.Report(ram)
	if err != nil {
		return err
	}
	rep.Counters.PeakRSS = analyzer.PeakRSS()
	if err := writeReport(rep, f, stdout, stderr); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if res.Analysis.Counters.Errors > 0 {
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
	if err := scan.CheckJobs(r.Jobs); err != nil {
		return err
	}
	capCPUs(r.env, r.Jobs)
	if err := r.checkSaving(); err != nil {
		return err
	}
	prev, err := saved.Read(r.File, saved.DecodeOptions{})
	if err != nil {
		return err
	}
	name := escape.Path(r.File)
	// What a run killed while saving left beside it (a checkpoint being
	// written) goes, now that no run of it is writing.
	if target, err := outpath.LinkTarget(r.File); err == nil {
		saved.RemoveStale(target)
	}
	if prev.Complete {
		fmt.Fprintf(stderr, "ddtsim: %s: the scan is complete; nothing to resume\n", name)
		if st, err := os.Stat(r.File); err == nil && !st.IsDir() {
			// A scan of format 1: prev again as a directory of Parquet
			// files, which SQL engines read too.
			target, err := outpath.LinkTarget(r.File)
			if err == nil {
				err = saved.Write(target, prev)
			}
			if err != nil {
				return fmt.Errorf("%s: converting it to the Parquet format: %w", name, err)
			}
			fmt.Fprintf(stderr, "ddtsim: %s: converted from format 1 (one file) to format %d (a directory of Parquet files)\n", name, prev.Version)
		}
		return printSaved(prev, format{zdb: r.Zdb, json: r.JSON, bytes: r.Bytes}, 0, stdout, stderr)
	}
	if v := scan.Version(); prev.Ddtsim != v {
		fmt.Fprintf(stderr, "ddtsim: note: %s was prev by %s; this is %s\n", name, prev.Ddtsim, v)
	}
	if host, _ := os.Hostname(); prev.Host != "" && host != prev.Host {
		fmt.Fprintf(stderr, "ddtsim: note: %s was scanned on host %s, this is %s: its paths must name the same files here\n", name, prev.Host, host)
	}
	set, err := scan.Resumable(prev, name)
	if err != nil {
		return err
	}
	h := &prev.Header
	s := &scanCmd{
		OutputFlags: r.OutputFlags, WorkFlags: r.WorkFlags, Save: r.File, Checkpoint: r.Checkpoint,
		Follow: h.Options.Follow, CountLinks: h.Options.CountLinks, OneFileSystem: h.Options.OneFileSystem,
		Paths:  saved.Strings(h.Paths),
		preset: &set,
		resume: prev,
		env:    r.env,
	}
	if h.Shard != nil && h.Shard.Sharded() {
		s.Shard = h.Shard.String() // the shard continues its own share
	}
	return s.runContext(ctx, interruptCode, stdout, stderr)
}

// checkSaving refuses, before the saved scan is read, to resume one that
// a running process is saving (saved.LockedError), and explains a missing
// one: a scan stopped before its first checkpoint saved nothing (its lock
// file, left beside, names it), rather than a bare "no such file".
func (r *resumeCmd) checkSaving() error {
	target, err := outpath.LinkTarget(r.File)
	if err != nil {
		return nil // saved.Read says
	}
	pid, held := saved.LockHolder(target)
	_, statErr := os.Lstat(target)
	missing := errors.Is(statErr, fs.ErrNotExist)
	name := escape.Path(r.File)
	who := "the scan saving there"
	if pid > 0 {
		who += fmt.Sprintf(" (PID %d)", pid)
	}
	switch {
	case held && missing:
		return fmt.Errorf("%s: no checkpoint written yet: %s is still running; it saves at its first checkpoint (--checkpoint, every 5m by default), when interrupted (Ctrl-C, SIGTERM) and at its end", name, who)
	case held:
		return &saved.LockedError{Path: r.File, PID: pid}
	case missing && pid > 0:
		return fmt.Errorf("%s: no checkpoint was written: %s was stopped before its first checkpoint (--checkpoint, every 5m by default) and saved nothing; run the scan again with --save %s", name, who, name)
	case missing:
		return fmt.Errorf("%s: no saved scan there (no such file or directory): a scan killed before its first checkpoint (--checkpoint, every 5m by default) saves nothing; run it again with --save %s, or check the name", name, name)
	}
	return nil
}
