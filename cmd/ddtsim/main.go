// Command ddtsim predicts what OpenZFS deduplication and compression would
// save on a set of files, printing the simulated dedup table exactly as
// `zdb -S` would for the same files on a real pool.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/zio"
)

// Exit statuses.
const (
	exitOK         = 0
	exitFailed     = 1 // the scan could not run
	exitUsage      = 2 // bad flags or property values
	exitWithErrors = 3 // completed, but some paths could not be read
	exitInterrupt  = 130
)

type cli struct {
	Scan    scanCmd    `cmd:"" default:"withargs" help:"Scan files and print the simulated dedup table (the default command)."`
	Parse   parseCmd   `cmd:"" help:"Read what zdb -S, zdb -D/-DD/-DDD or zpool status -D printed (any release) and summarize it."`
	Compare compareCmd `cmd:"" help:"Predict for the files and compare with what zdb -S printed for their pool (--zdb-output FILE, or --pool POOL to run zdb -S)."`
}

type scanCmd struct {
	Property      []string `short:"o" name:"property" sep:"none" placeholder:"NAME=VALUE" help:"Dataset property, as zfs create -o takes it: recordsize (512..16M, default 128K), compression (on, off, lz4, lzjb, zle, gzip[-1..9], zstd[-1..19], zstd-fast[-N]; default: the release's), copies (1..3), dedup (on, off, verify, sha256[,verify]). Repeatable."`
	Vdev          []string `name:"vdev" sep:"none" placeholder:"LAYOUT" help:"A top-level vdev, as zpool create names it with a disk count instead of devices: disk, stripe N (N disks), mirror N, raidz N, raidz1 N, raidz2 N, raidz3 N, draid[P][:Dd][:Cc][:Ss] [N] (e.g. draid2:4d:1s:11c, or draid2 8 = 8 children, D = min(8, N-P-S)). Repeat for several top-level vdevs. Default: one disk. When top-level vdevs differ in shape, DSIZE and the raw capacity assume every block (every copy) lands on the first one; PSIZE rounding uses them all."`
	Ashift        string   `default:"12" help:"Pool sector size as a power of two (9..16), for every vdev."`
	Release       string   `default:"latest" help:"OpenZFS release modelled: a version such as 2.1.11, 2.2 or 0.6.5.11 (${releases}; default: the newest). 'list' prints the releases and what differs."`
	Sparse        string   `default:"auto" enum:"auto,always,never" help:"How the files would be copied, as cp --sparse=WHEN: all-zero records become holes (always), are written (never), or holes only for files that look sparse (auto). Matters only with compression=off."`
	Zdb           bool     `help:"Print only the zdb -S text, byte for byte." xor:"format"`
	JSON          bool     `name:"json" help:"Print everything as JSON (exact integers)." xor:"format"`
	Jobs          int      `short:"j" default:"0" help:"Worker goroutines (0: one per CPU)."`
	Sample        string   `placeholder:"1/N" help:"Keep only 1/N of the block contents, chosen by hash (every copy of a kept content is kept): about 1/N of the memory and compression work. The table becomes an estimate, printed with 95% confidence intervals."`
	Follow        bool     `help:"Follow symlinks found inside directories (loops and directories seen before are skipped). Symlinks named as paths are always followed."`
	CountLinks    bool     `help:"Count every name of a hard-linked file as a separate copy (default: once, as cp -a stores it)."`
	OneFileSystem bool     `name:"one-file-system" short:"x" help:"Do not descend into directories on other file systems."`
	Paths         []string `arg:"" optional:"" name:"path" help:"Files and directories to scan (directories recursively; symlinks inside them are not followed). A path named like a command (scan, parse, compare) needs ./ before it."`

	ashift int    // parsed Ashift
	sample uint64 // parsed Sample
}

func main() {
	// With stdout closed, the first file opened would take its place and
	// the report would vanish: refuse to run.
	if _, err := unix.FcntlInt(1, unix.F_GETFD, 0); err != nil {
		fmt.Fprintln(os.Stderr, "ddtsim: standard output is closed; nowhere to print the report")
		os.Exit(exitFailed)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var c cli
	var names []string
	names = append(names, zio.ReleaseRanges())
	exit := -1
	parser, err := kong.New(&c,
		kong.Name("ddtsim"),
		kong.Description("Predict ZFS dedup and compression savings: prints the simulated DDT histogram exactly as zdb -S would."),
		kong.Vars{"releases": strings.Join(names, ", ")},
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
	)
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitFailed
	}
	safe, raw := protectArgs(args)
	kctx, err := parser.Parse(safe)
	restoreArgs(reflect.ValueOf(&c), raw)
	if exit >= 0 {
		return exit // --help
	}
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	}
	switch cmd := kctx.Command(); {
	case cmd == "scan" || strings.HasPrefix(cmd, "scan "):
		return c.Scan.run(stdout, stderr)
	case strings.HasPrefix(cmd, "parse "):
		return c.Parse.run(stdout, stderr)
	case cmd == "compare" || strings.HasPrefix(cmd, "compare "):
		return c.Compare.run(stdout, stderr)
	}
	fmt.Fprintln(stderr, "ddtsim: unknown command", kctx.Command())
	return exitUsage
}

