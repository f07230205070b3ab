package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zdb/live"
	"github.com/ddtsim/ddtsim/zfs/model"
)

type compareCmd struct {
	Scan      scanCmd       `embed:""`
	ZdbOutput string        `name:"zdb-output" placeholder:"FILE" xor:"actual" help:"The actual text: what zdb -S printed for these files' pool (zdb -DD or zpool status -D output also works, for a pool whose data was all written with dedup on), and/or what zfs list and zpool list printed for it (with their header lines; -p or human sizes; the first row: the pool's root dataset, the pool), one after the other; - reads standard input."`
	Pool      string        `placeholder:"POOL" xor:"actual" help:"Run zdb -S POOL (read-only) and compare with what it prints. zdb usually needs root."`
	Exported  bool          `help:"With --pool: the pool is not imported; run zdb -e, which reads the pool from its disks."`
	Dir       string        `placeholder:"DIR" help:"With --exported: the directory holding the pool's devices (zdb -e -p DIR), e.g. /dev/disk/by-id."`
	Tolerance float64       `default:"0" help:"How far each of the four ratios may differ beyond its display precision and still count as equal (absolute, e.g. 0.01). Default 0: they must print alike. Cells: --cell-tolerance."`
	CellTol   float64       `name:"cell-tolerance" default:"0" help:"How far each table cell may differ from the value it prints, as a fraction (0.005 = 0.5%), and still count as equal: for zstd scanned by a build without cgo, which approximates it (the default cgo build is exact). Default 0: cells must print alike."`
	SpaceTol  float64       `name:"space-tolerance" default:"0.01" help:"How far each zfs list and zpool list figure (USED, USEDDS, REFER, LUSED, LREFER, RATIO; ALLOC, DEDUP) may lie from the value it prints, as a fraction (0.01 = 1%, the model's measured bound), and still count as equal."`
	Timeout   time.Duration `default:"2h" help:"With --pool: stop zdb after this long (0: no limit). zdb -S reads every block pointer of the pool; large pools take hours."`
}

