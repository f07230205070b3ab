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
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/cmd/ddtsim/internal/rawargs"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

type cli struct {
	Scan    scanCmd    `cmd:"" default:"withargs" help:"Scan files and print the simulated dedup table (the default command)."`
	Parse   parseCmd   `cmd:"" help:"Read what zdb -S, zdb -D/-DD/-DDD or zpool status -D printed (any release) and summarize it."`
	Compare compareCmd `cmd:"" help:"Predict for the files and compare with what zdb -S printed for their pool (--zdb-output FILE, or --pool POOL to run zdb -S)."`
	Merge   mergeCmd   `cmd:"" help:"Add up scans saved with --save (e.g. on several hosts) and print one report. The scans must have the same properties. Exit status: 0 merged; 1 a scan could not be read; 2 scans that do not add up (different properties, read plans or shard counts, or one scan twice); 3 some paths could not be read when scanned; 4 incomplete: shards missing or interrupted scans merged (the report says PARTIAL)."`
	Resume  resumeCmd  `cmd:"" help:"Continue a scan saved with --save that was interrupted: scan what it had not done, with its flags, update DIR and print the report."`
	Report  reportCmd  `cmd:"" help:"Print the report of saved scans from the dedup histogram an SQL engine computed over their Parquet tables (ddtsim sql prints the query). Exit statuses as merge's (4: shards missing or interrupted scans)."`
	SQL     sqlCmd     `cmd:"" name:"sql" help:"Print the SQL query (ANSI) that computes the dedup histogram of saved scans over their Parquet tables, on any engine: it reads a view ddtsim_entries of their rows."`
	Sweep   sweepCmd   `cmd:"" help:"Read the files once and predict every combination of -o recordsize=LIST and -o compression=LIST: one row each (ratios, allocated DSIZE, DDT entries and RAM), best first."`

	// About ddtsim itself (meta.go).
	Help        helpCmd       `cmd:"" help:"Print the help of a command (ddtsim help scan), as COMMAND --help does."`
	Version     versionCmd    `cmd:"" help:"Print the version, the commit, the Go version, the zstd compiled in (exact libzstd, or approximate without cgo) and the OpenZFS release modelled by default."`
	Completion  completionCmd `cmd:"" help:"Print a shell completion script (bash, zsh or fish), made from the flags."`
	Man         manCmd        `cmd:"" help:"Print the man page (roff; read it with: ddtsim man | man -l -)."`
	VersionFlag versionFlag   `name:"version" help:"Print the version, commit, Go version, zstd implementation and default OpenZFS release, and exit."`
}

// PoolFlags are the flags of the pool and release a scan or sweep models.
type PoolFlags struct {
	Vdev    []string `name:"vdev" sep:"none" placeholder:"LAYOUT" help:"A top-level vdev, as zpool create names it with a disk count instead of devices: disk, stripe N (N disks), mirror N, raidz N, raidz1 N, raidz2 N, raidz3 N, draid[P][:Dd][:Cc][:Ss] [N] (e.g. draid2:4d:1s:11c, or draid2 8 = 8 children, D = min(8, N-P-S)). Repeat for several top-level vdevs. Default: one disk. When top-level vdevs differ in shape, DSIZE and the raw capacity assume every block (every copy) lands on the first one; PSIZE rounding uses them all."`
	Ashift  string   `default:"12" help:"Pool sector size as a power of two (9..16), for every vdev."`
	Release string   `default:"latest" help:"OpenZFS release modelled: a version such as 2.1.11, 2.2 or 0.6.5.11 (${releases}; default: the newest). 'list' prints the releases and what differs."`
	Sparse  string   `default:"auto" enum:"auto,always,never" help:"How the files would be copied, as cp --sparse=WHEN: all-zero records become holes (always), are written (never), or holes only for files that look sparse (auto). Matters only with compression=off."`
	Guest   bool     `name:"guest" help:"Read virtual-disk images (qcow2 v2/v3, VMDK, VHDX, VHD; recognized by content, not by name) as the disk their guest sees, as qemu-img convert -O raw or qm importdisk would write it to a volume or file: backing files and parents followed, compressed clusters expanded, unallocated ranges holes (never read). Other files are read as they are. With --sparse auto, images (raw files too) are copied as qemu-img convert copies them (zeros skipped: holes); --sparse never models dd of the guest's disk (zeros written, stored with compression=off)."`
}

