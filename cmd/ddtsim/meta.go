package main

// The commands about ddtsim itself: --version and version, help [command],
// completion SHELL and man. Completion scripts and the man page are
// written from the kong model (cmd/ddtsim/internal/kongdoc), so they
// follow the flags as they change; docs/ddtsim.1 is `ddtsim man`'s output,
// kept current by TestManPageCurrent.

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/ddtsim/ddtsim/cmd/ddtsim/internal/buildinfo"
	"github.com/ddtsim/ddtsim/cmd/ddtsim/internal/kongdoc"
	"github.com/ddtsim/ddtsim/report"
)

// versionFlag is --version: it prints what versionCmd prints and ends the
// run with status 0, whatever else the line holds.
type versionFlag bool

// BeforeReset prints the version (kong runs it as soon as the flag is
// parsed, before any command's checks).
func (versionFlag) BeforeReset(kctx *kong.Context) error {
	fmt.Fprint(kctx.Stdout, buildinfo.Get().Text())
	kctx.Kong.Exit(exitOK)
	return nil
}

type versionCmd struct {
	JSON bool `name:"json" help:"Print it as JSON."`
}

func (v *versionCmd) Run(std *streams) error {
	in := buildinfo.Get()
	if v.JSON {
		e := json.NewEncoder(std.stdout)
		e.SetIndent("", "  ")
		return e.Encode(in)
	}
	_, err := io.WriteString(std.stdout, in.Text())
	return err
}

type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The command whose help to print (none: ddtsim's own)."`
}

// Run prints the help of the command named, as COMMAND --help does.
func (h *helpCmd) Run(kctx *kong.Context) error {
	node := kctx.Model.Node
	for _, w := range h.Command {
		var next *kong.Node
		var names []string
		for _, ch := range node.Children {
			if ch.Type != kong.CommandNode || ch.Hidden {
				continue
			}
			names = append(names, ch.Name)
			if ch.Name == w || slices.Contains(ch.Aliases, w) {
				next = ch
			}
		}
		if next == nil && len(names) == 0 {
			// A command has no subcommands (found by a new user: "help
			// scan sweep" listed none, "(commands: )").
			return usagef("help: %s has no subcommands: ddtsim help %s", node.Name, node.Name)
		}
		if next == nil {
			return usagef("help: no command %q (commands: %s)", w, strings.Join(names, ", "))
		}
		node = next
	}
	tctx, err := kong.Trace(kctx.Kong, h.Command)
	if err != nil {
		return err
	}
	// The trace selects the default command (scan) when no word names one:
	// keep the application and the commands named.
	tctx.Path = tctx.Path[:min(len(tctx.Path), 1+len(h.Command))]
	return tctx.PrintUsage(false)
}

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish. Load the script with: bash: source <(ddtsim completion bash) (e.g. in ~/.bashrc); zsh: ddtsim completion zsh > a file named _ddtsim in a directory of $$fpath; fish: ddtsim completion fish > ~/.config/fish/completions/ddtsim.fish."`
}

func (c *completionCmd) Run(kctx *kong.Context, std *streams) error {
	return kongdoc.WriteCompletion(std.stdout, kctx.Model, c.Shell)
}

type manCmd struct{}

func (manCmd) Run(kctx *kong.Context, std *streams) error {
	return kongdoc.WriteMan(std.stdout, kctx.Model, manPage)
}

// manPage is what the man page says beyond the kong model.
var manPage = kongdoc.Page{
	Section: 1,
	Name:    "predict ZFS dedup and compression savings before copying data onto ZFS",
	Extra: []kongdoc.Section{
		{Title: "Paths named like commands", Paragraphs: []string{
			"A path named like a command (" + strings.Join(commandNames, ", ") + ") is read as that command: write ./NAME, or ddtsim scan NAME, to scan it.",
		}},
		{Title: "Exit status", Paragraphs: []string{
			"A scan: 0 done; 1 the scan could not run or the report could not be written; 2 bad flags or property values; 3 done, but some paths could not be read (named on standard error); 130 interrupted by SIGINT, 143 by SIGTERM, 129 by SIGHUP (the partial result is printed and marked partial).",
			"sweep and resume: as a scan. merge and report: 0 merged; 1 a scan could not be read; 2 scans that do not add up; 3 some paths could not be read when scanned; 4 incomplete: shards missing or interrupted scans (the report says PARTIAL).",
			"compare: 0 the prediction equals the pool's output, 1 it differs, 2 the output cannot be compared. parse: 0 read; 1 errors or failed checks; 2 nothing usable.",
		}},
		{Title: "See also", Paragraphs: []string{
			"zdb(8), zpool(8), zfs(8), zfsprops(7). README.md and docs/ in the source repository (github.com/ddtsim/ddtsim) explain the model and how exact it is (docs/accuracy.md).",
		}},
	},
}

// reportJSON is a report as --json prints it: the report's fields, then
// the binary that made it (the ddtsim object: version, commit, Go, zstd
// implementation), so that a JSON report kept alongside a bug report says
// which ddtsim wrote it.
type reportJSON struct {
	*report.Report
	Build buildinfo.Info `json:"ddtsim"`
}

// writeReportJSON writes rep as --json prints it.
func writeReportJSON(w io.Writer, rep *report.Report) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(reportJSON{rep, buildinfo.Get()})
}
