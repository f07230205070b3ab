package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/sweep"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

type sweepCmd struct {
	PoolFlags `embed:""`
	Property  []string `short:"o" name:"property" sep:"none" placeholder:"NAME=VALUE[,VALUE...]" help:"Dataset property as for scan; recordsize, volblocksize and compression take a comma-separated list of values (e.g. -o recordsize=16K,128K,1M -o compression=off,lz4,zstd, or --zvol -o volblocksize=8K,16K,64K), and every combination is a row. copies and dedup take one value. Repeatable."`
	Zvol      bool     `name:"zvol" help:"Store each file as a sparse volume, as scan --zvol does; the rows differ in -o volblocksize=LIST (default: the volblocksize zfs create -V would choose) and compression. -o volblocksize alone implies it."`
	Sort      string   `default:"space" enum:"space,ram" help:"Order of the rows, best first: space = allocated DSIZE ascending, ram = in-core DDT size ascending (ties: by recordsize, then compression)."`
	Histogram int      `name:"histogram" placeholder:"N" help:"After the table, print the zdb -S text of row N (1 = first row)."`
	JSON      bool     `name:"json" help:"Print the rows as JSON (with each row's zdb -S text)."`
	Jobs      int      `short:"j" default:"0" help:"Files read at once, and at most as many CPUs busy (0: one per CPU)."`
	Cache     bool     `name:"cache" negatable:"" help:"--cache leaves what the sweep reads in the page cache; by default (--no-cache) the pages it brings into the cache are dropped once read, as for scan."`
	Paths     []string `arg:"" name:"path" help:"Files and directories to scan (each byte is read once for all combinations)."`
	// Read is scan's --read, refused here by name rather than as an
	// unknown flag (found by a new user).
	Read string `name:"read" hidden:""`

	env *env // the process's (env.go); nil: main's
}

func (s *sweepCmd) Run(std *streams) error {
	stdout, stderr := std.stdout, std.stderr
	if s.Release == "list" {
		return usagef("sweep --release list: use ddtsim --release list")
	}
	if s.Read != "" {
		return usagef("sweep --read: sweep reads every record (its rows are exact); estimate from a fraction with ddtsim scan --read %s, one -o setting at a time", s.Read)
	}
	set, lanes, err := sweep.Lanes(model.Text{Release: s.Release, Properties: s.Property, Vdevs: s.Vdev, Ashift: s.Ashift, Sparse: s.Sparse, Guest: s.Guest, Zvol: s.Zvol})
	if err != nil {
		return usage(err)
	}
	if err := scan.CheckJobs(s.Jobs); err != nil {
		return err
	}
	capCPUs(s.env, s.Jobs)
	if s.Histogram != 0 && s.JSON {
		return usagef("--histogram with --json: the JSON has every row's zdb -S text already (zdb_S); drop --histogram")
	}
	if s.Histogram < 0 || s.Histogram > len(lanes) {
		return &scan.OptionError{Option: "--histogram", Value: fmt.Sprint(s.Histogram), Reason: fmt.Sprintf("invalid (accepted: 1 to %d, a row of the table)", len(lanes))}
	}
	if err := source.CheckNamed(s.Paths); err != nil {
		return usage(err)
	}
	ctx, interruptCode, stop := interruptContext(context.Background())
	defer stop()
	return s.runContext(ctx, interruptCode, set, lanes, stdout, stderr)
}

// runContext sweeps until done or ctx is cancelled and prints the report
// (marked partial when cancelled); interruptCode gives the exit status
// for a cancelled ctx.
func (s *sweepCmd) runContext(ctx context.Context, interruptCode func() int, set model.Settings, lanes []*zio.Policy, stdout, stderr io.Writer) error {
	prog := &analyzer.Progress{}
	bar := startProgress(prog, stderr) // on a terminal only, as the scan's
	res, err := sweep.Run(ctx, s.Paths, sweep.Options{Lanes: lanes, Sparse: set.Sparse, Guest: set.Guest, Zvol: set.Zvol, Jobs: s.Jobs, Progress: prog, KeepCache: s.Cache, Faults: s.env.sourceFaults(),
		Warn: func(path string, err error) {
			bar.println(fmt.Sprintf("ddtsim: %s: %s", escape.Path(path), scan.Reason(path, err)))
		}})
	bar.stop()
	if res == nil {
		return err
	}
	sw := report.NewSweep(res, set, s.Sort)
	sw.Partial = err != nil // Run returns a result with an error only when interrupted
	if s.JSON {
		err = sw.WriteJSON(stdout)
	} else {
		err = sw.WriteText(stdout, s.Histogram)
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return endStatus(sw.Partial, res.Counters.Errors, res.Counters.Changed, interruptCode)
}