type scanCmd struct {
	PoolFlags     `embed:""`
	Property      []string `short:"o" name:"property" sep:"none" placeholder:"NAME=VALUE" help:"Dataset property, as zfs create -o takes it: recordsize (512..16M, default 128K), compression (on, off, lz4, lzjb, zle, gzip[-1..9], zstd[-1..19], zstd-fast[-N]; default: the release's), copies (1..3), dedup (off; or on, verify, sha256, sha512, skein, blake3, the last four also with ,verify, and edonr,verify: every value but off is dedup on, and the report shows it as given; ddtsim keys blocks by their content, so the checksum named does not change the figures). Repeatable."`
	Volblocksize  string   `name:"volblocksize" placeholder:"SIZE" help:"Store each file (or block device) as a volume, as zfs create -V -o volblocksize=SIZE would: every block exactly SIZE bytes, the last one zero-padded (a power of two from 512 to 128K, up to 16M from 2.2 (1M from 0.6.5) with large_blocks). Same as -o volblocksize=SIZE."`
	Zvol          bool     `name:"zvol" help:"Store each file as a sparse volume (zfs create -s -V: no refreservation) with the volblocksize zfs create -V would choose: 8K up to 2.1, 16K from 2.2, raised on raidz and dRAID to their allocation width (2.1+)."`
	RAM           string   `name:"ram" placeholder:"SIZE" help:"The machine's memory, at least 64M (e.g. 64G): say whether the dedup table would stay in the ARC under the release's defaults (zfs_arc_max, metadata limit), and show the DDT size block in the summary."`
	OutputFlags   `embed:"" set:"bytes_help=In the text summary (and the HTML page's), give the exact byte count beside every size; JSON and CSV always hold exact bytes."`
	CSV           bool   `name:"csv" help:"Print CSV (exact integers): the histogram, an empty line, the summary (field,value), and with --by an empty line and the breakdown (one row per group, then (total))." xor:"format"`
	By            string `name:"by" placeholder:"dir|ext|size|file" help:"Break the figures down by group, after the summary (and in --json, --csv, --html; not with --zdb, whose text zdb -S prints without one; case-insensitive): dir = each path named, or with one directory named each of its subdirectories (the files directly in it form one row); ext = lower-cased file name extension, (none) without; size = file size class (empty, <=4K, <=128K, <=1M, <=16M, <=1G, >1G); file = each file its own row (with --guest, each image: which VMs share data; for a few files, not millions). Per group: files, logical bytes, holes, all-zero blocks, embedded blocks, size without dedup (its own blocks, exact), size with dedup, only here (blocks no other group has) and shared (blocks other groups have too). With dedup, a block referenced by several groups is split between them by their share of its references, rounded by largest remainder so that the groups add up exactly to the totals. Needs about 50 bytes of memory per unique block on top of the table, and 16 more for each further group the block appears in. Not with --sample."`
	Top           int    `name:"top" placeholder:"N" help:"With --by: list the N largest groups (by logical bytes) and fold the others into one row, (M others), of their sums; 0 (the default) lists them all."`
	HTML          string `name:"html" placeholder:"FILE" help:"Also write the report as one self-contained HTML page to FILE (histogram chart, zdb -S text, summary, breakdown; no network, no script). The usual report still goes to standard output; with FILE - the page goes to standard output instead of it (not with --zdb, --json or --csv, which would write there too). FILE must not lie inside the paths scanned, and is checked to be writable before the scan; an existing FILE is replaced only if it is a ddtsim HTML report (or empty)."`
	WorkFlags     `embed:"" set:"mem_help=Bound the dedup table's memory (at least 1M, e.g. 4G; it takes about 32 bytes per unique block): beyond SIZE it is written to disk as sorted runs and merged at the end, with the same result. A block seen again after its entry went to disk is compressed again. With --read by groups, the groups read beyond it go to disk too. If writing fails (disk full), the table stays in memory and a warning says so." set:"tmpdir_help=Where --mem writes its runs, in a directory of its own that is removed at the end (default: $TMPDIR, else /tmp). Not inside the paths scanned."`
	Sample        string        `placeholder:"1/N" help:"Keep only 1/N of the block contents, chosen by hash (every copy of a kept content is kept): about 1/N of the memory and compression work. The table becomes an estimate, printed with 95% confidence intervals."`
	Read          string        `name:"read" placeholder:"P%" help:"Read only P% of the records that hold data (e.g. 5%), chosen at random in groups (one record index of the files of one size: copies are read whole; --read-by) (holes are known without reading; the metadata is walked in full), and print every figure as an ESTIMATE with its 95% range: dedup and compression ratios, DDT entries, on-disk sizes, zfs list USED, zpool list ALLOC, DDT RAM, and a verdict that says when the range straddles the rule. Unlike --sample, which reads everything and keeps 1/N of the contents, --read reads about P% of the bytes. With --save the plan is saved: ddtsim resume goes on with it, and the --shard i/N runs of one tree each read their share with it, ddtsim merge adding up their samples (scans of other fractions or seeds, or full scans, are not merged with them). Not with --sample or --by yet."`
	ReadSeed      *uint64       `name:"read-seed" placeholder:"N" help:"With --read: the seed of the random choice of records (default 1); the same seed over the same files, named alike (a file of one record is chosen by its path), reads the same records."`
	ReadBy        string        `name:"read-by" placeholder:"WHAT" help:"With --read: what is chosen at random: groups (the default: one record index of the files of one size, read together or not at all, so that the dedup estimate sees copies whole) or single records (no group kept; a group plan keeps about 100 bytes per group of more than one record read, on disk past --mem, and its dedup estimate is much closer)."`
	Follow        bool          `help:"Follow symlinks found inside directories (directory loops and directories seen before are skipped; a symlink that cannot be resolved, such as one naming itself, is an error). Symlinks named as paths are always followed."`
	CountLinks    bool          `help:"Count every name of a hard-linked file as a separate copy (default: once, as cp -a stores it)."`
	OneFileSystem bool          `name:"one-file-system" short:"x" help:"Do not descend into directories on other file systems."`
	Cache         bool          `name:"cache" negatable:"" help:"--cache leaves what the scan reads in the page cache, as cat would. By default (--no-cache) the pages the scan itself brings into the cache are dropped once read (posix_fadvise DONTNEED, every few MiB of a large file), so that a long scan does not push the host's working set out of memory; pages that were cached before the scan read them stay. Files whose caching the kernel does not tell (run as a user who could not write them; root can) are left as they are."`
	Stages        bool          `name:"stages" help:"After the scan, print on stderr where its time went: the workers' seconds reading, hashing, compressing, in the table, finishing files and idle, and the walk's, of which waiting for the workers. Says which stage limits a scan (costs a few percent)."`
	Save          string        `name:"save" placeholder:"DIR" help:"Save the scan in the directory DIR (the table as Parquet files, and a manifest: the properties, the paths and how far each file got), at the end or when interrupted: ddtsim merge adds saved scans up, ddtsim resume continues an interrupted one, SQL engines read the table. DIR must not lie inside the paths scanned; an existing DIR is replaced only if it is a saved scan (or empty); a symlink is written through to its target."`
	Checkpoint    time.Duration `name:"checkpoint" default:"5m" placeholder:"DURATION" help:"With --save: save the scan every DURATION while it runs (atomically: DIR holds the previous checkpoint or the new one, never a mix), so that after kill -9, an OOM kill or a power cut ddtsim resume DIR loses at most DURATION of work. 0 saves only at the end and when interrupted."`
	Shard         string        `name:"shard" placeholder:"i/N" help:"Scan only share i (from 0) of N (N at most 65536): one of N runs over one tree (the pods of a Kubernetes Indexed Job, a Slurm array, on hosts sharing an NFS export), each given the same paths and flags but its own i and its own --save DIR; ddtsim merge of the N saved scans prints the scan of the whole tree (its zdb -S text byte for byte; zfs list's metadata about one indirect block higher for each further shard holding a piece of a file split between shards). Every run walks the whole tree and reads only the files whose identity (file system, inode: the names of a hard-linked file stay together) falls in its share; files over 1 GiB are split into 1 GiB chunks of records, shared out one by one. Directories, symlinks and the walk's other counters are counted by shard 0. Needs --save; not with --by."`
	Paths         []string      `arg:"" optional:"" name:"path" help:"Files and directories to scan (directories recursively; symlinks inside them are not followed). A path named like a command (${commands}) needs ./ before it (or ddtsim scan before it: scan takes no command)."`

	preset *model.Settings // resume: the saved scan's settings, instead of the flags'
	ram    uint64          // parsed RAM, bytes; 0 without --ram
	saver  *scan.Saver     // --save, or resume's: see saved.go
	resume *saved.Scan     // resume: the saved scan continued
	env    *env            // the process's (env.go); nil: main's
}

