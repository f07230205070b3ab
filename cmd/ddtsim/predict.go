package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/internal/escape"
	"github.com/ddtsim/ddtsim/source"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
)

// prediction is a finished scan with the scan command's flags.
type prediction struct {
	res      *scan.Result
	report   *report.Scan
	spillDir string // --mem's runs: removed by close
}

// close removes what the prediction keeps on disk (--mem's runs); the
// table in res is not usable after it.
func (pr *prediction) close() { closeSpill(pr.res, pr.spillDir) }

// closeSpill closes the table's run files, then removes the spill
// directory: with the runs still open, a scan that failed for want of file
// descriptors could not even open the directory to remove it.
func closeSpill(res *scan.Result, dir string) {
	res.Close()
	removeSpillDir(dir)
}

// checkJobs refuses a -j out of range.
func checkJobs(n int) error {
	if n < 0 || n > analyzer.MaxJobs {
		return fmt.Errorf("--jobs %d: invalid (accepted: 0 for one per CPU, or 1 to %d)", n, analyzer.MaxJobs)
	}
	return nil
}

// predict runs the scan for the flags (scan.Run, with the progress bar
// and the per-path warnings on stderr) and assembles its report. On
// failure it has printed the reason and returns the exit status to use:
// exitUsage for bad flags, exitFailed when the scan could not run. A
// cancelled ctx gives a partial result.
func (s *scanCmd) predict(ctx context.Context, stderr io.Writer) (*prediction, int) {
	if len(s.Paths) == 0 {
		fmt.Fprintln(stderr, "ddtsim: expected <path> ...: name the files and directories to scan")
		return nil, exitUsage
	}
	if err := checkJobs(s.Jobs); err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitUsage
	}
	set, err := s.settings()
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitUsage
	}
	mem, spillDir, code := s.startSpill(stderr)
	if code != exitOK {
		return nil, code
	}
	prog := &analyzer.Progress{}
	bar := startProgress(prog, stderr)
	opts := scan.Options{
		Jobs:          s.Jobs,
		Progress:      prog,
		Follow:        s.Follow,
		CountLinks:    s.CountLinks,
		OneFileSystem: s.OneFileSystem,
		By:            s.By,
		Mem:           mem,
		SpillDir:      spillDir,
		SpillWarn:     func(err error) { bar.println("ddtsim: --mem: " + err.Error()) },
		Warn:          func(p source.Problem) { bar.println(fmt.Sprintf("ddtsim: %s: %s", p.Path, p.Reason)) },
	}
	if sv := s.save; sv != nil {
		opts.Save, opts.Resume = sv.target, sv.resume
	}
	if testDoneHook != nil {
		opts.Done = func(analyzer.FileInfo, uint64, uint64) { testDoneHook() }
	}
	res, err := scan.Run(ctx, set, s.Paths, opts)
	bar.stop()
	var ue *scan.UsageError
	var se *scan.SaveError
	switch {
	case errors.As(err, &ue):
		removeSpillDir(spillDir)
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitUsage
	case err != nil && res == nil:
		removeSpillDir(spillDir)
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitFailed
	}
	pr := &prediction{res: res, spillDir: spillDir}
	for _, m := range res.Missed {
		fmt.Fprintf(stderr, "ddtsim: %s: %s\n", m.Path, m.Reason)
	}
	saved := true
	switch {
	case errors.As(err, &se):
		fmt.Fprintf(stderr, "ddtsim: saving the scan in %s: %v\n", escape.Path(s.save.path), se.Err)
		saved = false
	case res.Partial && s.save != nil:
		name := escape.Path(s.save.path)
		fmt.Fprintf(stderr, "ddtsim: the partial scan is saved in %s: ddtsim resume %s continues it\n", name, name)
	}
	pr.report, err = res.Report(s.ram)
	if err != nil {
		pr.close()
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitFailed
	}
	if !saved {
		return pr, exitFailed
	}
	return pr, exitOK
}