// policy builds the write policy from the flags.
func (s *scanCmd) policy() (*zio.Policy, error) {
	rel, version, err := zio.ResolveRelease(s.Release)
	if err != nil {
		return nil, err
	}
	ashift, err := strconv.Atoi(strings.TrimSpace(s.Ashift))
	if err != nil || ashift < zio.MinAshift || ashift > zio.MaxAshift {
		return nil, fmt.Errorf("--ashift %s: invalid (accepted: %d to %d, the sector size as a power of two)", s.Ashift, zio.MinAshift, zio.MaxAshift)
	}
	s.ashift = ashift
	pool, err := zio.NewPool(s.Vdev, ashift)
	if err != nil {
		return nil, err
	}
	p := &zio.Policy{
		Release:     rel,
		Version:     version,
		RecordSize:  128 << 10,
		Compression: rel.DefaultCompression,
		Copies:      1,
		Vdev:        pool,
	}
	for _, kv := range s.Property {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("-o %s: expected NAME=VALUE", kv)
		}
		switch strings.ToLower(name) {
		case "recordsize", "recsize":
			n, err := parseSize(value)
			if err != nil || n > uint64(rel.MaxRecordSize) || n < zio.MinRecordSize || n&(n-1) != 0 {
				return nil, fmt.Errorf("-o recordsize=%s: invalid (accepted: a power of two from 512 to %s, e.g. 4K, 128K, 1M)", value, report.Nicenum(uint64(rel.MaxRecordSize), false))
			}
			p.RecordSize = uint32(n)
		case "compression", "compress":
			comp, level, err := zio.ParseCompression(value, rel)
			if err != nil {
				return nil, fmt.Errorf("-o %s", err)
			}
			p.Compression, p.Level = comp, level
		case "copies":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 || n > 3 {
				return nil, fmt.Errorf("-o copies=%s: invalid (accepted: 1, 2, 3)", value)
			}
			p.Copies = n
		case "dedup":
			switch strings.ToLower(value) {
			case "on", "verify", "sha256", "sha256,verify":
				p.Dedup = true
			case "off":
				p.Dedup = false
			default:
				return nil, fmt.Errorf("-o dedup=%s: invalid (accepted: on, off, verify, sha256, sha256,verify)", value)
			}
		default:
			return nil, fmt.Errorf("-o %s: property %q is not modelled (accepted: recordsize, compression, copies, dedup)", kv, name)
		}
	}
	return p, p.Validate()
}

// parseSize parses a ZFS size value: a whole number with an optional
// suffix K, M, G, T (also KB, KiB, ...; case-insensitive) in powers of 1024.
func parseSize(v string) (uint64, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "IB"), "B")
	mult := uint64(1)
	if s != "" {
		if i := strings.IndexByte("KMGTPE", s[len(s)-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q", v)
	}
	if n > ^uint64(0)/mult {
		return 0, fmt.Errorf("size %q too large", v)
	}
	return n * mult, nil
}

func (s *scanCmd) run(stdout, stderr io.Writer) int {
	if s.Release == "list" {
		var err error
		if s.JSON {
			err = writeReleasesJSON(stdout)
		} else {
			err = writeReleases(stdout)
		}
		if err != nil {
			fmt.Fprintln(stderr, "ddtsim: writing the release table:", err)
			return exitFailed
		}
		return exitOK
	}
	ctx, interruptCode, stop := interruptContext(context.Background())
	defer stop()
	return s.runContext(ctx, interruptCode, stdout, stderr)
}

// runContext scans until done or ctx is cancelled, prints the report and
// returns the exit status; interruptCode gives the status for a cancelled
// ctx.
func (s *scanCmd) runContext(ctx context.Context, interruptCode func() int, stdout, stderr io.Writer) int {
	pr, code := s.predict(ctx, stderr)
	if pr == nil {
		return code
	}
	var err error
	switch {
	case s.Zdb:
		_, err = io.WriteString(stdout, pr.report.Zdb)
	case s.JSON:
		err = pr.report.WriteJSON(stdout)
	default:
		err = pr.report.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim: writing the report:", err)
		return exitFailed
	}
	c := pr.res.Counters
	switch {
	case pr.interrupted:
		fmt.Fprintln(stderr, "ddtsim: interrupted: the result above is partial")
		if code := interruptCode(); code != 0 {
			return code
		}
		return exitInterrupt
	case c.Errors > 0:
		fmt.Fprintf(stderr, "ddtsim: completed with %s (see above); the result leaves out what could not be read\n", plural(c.Errors, "error"))
		return exitWithErrors
	case c.Changed > 0:
		fmt.Fprintf(stderr, "ddtsim: %s changed while read (see above); the result is approximate for them\n", plural(c.Changed, "file"))
	}
	return exitOK
}

// plural writes n and the noun, adding s unless n is 1.
func plural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// reason strips the path from an *fs.PathError-style message, which the
// caller prints already.
func reason(path string, err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}