// stdoutClosed is set when ddtsim started with its standard output
// closed (see main).
var stdoutClosed bool

func main() { runMain(nil) }

// runMain is main in e (nil: the process's own; the tests' child
// processes give theirs): it runs ddtsim with the process's arguments and
// streams, and exits.
func runMain(e *env) {
	// The interrupt signals are caught first: one that comes while the
	// flags are parsed and the scan set up then interrupts the scan as
	// soon as it starts (a partial report, exit 130). Found by a new
	// user: Ctrl-C in the first 30 to 80 ms killed ddtsim silently.
	catchEarly()
	if e != nil && e.caught != nil {
		e.caught()
	}
	// The heap is mostly large arrays without pointers (the table's
	// entries, a checkpoint's copy, the breakdown's references), which
	// the collector does not scan: collecting at half the default growth
	// costs little. Measured on 300,000 small files with --save --by dir:
	// peak RSS 50.6 MiB instead of 66.2, CPU 1.02x (medians of 3, side by
	// side). GOGC, when set, still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	fitVMLimit() // under ulimit -v (vmlimit_linux.go)
	// With stdout closed, the Go runtime opens /dev/null read-write in its
	// place (runtime: checkfds) and the report would vanish unnoticed;
	// a shell's >/dev/null opens it write-only.
	stdoutClosed = stdoutIsRuntimeNull()
	code := run(e, os.Args[1:], os.Stdout, os.Stderr)
	exiting.Lock() // not while a second signal ends the process (signals.go)
	os.Exit(code)
}

