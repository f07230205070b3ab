package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/ddtsim/ddtsim/estimate"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/text/escape"
)

// prediction is a finished scan with the scan command's flags.
type prediction struct {
	res    *scan.Result
	report *report.Report
}

// close removes what the prediction keeps on disk (--mem's runs); the
// table in res is not usable after it.
// defaultCheckpoint is --checkpoint's default (its tag says 5m).
const defaultCheckpoint = scan.DefaultCheckpoint

func (pr *prediction) close() { pr.res.Close() }

// capCPUs makes -j N also the most CPUs running ddtsim's Go code at once
// (GOMAXPROCS) when N is below it, so that -j 1 scans on one core: the
// walk, the opens ahead and the worker take turns (their system calls
// still overlap). An admin scanning a busy filer asks for that. 0, or an N
// at or above the CPUs, leaves it. e is the command's env (nil: the
// process's).
func capCPUs(e *env, jobs int) {
	if jobs > 0 && jobs < e.maxProcs(0) {
		e.maxProcs(jobs)
	}
}

// predict runs the scan for the flags (scan.Run, with the progress bar
// and the per-path warnings on stderr) and assembles its report. It
// returns nil and the error when there is nothing to report; a prediction
// and a statusError when the scan ran but its --save failed (said on
// stderr). A cancelled ctx gives a partial result.
func (s *scanCmd) predict(ctx context.Context, stderr io.Writer) (*prediction, error) {
	if len(s.Paths) == 0 {
		return nil, usagef("expected <path> ...: name the files and directories to scan")
	}
	capCPUs(s.env, s.Jobs)
	set, err := s.settings()
	if err != nil {
		return nil, usage(err)
	}
	mem, err := s.parseMem()
	if err != nil {
		return nil, err
	}
	shard, err := s.shard()
	if err != nil {
		return nil, err
	}
	var read estimate.Plan
	if s.Read == "" && s.ReadSeed != nil {
		// Refused as --top without --by is (found by a new user: it
		// was accepted and did nothing).
		return nil, usagef("--read-seed %d: needs --read: it seeds the random choice of the records --read reads", *s.ReadSeed)
	}
	if s.Read == "" && s.ReadBy != "" {
		return nil, usagef("--read-by %s: needs --read: it says what --read chooses at random", s.ReadBy)
	}
	if s.Read != "" {
		f, err := estimate.ParseFraction(s.Read)
		if err != nil {
			return nil, usagef("--read %s: %v", s.Read, err)
		}
		seed := uint64(1)
		if s.ReadSeed != nil {
			seed = *s.ReadSeed
		}
		groups := true
		switch strings.ToLower(s.ReadBy) { // as --by, whatever the case
		case "", "groups":
		case "records":
			groups = false
		default:
			return nil, usagef("--read-by %s: invalid (accepted: groups, records)", s.ReadBy)
		}
		read = estimate.Plan{Fraction: f, Seed: seed, Groups: groups}
	}
	prog := &analyzer.Progress{}
	bar := startProgress(prog, stderr)
	opts := scan.Options{
		Jobs:          s.Jobs,
		Progress:      prog,
		Follow:        s.Follow,
		CountLinks:    s.CountLinks,
		OneFileSystem: s.OneFileSystem,
		KeepCache:     s.Cache,
		By:            s.By,
		Top:           s.Top,
		Mem:           mem,
		TmpDir:        s.TmpDir,
		Shard:         shard,
		Read:          read,
		Faults:        s.env.sourceFaults(),
		SpillWarn:     func(err error) { bar.println("ddtsim: --mem: " + err.Error()) },
		Warn:          func(p source.Problem) { bar.println(fmt.Sprintf("ddtsim: %s: %s", p.Path, p.Reason)) },
	}
	if s.saver != nil {
		opts.Saver, opts.Resume = s.saver, s.resume
		opts.SaveWriter = s.env.saveWriterSeam()
		opts.Checkpoint = s.Checkpoint
		if s.Checkpoint == 0 {
			opts.Checkpoint = -1 // only at the end
		}
		verbose := os.Getenv("DDTSIM_DEBUG_CHECKPOINTS") != ""
		opts.Checkpointed = func(r scan.CheckpointReport) {
			switch {
			case r.Err != nil:
				bar.println(strings.TrimSuffix(prefixLines(fmt.Sprintf("checkpoint: %v; the scan goes on (the previous checkpoint stays)", r.Err)), "\n"))
			case verbose:
				bar.println(fmt.Sprintf("ddtsim: checkpoint: %d entries, workers paused %v (%v of it waiting for them to stop), written in %v",
					r.Entries, r.Pause.Round(time.Microsecond), r.Wait.Round(time.Microsecond), r.Write.Round(time.Millisecond)))
			}
		}
	}
	if done := s.env.doneHook(); done != nil {
		opts.Done = func(analyzer.FileInfo, uint64, uint64) { done() }
	}
	if s.Stages {
		opts.Stages = &analyzer.Stages{}
	}
	start := time.Now()
	res, err := scan.Run(ctx, set, s.Paths, opts)
	bar.stop()
	if opts.Stages != nil && res != nil { // a scan ran (not one refused before it began)
		opts.Stages.Print(stderr, time.Since(start))
	}
	var se *scan.SaveError
	if sde := (*scan.SpillDirError)(nil); errors.As(err, &sde) {
		return nil, s.spillDirError(sde)
	}
	if res == nil {
		return nil, err
	}
	pr := &prediction{res: res}
	for _, m := range res.Missed {
		fmt.Fprintf(stderr, "ddtsim: %s: %s\n", m.Path, m.Reason)
	}
	var saveErr error
	switch {
	case errors.As(err, &se):
		fmt.Fprint(stderr, prefixLines(fmt.Sprintf("saving the scan in %s: %v", escape.Path(s.saver.Name()), se.Err)))
		fmt.Fprint(stderr, prefixLines(s.keptNote(start)))
		saveErr = statusError{exitFailed, ""}
	case res.Partial && s.saver != nil:
		name := escape.Path(s.saver.Name())
		fmt.Fprintf(stderr, "ddtsim: the partial scan is saved in %s: ddtsim resume %s continues it\n", name, name)
	}
	if pr.report, err = res.Report(s.ram); err != nil {
		pr.close()
		return nil, err
	}
	pr.report.Counters.PeakRSS = analyzer.PeakRSS()
	return pr, saveErr
}

// keptNote says, after the save of a scan that began at start failed,
// what its directory holds: the save it held before is kept (Write
// replaces it only once the new one is whole), this run's last checkpoint
// (resume continues from it), or nothing.
func (s *scanCmd) keptNote(start time.Time) string {
	name := escape.Path(s.saver.Name())
	h, err := saved.ReadHeader(s.saver.Target())
	switch {
	case err != nil:
		return "nothing is saved in " + name + ": it is as it was before the scan"
	case !h.Complete && !h.Created.Before(start.UTC().Truncate(time.Second)):
		return fmt.Sprintf("%s keeps this scan's last checkpoint (saved %s): ddtsim resume %s continues from it",
			name, h.Created.Format(time.RFC3339), name)
	}
	what := "complete"
	if !h.Complete {
		what = "interrupted"
	}
	return fmt.Sprintf("the previous save in %s is kept: the %s scan saved there %s", name, what, h.Created.Format(time.RFC3339))
}
