package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/report"
)

// accumulator prepares --by: nil without it. It fails on an unknown kind
// and with --sample (a breakdown of a sample would not add up to the
// estimated totals).
func (s *scanCmd) accumulator() (*breakdown.Accumulator, error) {
	if s.By == "" {
		return nil, nil
	}
	if s.sample > 1 {
		return nil, fmt.Errorf("--by does not work with --sample yet: a breakdown needs every block")
	}
	return breakdown.NewAccumulator(strings.ToLower(s.By), s.Paths)
}

// withBreakdown makes the scan feed acc (when not nil).
func withBreakdown(acc *breakdown.Accumulator, o analyzer.Options) analyzer.Options {
	if acc == nil {
		return o
	}
	o.OnFile = acc.File
	o.OnBlock = acc.Block
	o.BlockRuns = true
	return o
}

// writeHTML writes the report's HTML page to path.
func writeHTML(path string, r *report.Scan) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = r.WriteHTML(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