// cliVars are the variables the flags' help refers to: ${releases} (the
// OpenZFS releases modelled) and ${commands} (the command names).
func cliVars() kong.Vars {
	return kong.Vars{"releases": zio.ReleaseRanges(), "commands": strings.Join(commandNames, ", ")}
}

// streams are where a command writes: the report, and messages.
type streams struct{ stdout, stderr io.Writer }

// run runs ddtsim with args (without the program name) in e (nil: the
// process's own; see env) and returns the exit status.
func run(e *env, args []string, stdout, stderr io.Writer) int {
	var c cli
	c.Scan.env, c.Compare.Scan.env, c.Resume.env, c.Sweep.env, c.Parse.env = e, e, e, e, e
	exit := -1
	parser, err := kong.New(&c,
		kong.Name("ddtsim"),
		kong.Description("Predict ZFS dedup and compression savings: prints the simulated DDT histogram exactly as zdb -S would."),
		cliVars(),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
	)
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitFailed
	}
	safe, raw := rawargs.Protect(negativeJobs(args))
	kctx, err := parser.Parse(safe)
	raw.Restore(&c)
	if exit >= 0 {
		return exit // --help
	}
	if err != nil {
		return exitCode(usage(commandNameHint(err, args)), stderr)
	}
	if cmd := kctx.Command(); !strings.HasPrefix(cmd, "compare") && !strings.HasPrefix(cmd, "parse") {
		if err := emptyValues(kctx); err != nil {
			return exitCode(usage(err), stderr)
		}
	}
	var bytesErr error
	switch cmd := kctx.Command(); {
	case strings.HasPrefix(cmd, "scan"):
		bytesErr = c.Scan.OutputFlags.bytesIgnored(c.Scan.CSV, c.Scan.HTML != "")
	case strings.HasPrefix(cmd, "merge"):
		bytesErr = c.Merge.OutputFlags.bytesIgnored(false, false)
	case strings.HasPrefix(cmd, "resume"):
		bytesErr = c.Resume.OutputFlags.bytesIgnored(false, false)
	case strings.HasPrefix(cmd, "report"):
		bytesErr = c.Report.OutputFlags.bytesIgnored(c.Report.CSV, false)
	}
	if bytesErr != nil {
		return exitCode(bytesErr, stderr)
	}
	if stdoutClosed {
		cmd := kctx.Command()
		if !strings.HasPrefix(cmd, "resume") && (!strings.HasPrefix(cmd, "scan") || c.Scan.Save == "" && (c.Scan.HTML == "" || c.Scan.HTML == "-")) {
			return exitCode(statusError{exitFailed, "standard output is closed; nowhere to print the report"}, stderr)
		}
		fmt.Fprintln(stderr, "ddtsim: note: standard output is closed: the report is not printed, only saved")
	}
	if cmd := kctx.Command(); !strings.HasPrefix(cmd, "scan") && !strings.HasPrefix(cmd, "resume") && !strings.HasPrefix(cmd, "sweep") {
		releaseEarly() // the others take the signals' default action
	}
	err = kctx.Run(&streams{stdout, stderr})
	return exitCode(err, stderr)
}

