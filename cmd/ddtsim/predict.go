package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/zio"
)

// prediction is a finished scan with the scan command's flags.
type prediction struct {
	policy      *zio.Policy
	sparse      analyzer.Sparse
	res         *analyzer.Result
	report      *report.Scan
	interrupted bool // ctx was cancelled: res is partial
}

// predict runs the scan that `ddtsim scan` runs for the same flags (the
// policy from s.policy(), then analyzer.Scan with the progress bar and the
// per-path warnings on stderr) and returns its result. On failure it has
// printed the reason and returns the exit status to use: exitUsage for bad
// flags, exitFailed when the scan could not run. A cancelled ctx gives a
// partial result with interrupted set.
//
// scanCmd.run does the same steps inline; it could call this instead.
func (s *scanCmd) predict(ctx context.Context, stderr io.Writer) (*prediction, int) {
	if len(s.Paths) == 0 {
		fmt.Fprintln(stderr, "ddtsim: expected <path> ...: name the files and directories to scan")
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
	prog := &analyzer.Progress{}
	done := startProgress(prog, stderr)
	res, err := analyzer.Scan(ctx, s.Paths, analyzer.Options{
		Policy:   p,
		Sparse:   sparse,
		Jobs:     s.Jobs,
		Progress: prog,
		Warn: func(path string, err error) {
			fmt.Fprintf(stderr, "ddtsim: %s: %s\n", path, reason(path, err))
		},
	})
	done()
	pr := &prediction{policy: p, sparse: sparse, res: res}
	if err != nil {
		if !errors.Is(err, context.Canceled) || res == nil {
			fmt.Fprintln(stderr, "ddtsim:", err)
			return nil, exitFailed
		}
		pr.interrupted = true
	}
	pr.report, err = report.NewScan(p, s.Ashift, sparse, s.Paths, res)
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return nil, exitFailed
	}
	pr.report.Partial = pr.interrupted
	return pr, exitOK
}
