package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/ddt"
	"github.com/ddtsim/ddtsim/internal/escape"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/zio"
)

// prediction is a finished scan with the scan command's flags.
type prediction struct {
	policy      *zio.Policy
	sparse      analyzer.Sparse
	res         *analyzer.Result
	report      *report.Scan
	interrupted bool   // ctx was cancelled: res is partial
	spillDir    string // --mem's runs: removed by close
}

// close removes what the prediction keeps on disk (--mem's runs); the
// table in res is not usable after it.
func (pr *prediction) close() { closeSpill(pr.res, pr.spillDir) }

// closeSpill closes the table's run files, then removes the spill
// directory: with the runs still open, a scan that failed for want of file
// descriptors could not even open the directory to remove it.
func closeSpill(res *analyzer.Result, dir string) {
	if res != nil && res.Table != nil {
		res.Table.Close()
	}
	removeSpillDir(dir)
}

// predict runs the scan that `ddtsim scan` runs for the same flags (the
// policy from s.policy(), then analyzer.Scan with the progress bar and the
// per-path warnings on stderr) and returns its result. On failure it has
// printed the reason and returns the exit status to use: exitUsage for bad
// flags, exitFailed when the scan could not run. A cancelled ctx gives a
// partial result with interrupted set.
func (s *scanCmd) predict(ctx context.Context, stderr io.Writer) (*prediction, int) {
	if len(s.Paths) == 0 {
		fmt.Fprintln(stderr, "ddtsim: expected <path> ...: name the files and directories to scan")
		return nil, exitUsage
	}
	if s.Jobs < 0 || s.Jobs > analyzer.MaxJobs {
		fmt.Fprintf(stderr, "ddtsim: --jobs %d: invalid (accepted: 0 for one per CPU, or 1 to %d)\n", s.Jobs, analyzer.MaxJobs)
		return nil, exitUsage
	}
	var err error
	if s.sample, err = parseSample(s.Sample); err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitUsage
	}
	p, err := s.policy()
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitUsage
	}
	sparse, err := analyzer.ParseSparse(s.Sparse)
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitUsage
	}
	acc, err := s.accumulator()
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitUsage
	}
	mem, spillDir, code := s.startSpill(stderr)
	if code != exitOK {
		return nil, code
	}
	kept := false
	var res *analyzer.Result
	defer func() {
		if !kept {
			closeSpill(res, spillDir)
		}
	}()
	prog := &analyzer.Progress{}
	bar := startProgress(prog, stderr)
	var mu sync.Mutex
	var problems []report.Problem
	res, err = analyzer.Scan(ctx, s.Paths, s.withSave(withBreakdown(acc, analyzer.Options{
		Policy:        p,
		Sparse:        sparse,
		Jobs:          s.Jobs,
		Progress:      prog,
		Follow:        s.Follow,
		CountLinks:    s.CountLinks,
		OneFileSystem: s.OneFileSystem,
		Sample:        s.sample,
		Zvol:          s.zvol,
		Mem:           mem,
		SpillDir:      spillDir,
		SkipDirs:      skipDirs(spillDir),
		SpillWarn:     func(err error) { bar.println("ddtsim: --mem: " + err.Error()) },
		Warn: func(path string, err error) {
			kind := "error"
			if errors.Is(err, analyzer.ErrChanged) {
				kind = "changed"
			}
			why := reason(path, err)
			mu.Lock()
			problems = append(problems, report.Problem{Path: escape.Path(path), Kind: kind, Reason: why})
			mu.Unlock()
			bar.println(fmt.Sprintf("ddtsim: %s: %s", escape.Path(path), why))
		},
	})))
	bar.stop()
	pr := &prediction{policy: p, sparse: sparse, res: res}
	if err != nil {
		if !errors.Is(err, context.Canceled) || res == nil {
			fmt.Fprintln(stderr, "ddtsim:", err)
			return nil, exitFailed
		}
		pr.interrupted = true
	}
	pr.report, err = newReport(reportInput{policy: p, ashift: s.ashift, sparse: sparse, paths: s.Paths, res: res,
		sample: s.sample, zvol: s.zvol, ram: s.ram, partial: pr.interrupted, problems: problems})
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitFailed
	}
	if s.dedup != "" {
		pr.report.Properties["dedup"] = s.dedup // as given: verify, sha256,verify, ...
	}
	if acc != nil {
		pr.report.Breakdown = acc.Result(res.Table)
	}
	pr.spillDir, kept = spillDir, true
	return pr, exitOK
}

// reportInput is what a report is made of: the scan's model and result.
type reportInput struct {
	policy   *zio.Policy
	ashift   int
	sparse   analyzer.Sparse
	paths    []string
	res      *analyzer.Result
	sample   uint64 // --sample's N (1: none)
	zvol     bool
	ram      uint64 // --ram, bytes (0: none)
	partial  bool   // the scan was interrupted
	problems []report.Problem
}

// newReport assembles the report of a scan as every command shows it (a
// scan, and merge and resume from saved scans): the histogram and summary,
// the sample's estimate, the volume mode, the DDT size.
func newReport(in reportInput) (*report.Scan, error) {
	p := in.policy
	rep, err := report.NewScan(p, in.ashift, in.sparse, in.paths, in.res)
	if err != nil {
		return nil, err
	}
	rep.Partial = in.partial
	rep.Counters.PeakRSS = analyzer.PeakRSS()
	rep.Problems = append(rep.Problems, in.problems...)
	if in.sample > 1 {
		est := ddt.EstimateTable(in.res.Table, in.sample)
		c := in.res.Counters
		est.CheckCounted(c.Records - c.Holes)
		if err := rep.ApplySample(est, p.Release.BytesSuffix); err != nil {
			return nil, err
		}
	}
	if in.zvol {
		rep.SetVolume(p.RecordSize)
	}
	rep.EstimateDDT(p, in.ram)
	return rep, nil
}

// parseSample parses --sample: "1/N" or "N" (keep 1/N of the contents);
// "" or "1" means no sampling.
func parseSample(v string) (uint64, error) {
	if v == "" {
		return 1, nil
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(v), "1/"), 10, 64)
	if err != nil || n < 1 || n > 1<<20 {
		return 0, fmt.Errorf("--sample %s: invalid (accepted: 1/N with N from 1 to 1048576, e.g. 1/64)", v)
	}
	return n, nil
}

// skipDirs lists ddtsim's own directories that the walk must not enter.
func skipDirs(spillDir string) []string {
	if spillDir == "" {
		return nil
	}
	return []string{spillDir}
}