// commandNames are ddtsim's commands: a path of the same name must be
// written ./NAME.
var commandNames = []string{"scan", "parse", "compare", "merge", "resume", "report", "sql", "sweep", "help", "version", "completion", "man"}

// commandNameHint adds to a flag error the likely cause when an argument
// is both a command name and an existing path ("ddtsim -o recordsize=4K
// sweep" with a directory named sweep). Not for the first argument: that
// one was typed as the command (found by a new user: "ddtsim sweep --csv
// DIR", run where a directory sweep exists, was told to write ./sweep).
func commandNameHint(err error, args []string) error {
	for i, a := range args {
		if i == 0 {
			continue
		}
		if _, statErr := os.Stat(a); statErr == nil && slices.Contains(commandNames, a) {
			return fmt.Errorf("%w (%s is read as the command %s; to scan the path %s, write ./%s)", err, a, a, a, a)
		}
	}
	return err
}

// emptyValues refuses a flag given an empty value (--save "", --by=):
// kong takes it, and it would mean the same as not giving the flag.
func emptyValues(kctx *kong.Context) error {
	for _, p := range kctx.Path {
		f := p.Flag
		if f == nil || f.Target.Kind() != reflect.String || f.Target.String() != "" {
			continue
		}
		e := &scan.OptionError{Option: "--" + f.Name, Value: `""`, Reason: "needs a value"}
		switch f.Name {
		case "by":
			e.Reason = "invalid (accepted: " + strings.Join(breakdown.Kinds, ", ") + ")"
		case "save", "html":
			e.Reason = "needs a file name"
		case "tmpdir":
			e.Reason = "needs a directory"
		}
		return e
	}
	return nil
}