// run compares the prediction for the paths with the actual text. Exit
// status: 0 equal within display precision, 1 different, 2 unusable input
// (or bad flags), 130 interrupted.
func (c *compareCmd) Run(std *streams) error {
	stdout, stderr := std.stdout, std.stderr
	s := &c.Scan
	fail := usagef // exit 2, as exitCompareUnusable
	switch {
	case c.ZdbOutput == "" && c.Pool == "":
		return fail("compare needs the actual output: --zdb-output FILE, or --pool POOL to run zdb -S")
	case s.Zdb:
		return fail("--zdb belongs to the scan command; compare prints a comparison (--json for JSON)")
	case s.By != "" || s.CSV || s.HTML != "":
		return fail("--by, --csv and --html belong to the scan command")
	case s.Save != "":
		return fail("--save belongs to the scan command")
	case s.Shard != "":
		return fail("--shard belongs to the scan command: compare needs the prediction for all the files, which one shard's scan is not")
	case s.RAM != "":
		return fail("--ram belongs to the scan command: a comparison of histograms has no DDT size (ddtsim --ram SIZE PATH prints it)")
	case s.Sample != "" && !noSampling(s.Sample):
		return fail("--sample %s: compare needs the exact prediction: a sampled one is an estimate, and setting it beside zdb's exact table would blame the pool for the sampling error; run compare without --sample (ddtsim --sample prints the estimate with its intervals)", s.Sample)
	case s.Read != "":
		return fail("--read %s: compare needs the exact prediction: an estimate from a fraction of the records read, set beside zdb's exact table, would blame the pool for the sampling error; run compare without --read (ddtsim --read prints the estimate with its ranges)", s.Read)
	case c.Exported && c.Pool == "":
		return fail("--exported goes with --pool")
	case c.Dir != "" && !c.Exported:
		return fail("--dir goes with --exported (zdb -e -p DIR)")
	case c.Tolerance < 0 || c.Tolerance != c.Tolerance:
		return fail("--tolerance %g: must be 0 or more", c.Tolerance)
	case c.CellTol < 0 || c.CellTol >= 1 || c.CellTol != c.CellTol:
		return fail("--cell-tolerance %g: must be a fraction from 0 to below 1 (0.005 = 0.5%%)", c.CellTol)
	case c.SpaceTol < 0 || c.SpaceTol >= 1 || c.SpaceTol != c.SpaceTol:
		return fail("--space-tolerance %g: must be a fraction from 0 to below 1 (0.01 = 1%%)", c.SpaceTol)
	case c.Timeout < 0:
		return fail("--timeout %s: must be 0 (no limit) or more", c.Timeout)
	case len(s.Paths) == 0:
		return fail("expected <path> ...: name the files and directories to predict")
	}
	// Flag errors before any long work.
	if _, err := s.settings(); err != nil {
		return fail("%v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), interruptSignals()...)
	defer stop()

	var (
		actual *zdb.Parsed
		source string
		job    *live.Job
	)
	scanCtx, cancelScan := context.WithCancel(ctx)
	defer cancelScan()
	if c.ZdbOutput != "" {
		var err error
		actual, err = readText(c.Scan.env, c.ZdbOutput)
		if err != nil {
			return fail("%v", err)
		}
		source = c.ZdbOutput
		if source == "-" {
			source = "standard input"
		}
		if actual.Primary() == nil && len(actual.Lists) == 0 {
			printDiags(stderr, source, actual)
			return fail("%s: no DDT histogram table found, nor a zfs list or zpool list table (with its header line): nothing to compare with", source)
		}
	} else {
		if err := live.CheckPoolName(c.Pool); err != nil {
			return fail("--pool %q: %v", c.Pool, err)
		}
		if c.Dir != "" {
			if st, err := os.Stat(c.Dir); err != nil || !st.IsDir() {
				return fail("--dir %s: not a directory", c.Dir)
			}
		}
		path, err := live.LookPath()
		if err != nil {
			return fail("zdb not found on PATH: install the OpenZFS tools (zfsutils-linux, zfs), or run zdb -S %s elsewhere and pass its output with --zdb-output FILE", c.Pool)
		}
		opts := live.RunOptions{Path: path, Exported: c.Exported, Dir: c.Dir, Timeout: c.Timeout}
		source = "zdb " + strings.Join(live.Args(c.Pool, opts), " ")
		job = live.Start(ctx, c.Pool, opts, cancelScan) // zdb failed: no point in finishing the scan
	}

	pred, predErr := s.predict(scanCtx, stderr)
	if pred != nil {
		defer pred.close()
	}
	if job != nil {
		if pred == nil {
			job.Cancel() // the scan failed: stop zdb too
		}
		out, err := job.Wait()
		if ctx.Err() != nil {
			return statusError{exitInterrupt, "interrupted"}
		}
		if pred == nil {
			return predErr
		}
		if err != nil {
			return fail("%s: %v", source, zdbError(err, c.Timeout))
		}
		if out.Stderr != "" {
			fmt.Fprintf(stderr, "ddtsim: %s said on stderr:\n%s", source, indent(out.Stderr))
		}
		actual, err = zdb.Parse(bytes.NewReader(out.Stdout))
		if err != nil {
			return fail("%s: reading its output: %v", source, err)
		}
		if actual.Primary() == nil {
			printDiags(stderr, source, actual)
			return fail("%s printed no DDT histogram (%d lines of output): nothing to compare with", source, actual.Lines)
		}
	}
	if pred == nil {
		return predErr
	}
	if pred.res.Partial {
		return statusError{exitInterrupt, "interrupted"}
	}

	cmp, err := pred.res.Compare(pred.report, actual, source, compare.Options{Tolerance: c.Tolerance, CellTolerance: c.CellTol, SpaceTolerance: c.SpaceTol})
	if err != nil {
		printDiags(stderr, source, actual)
		return fail("%s: %v", source, err)
	}
	cmp.Exit = compareExit(cmp.Outcome)
	if s.JSON {
		err = cmp.WriteJSON(stdout)
	} else {
		err = cmp.WriteText(stdout)
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	end := statusError{code: cmp.Exit}
	if n := pred.res.Analysis.Counters.Errors; n > 0 {
		end.msg = fmt.Sprintf("the scan completed with %s (see above); the prediction leaves those paths out", english.Count(n, "error"))
	}
	if end == (statusError{}) {
		return nil
	}
	return end
}

// noSampling reports whether a --sample value means no sampling ("1",
// "1/1").
func noSampling(v string) bool {
	n, err := model.ParseSample(v)
	return err == nil && n == 1
}

// printDiags shows why a text could not be used.
func printDiags(w io.Writer, source string, p *zdb.Parsed) {
	const max = 10
	for i, d := range p.Diags {
		if i == max {
			fmt.Fprintf(w, "ddtsim: %s: ... and %d more\n", source, len(p.Diags)-max)
			break
		}
		fmt.Fprintf(w, "ddtsim: %s: %s\n", source, d)
	}
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// zdbError words an error of live.Run for the command line: what to do
// about it, with the flags that do it.
func zdbError(err error, timeout time.Duration) error {
	var exit *live.ExitError
	switch {
	case errors.Is(err, live.ErrTimeout):
		return fmt.Errorf("did not finish within %s (--timeout) and was stopped; zdb -S reads every block pointer of the pool, which takes long on a large pool: raise --timeout, or run zdb -S yourself and pass its output with --zdb-output", timeout)
	case errors.As(err, &exit):
		return zdbFailure(exit)
	}
	return err
}

// zdbFailure explains a non-zero exit of zdb, with a hint when zdb's
// message (or the user running it) suggests one.
func zdbFailure(e *live.ExitError) error {
	var hint string
	switch {
	case e.PermissionDenied():
		hint = "zdb needs root: run ddtsim compare as root (sudo), or run sudo zdb -S yourself and pass its output with --zdb-output"
	case os.Geteuid() != 0:
		hint = "zdb usually needs root (this runs as uid " + fmt.Sprint(os.Geteuid()) + "): try sudo, or run sudo zdb -S yourself and pass its output with --zdb-output"
	}
	if e.NoSuchPool() {
		hint = strings.TrimPrefix(hint+"; ", "; ") + "if the pool is not imported, add --exported (and --dir with the directory of its devices)"
	}
	s := e.Error()
	if hint != "" {
		s += "\n  " + hint
	}
	return errors.New(s)
}