// settings parses the flags that decide the model (once; resume sets
// them from the saved scan instead), and --ram.
func (s *scanCmd) settings() (model.Settings, error) {
	if s.preset != nil {
		return *s.preset, nil
	}
	set, err := model.Parse(model.Text{Release: s.Release, Properties: s.Property, Vdevs: s.Vdev, Ashift: s.Ashift,
		Sparse: s.Sparse, VolBlockSize: s.Volblocksize, Zvol: s.Zvol, Sample: s.Sample, Guest: s.Guest})
	if err != nil {
		return set, err
	}
	if s.ram, err = parseRAM(s.RAM); err != nil {
		return set, err
	}
	return set, nil
}

// shard parses --shard (no sharding without it) and refuses what it
// cannot go with.
func (s *scanCmd) shard() (source.Shard, error) {
	if s.Shard == "" {
		return source.Shard{}, nil
	}
	sh, err := source.ParseShard(s.Shard)
	switch {
	case err != nil:
		return sh, &scan.OptionError{Option: "--shard", Value: s.Shard, Reason: strings.TrimPrefix(err.Error(), s.Shard+": ")}
	case s.Save == "":
		return sh, &scan.OptionError{Option: "--shard", Value: s.Shard, Reason: "needs --save DIR: a shard's scan is only its share of the files; ddtsim merge adds the saved shards up to the whole"}
	}
	return sh, nil // with --by: refused by scan.Run
}

// parseRAM parses --ram: bytes, 0 without it.
func parseRAM(v string) (uint64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := model.ParseSize(v)
	if err != nil || n < 64<<20 {
		return 0, &scan.OptionError{Option: "--ram", Value: v, Reason: "invalid (accepted: the machine's memory, a whole number with an optional K, M, G, T, P or E suffix (powers of 1024; KiB or KB the same), at least 64M, e.g. 16G, 512G)"}
	}
	return n, nil
}

func (s *scanCmd) Run(std *streams) error {
	stdout, stderr := std.stdout, std.stderr
	if s.Release == "list" {
		if err := s.releaseListFlags(); err != nil {
			return usage(err)
		}
		write := report.WriteReleases
		if s.JSON {
			write = report.WriteReleasesJSON
		}
		if err := write(stdout); err != nil {
			return fmt.Errorf("writing the release table: %w", err)
		}
		return nil
	}
	if s.RAM != "" && s.Zdb {
		return usagef("--ram has no place in --zdb output (zdb -S prints no DDT size); use the text, --json, --csv or --html")
	}
	if s.By != "" && s.Zdb {
		return usagef("--by has no place in --zdb output (zdb -S prints none); use the text, --json, --csv or --html")
	}
	ctx, interruptCode, stop := interruptContext(context.Background())
	defer stop()
	return s.runContext(ctx, interruptCode, stdout, stderr)
}

// releaseListFlags refuses, with --release list, what it would ignore:
// paths, and the flags of a scan's output.
func (s *scanCmd) releaseListFlags() error {
	if len(s.Paths) > 0 {
		return errors.New("--release list takes no paths: it prints the release table (name a release, e.g. --release 2.2, to scan)")
	}
	var bad []string
	for _, f := range []struct {
		set  bool
		name string
	}{{s.Zdb, "--zdb"}, {s.CSV, "--csv"}, {s.By != "", "--by"}, {s.HTML != "", "--html"}, {s.Save != "", "--save"}, {s.Shard != "", "--shard"}} {
		if f.set {
			bad = append(bad, f.name)
		}
	}
	if bad != nil {
		return fmt.Errorf("--release list prints the release table as text, or with --json as JSON: not with %s", strings.Join(bad, ", "))
	}
	return nil
}

// runContext scans until done or ctx is cancelled and prints the report;
// interruptCode gives the exit status for a cancelled ctx.
func (s *scanCmd) runContext(ctx context.Context, interruptCode func() int, stdout, stderr io.Writer) error {
	if err := s.startHTML(); err != nil {
		return err
	}
	if _, err := s.shard(); err != nil {
		return err
	}
	switch {
	case s.Checkpoint < 0:
		return &scan.OptionError{Option: "--checkpoint", Value: s.Checkpoint.String(), Reason: "invalid (accepted: a duration such as 5m or 30s; 0 saves only at the end)"}
	case s.Checkpoint != defaultCheckpoint && s.Checkpoint != 0 && s.Save == "":
		return &scan.OptionError{Option: "--checkpoint", Value: s.Checkpoint.String(), Reason: "needs --save DIR: checkpoints are saves of the scan so far"}
	}
	if err := s.startSave(); err != nil {
		return err
	}
	defer s.saver.Close() // its lock
	pr, saveErr := s.predict(ctx, stderr)
	if pr == nil {
		return saveErr
	}
	defer pr.close()
	if s.HTML == htmlStdout {
		if err := writeHTMLTo(stdout, pr.report); err != nil {
			return fmt.Errorf("writing the HTML report: %w", err)
		}
	} else if err := writeReport(pr.report, format{zdb: s.Zdb, json: s.JSON, csv: s.CSV, bytes: s.Bytes}, stdout, stderr); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if s.HTML != "" && s.HTML != htmlStdout {
		if err := writeHTML(s.HTML, pr.report); err != nil {
			return fmt.Errorf("writing the HTML report: %w", err)
		}
	}
	if saveErr != nil {
		return saveErr
	}
	if sh, _ := s.shard(); sh.Sharded() {
		fmt.Fprintf(stderr, "ddtsim: note: shard %s: the report above covers this shard's share of the files only (and the directories only in shard 0); ddtsim merge of the %d saved shards gives the report of the whole tree\n", sh, sh.Count)
	}
	c := pr.res.Analysis.Counters
	return endStatus(pr.res.Partial, c.Errors, c.Changed, interruptCode)
}

// endStatus is how a scan (or sweep) that printed its report ends:
// interrupted (130, or 128 + the signal), completed with errors (3), or
// with files that changed while read (a note, 0).
func endStatus(partial bool, errors, changed uint64, interruptCode func() int) error {
	switch {
	case partial:
		code := interruptCode()
		if code == 0 {
			code = exitInterrupt
		}
		return statusError{code, "interrupted: the result above is partial"}
	case errors > 0:
		return statusError{exitWithErrors, fmt.Sprintf("completed with %s (see above); the result leaves out what could not be read", english.Count(errors, "error"))}
	case changed > 0:
		return statusError{exitOK, fmt.Sprintf("%s changed while read (see above); the result is approximate for them", english.Count(changed, "file"))}
	}
	return nil
}

// format is the output format chosen: one of zdb, json, csv, or the text
// (with exact bytes: bytes).
type format struct{ zdb, json, csv, bytes bool }

// writeReport writes the report in the format chosen; with --zdb, the
// notes of a sample, an estimate or an approximate zstd go to stderr
// (zdb -S's text has no place for them).
func writeReport(rep *report.Report, f format, stdout, stderr io.Writer) error {
	rep.Bytes = f.bytes
	switch {
	case f.zdb:
		if _, err := io.WriteString(stdout, rep.Zdb); err != nil {
			return err
		}
		if note := rep.EstimateNote(); note != "" {
			fmt.Fprintln(stderr, "ddtsim: note:", note)
		}
		// Found by a new user: a build without cgo printed its zstd
		// table with no word of its being approximate.
		if note := rep.ApproximateNote(); note != "" {
			fmt.Fprintln(stderr, "ddtsim: note: approximate:", note)
		}
		return nil
	case f.json:
		return writeReportJSON(stdout, rep)
	case f.csv:
		return rep.WriteCSV(stdout)
	}
	return rep.WriteText(stdout)
}
