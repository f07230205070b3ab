package scan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Options configure Run. The zero value scans with one worker per CPU,
// keeps the table in memory, saves nothing and reports problems only in
// the Result.
type Options struct {
	// Jobs is the number of reader/hash/compress workers; ≤ 0 means one
	// per CPU (GOMAXPROCS), at most analyzer.MaxJobs. Fewer run at large
	// recordsizes (analyzer.Workers).
	Jobs int
	// Progress, when set, is updated while the scan runs (files and bytes
	// found, bytes done).
	Progress *analyzer.Progress
	// Warn, when set, receives every per-path problem as it happens (it
	// is also in Result.Problems, but for those a shard leaves to another
	// to count: see Shard), from several goroutines at once.
	Warn func(source.Problem)
	// Follow, CountLinks and OneFileSystem choose which files are
	// scanned (analyzer.Options).
	Follow, CountLinks, OneFileSystem bool
	// KeepCache leaves what the scan reads in the page cache; by default
	// the pages its reading brought in are dropped once read, those
	// cached before kept (source.Walker.KeepCache).
	KeepCache bool
	// Stages, when set, sums the time the scan spends in each stage of its
	// work (analyzer.Stages).
	Stages *analyzer.Stages
	// By breaks the figures down by group: "dir", "ext" or "size"
	// (breakdown.Kinds, case-insensitive); "" for none. Not with a
	// sample. The report lists the groups largest first by logical bytes
	// (report.ArrangeBreakdown).
	By string
	// Top > 0, with By: the report lists the Top largest groups and
	// folds the others into one row of their sums; 0 lists them all.
	Top int
	// Mem > 0 bounds the table's memory, bytes: beyond it the table
	// spills sorted runs to a directory of its own that Run creates in
	// TmpDir ($TMPDIR, else /tmp, when empty), that the walk skips and
	// that Result.Close removes. SpillWarn receives a failure to spill
	// (the table then stays in memory).
	Mem       int64
	TmpDir    string
	SpillWarn func(error)
	// Save names the directory the scan is saved in when it ends or is
	// interrupted (and at its checkpoints), for `ddtsim merge` and
	// `ddtsim resume`; "" saves nothing. It is replaced atomically (a
	// symlink is written through). Run opens it with OpenSaver, which
	// refuses, before scanning, a directory inside the paths, one that
	// is not a saved scan (or empty) and one that cannot be written.
	Save string
	// Saver, when set, is the directory to save in already opened
	// (OpenSaver: a command opens it first to refuse a bad one before
	// anything else); Run uses it, and not Save.
	Saver *Saver
	// Resume continues this saved, interrupted scan: its table and
	// counters are added to, the records it did are not read again. The
	// settings and paths passed to Run must be its own.
	Resume *saved.Scan
	// Done, when set, runs after each run of records of a file is
	// accounted (to show progress, or in tests to stop at a chosen
	// point).
	Done func(f analyzer.FileInfo, first, end uint64)
	// OnBlock, when set, receives every record the scan accounts
	// (analyzer.Options.OnBlock: one event a record, from several
	// goroutines at once; with By, a run of alike records may come as
	// one event of Count records). The golden tests hold each record to
	// real zdb -ddddd's listing of the block.
	OnBlock func(analyzer.BlockEvent)
	// Shard, when sharded (Count > 1), scans only this run's share of the
	// files: one of Count runs, each given the same paths, settings and
	// options (Follow, CountLinks, OneFileSystem), whose saved scans
	// (Save; the share is kept in the header) merged (saved.Merge)
	// are the scan of the whole, the same table and counters (see
	// analyzer.Options.Shard for who counts what). A problem a shard
	// meets but another counts (a directory that cannot be listed: shard
	// 0) goes to Warn, with "(shard i/N counts it)", and not to
	// Result.Problems. Not with By: a breakdown is not saved, so the
	// shards' could not be added up. A resumed scan (Resume) must have
	// been made with the same Shard.
	Shard source.Shard
	// Checkpoint, with Save, is how often the scan is saved while it
	// runs, so that a scan killed (kill -9, an OOM kill, a power cut)
	// loses at most that much work: `ddtsim resume` continues from the
	// last checkpoint. 0 means DefaultCheckpoint; a negative value saves
	// only at the end (and when interrupted).
	Checkpoint time.Duration
	// Checkpointed, when set, receives each checkpoint's report (its
	// pause, its writing time, its error), from another goroutine. A
	// checkpoint that fails (a full disk) does not stop the scan: the
	// previous one stays.
	Checkpointed func(CheckpointReport)
	// Faults, for tests only, are the walk's test seams (source.Faults,
	// analyzer.Options.Faults); nil outside tests.
	Faults *source.Faults
	// Read, when active (estimate.Plan.Active), reads only a random
	// fraction of the records holding data (analyzer.Options.Read): the
	// report's figures are estimates with 95% ranges (report.ReadEstimate).
	// Not with a sample or By. The plan is saved (Save), a resumed scan
	// goes on with the saved plan (Read left zero, or equal to it), and
	// the shards of a scan each read their share with it: merged, they
	// are the sample of one scan with the plan, and give its estimate.
	Read estimate.Plan
	// SaveWriter, for tests only, writes Save and its checkpoints through
	// its test seams (saved.Writer); nil outside tests (saved.Write).
	SaveWriter *saved.Writer
}

// DefaultCheckpoint is the interval of Options.Checkpoint when 0.
const DefaultCheckpoint = 5 * time.Minute

// Result is a finished (or interrupted) scan: the table, its counters and
// what is needed to report it.
type Result struct {
	Settings model.Settings
	Policy   *zio.Policy // Settings.Policy()
	Paths    []string    // the paths named, as given
	// Analysis holds the table, the histogram and the counters.
	Analysis *analyzer.Analysis
	// Problems are the paths that could not be read, or changed while
	// read, in the order met.
	Problems []source.Problem
	// Partial is set when the scan was interrupted (or a merged scan
	// holds an interrupted one).
	Partial bool
	// Breakdown is the per-group breakdown (Options.By); nil without.
	Breakdown *breakdown.Result
	// Missed are the files a resumed scan had partly done that the walk
	// did not find again (errors, also in Problems): what was done of
	// them stays in the result.
	Missed []source.Problem

	mu       sync.Mutex // Problems, while the scan runs
	spillDir string     // Options.Mem's runs, removed by Close
	// walkKnown: Scan.WalkDone says how far the walk got (a scan run
	// here, not one read from a file).
	walkKnown bool
	top       int // Options.Top
	// shard is the share scanned (Options.Shard, or the saved scan's);
	// interrupted, the saved scans merged that were; missing, what
	// saved.Merged.Missing says of shards not merged: why the report is
	// partial.
	shard       source.Shard
	interrupted []string
	missing     []string
	read        estimate.Plan         // Options.Read
	sample      *ddt.SampleEstimate   // a merged sample's estimate (no table)
	readSample  *estimate.Tally       // a merged --read scan's sample (no table)
	readGroups  *estimate.GroupSample // a merged --read scan's group sample (no table), with a group plan
}

// SaveError is the failure to write Options.Save: the scan itself
// finished and its Result is returned with it.
type SaveError struct {
	Path string // as written: Options.Save, or the Saver's Target
	Err  error
}

func (e *SaveError) Error() string {
	return fmt.Sprintf("saving the scan in %s: %v", escape.Path(e.Path), e.Err)
}

// Unwrap returns the cause.
func (e *SaveError) Unwrap() error { return e.Err }

// SpillDirError is the failure to create the spill directory (Options.Mem)
// in Parent: nothing was scanned.
type SpillDirError struct {
	Parent string
	Err    error // the cause, without the path
}

func (e *SpillDirError) Error() string {
	return fmt.Sprintf("%s: cannot create the spill directory there: %v", e.Parent, e.Err)
}

// spillDirs holds the spill directories in use, for RemoveSpillDirs.
var spillDirs sync.Map

// RemoveSpillDirs removes the spill directories of every scan not closed
// yet, for a process about to end at once (a second interrupt).
func RemoveSpillDirs() {
	spillDirs.Range(func(k, _ any) bool {
		os.RemoveAll(k.(string))
		return true
	})
}

// makeSpillDir creates a spill directory in parent ($TMPDIR when "").
func makeSpillDir(parent string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "ddtsim-spill-")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", &SpillDirError{Parent: parent, Err: err}
	}
	spillDirs.Store(dir, true)
	return dir, nil
}

// removeSpillDir removes a spill directory and the runs in it.
func removeSpillDir(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
		spillDirs.Delete(dir)
	}
}

// UsageError is a setting or option that cannot be used: nothing was
// scanned. For an option, Err is an *OptionError.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UsageError) Unwrap() error { return e.Err }

// Run scans paths (files, block devices and directories, recursively) with
// set and returns the result. Per-path problems do not stop it: they are
// in Result.Problems (and sent to opts.Warn). Errors: a *UsageError for
// settings or options that cannot be used (nothing scanned);
// context.Canceled (or ctx's error) with the partial result when ctx is
// cancelled; a *SaveError with the complete result when Options.Save (or
// Saver) could not be written; any other error when the scan could not
// run.
func Run(ctx context.Context, set model.Settings, paths []string, opts Options) (*Result, error) {
	if len(paths) == 0 {
		return nil, &UsageError{errors.New("no paths to scan")}
	}
	if err := source.CheckNamed(paths); err != nil {
		return nil, &UsageError{err}
	}
	p, err := set.Policy()
	if err != nil {
		return nil, &UsageError{err}
	}
	if err := opts.Validate(set, paths); err != nil {
		return nil, &UsageError{err}
	}
	if r := opts.Resume; r != nil && r.Read != nil {
		opts.Read = *r.Read // the same records chosen: same seed, paths, indices
	}
	if r := opts.Resume; r != nil && shardOf(r.Shard) != shardOf(savedShard(opts.Shard)) {
		return nil, &UsageError{fmt.Errorf("the saved scan is %s, this scan %s: resume it with its own shard",
			describeShard(shardOf(r.Shard)), describeShard(opts.Shard))}
	}
	acc, err := accumulator(opts.By, paths)
	if err != nil {
		return nil, &UsageError{err}
	}
	sv := opts.Saver
	if sv == nil && opts.Save != "" {
		// Now, not after hours of scanning; and never over a file that
		// is not a saved scan.
		if sv, err = OpenSaver(opts.Save, paths, opts.OneFileSystem); err != nil {
			if le := (*saved.LockedError)(nil); errors.As(err, &le) {
				return nil, err // not a usage error: another run is saving there
			}
			return nil, &UsageError{err}
		}
		defer sv.Close()
	}
	if sv != nil {
		opts.Save = sv.target // what is written, the checkpoints too
	}
	res := &Result{Settings: set, Policy: p, Paths: paths, top: opts.Top, read: opts.Read}
	if r := opts.Resume; r != nil {
		// The files that changed while the saved part read them stay
		// counted; the other problems the walk meets again.
		for _, p := range r.Problems {
			if p.Kind == "changed" {
				res.Problems = append(res.Problems, p)
			}
		}
	}
	if opts.Mem > 0 {
		if res.spillDir, err = makeSpillDir(opts.TmpDir); err != nil {
			return nil, err
		}
	}
	ao := analyzer.Options{
		Policy:        p,
		Sparse:        set.Sparse,
		Jobs:          opts.Jobs,
		Progress:      opts.Progress,
		Follow:        opts.Follow,
		CountLinks:    opts.CountLinks,
		OneFileSystem: opts.OneFileSystem,
		KeepCache:     opts.KeepCache,
		Stages:        opts.Stages,
		Sample:        set.SampleRate(),
		Zvol:          set.Zvol,
		Guest:         set.Guest,
		Mem:           opts.Mem,
		SpillDir:      res.spillDir,
		SpillWarn:     opts.SpillWarn,
		Shard:         opts.Shard,
		Read:          opts.Read,
		Faults:        opts.Faults,
		Warn: func(path string, err error) {
			if ce := (*source.CountedElsewhereError)(nil); errors.As(err, &ce) {
				// Said here, kept and counted by another shard.
				if opts.Warn != nil {
					pb := problemOf(path, ce.Err)
					pb.Reason += fmt.Sprintf(" (shard %s counts it)", ce.By)
					opts.Warn(pb)
				}
				return
			}
			pb := problemOf(path, err)
			if sv != nil && !errors.Is(err, source.ErrChanged) {
				sv.tracker.Unread(path)
			}
			res.mu.Lock()
			res.Problems = append(res.Problems, pb)
			res.mu.Unlock()
			if opts.Warn != nil {
				opts.Warn(pb)
			}
		},
	}
	if res.spillDir != "" {
		ao.SkipDirs = []string{res.spillDir}
	}
	if acc != nil {
		ao.OnFile, ao.OnBlock, ao.BlockRuns = acc.File, acc.Block, true
	}
	if on := opts.OnBlock; on != nil {
		if next := ao.OnBlock; next != nil {
			ao.OnBlock = func(e analyzer.BlockEvent) { next(e); on(e) }
		} else {
			ao.OnBlock = on
		}
	}
	if sv != nil {
		sv.start(res, &opts, &ao)
	}
	if opts.Done != nil {
		inner := ao.Done
		ao.Done = func(f analyzer.FileInfo, first, end uint64) {
			if inner != nil {
				inner(f, first, end)
			}
			opts.Done(f, first, end)
		}
	}
	res.Analysis, err = analyzer.Run(ctx, paths, ao)
	sv.wait()
	res.walkKnown = true
	res.shard = opts.Shard
	if err != nil {
		if ctx.Err() == nil || !errors.Is(err, ctx.Err()) || res.Analysis == nil {
			res.Close()
			return nil, err
		}
		res.Partial = true
	}
	if acc != nil {
		res.Breakdown = acc.Result(res.Analysis.Table)
	}
	if sv != nil {
		if r := opts.Resume; r != nil {
			res.resumed(sv.tracker)
		}
		if serr := sv.finish(res, &opts); serr != nil {
			return res, serr
		}
	}
	return res, err
}

// savedRuns gives what a saved scan did of each of its files
// (analyzer.Resume.Saved).
func savedRuns(files []saved.File) func(path string) ([]analyzer.Span, uint64, uint64, bool) {
	byPath := make(map[string]*saved.File, len(files))
	for i := range files {
		byPath[string(files[i].Path)] = &files[i]
	}
	return func(path string) ([]analyzer.Span, uint64, uint64, bool) {
		f := byPath[path]
		if f == nil {
			return nil, 0, 0, false
		}
		runs := make([]analyzer.Span, len(f.Done))
		for i, d := range f.Done {
			runs[i] = analyzer.Span{First: d[0], End: d[1]}
		}
		return runs, f.Ino, f.Records, true
	}
}

// accumulator prepares the breakdown: nil without one (Validate has
// checked the kind, and that there is no sample: a breakdown of a sample
// would not add up to the estimated totals).
func accumulator(by string, paths []string) (*breakdown.Accumulator, error) {
	if by == "" {
		return nil, nil
	}
	return breakdown.NewAccumulator(strings.ToLower(by), paths)
}

// problemOf describes a per-path warning of the analyzer.
func problemOf(path string, err error) source.Problem {
	kind := "error"
	if errors.Is(err, source.ErrChanged) {
		kind = "changed"
	}
	return source.NewProblem(path, kind, Reason(path, err))
}

// Reason is the message of a per-path error without the path, which the
// caller prints already (an *os.PathError naming path gives "op: error";
// an image reader's error starting "path: " loses that prefix), made
// safe to print as paths are (escape.Path): a message may quote names
// read from inside a file, such as a disk image's backing file.
func Reason(path string, err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return escape.Path(pe.Op + ": " + pe.Err.Error())
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, path+": "); ok && rest != "" {
		msg = rest
	}
	return escape.Path(msg)
}

// resumed completes a resumed scan's problems with what the saved part
// knew: a file it had partly done that the walk did not find again is an
// error.
func (res *Result) resumed(tracker *saved.Tracker) {
	if res.Partial || tracker == nil {
		return
	}
	for _, f := range tracker.Missed() {
		pb := source.NewProblem(string(f.Path), "error",
			fmt.Sprintf("partly scanned before the interruption, not found again: the %d of its %d records scanned before are kept in the result",
				f.DoneRecords(), f.Records))
		res.Problems = append(res.Problems, pb)
		res.Analysis.Counters.Errors++
		res.Missed = append(res.Missed, pb)
	}
}

// save writes the scan to opts.Save, copying its table into the memory of
// reuse (the last checkpoint's copy; nil: none) when it fits.
func (res *Result) save(opts Options, tracker *saved.Tracker, reuse *saved.Snapshot) error {
	hdr := res.header(&opts, tracker, nil, res.Analysis.Pending, !res.Partial)
	sc := &saved.Scan{Header: hdr, Table: res.Analysis.Table, Counters: res.Analysis.Counters}
	var err error
	if reuse != nil {
		var snap *saved.Snapshot
		var ok bool
		if snap, ok, err = saved.TakeSnapshot(sc.Table, reuse); err == nil && ok {
			err = opts.SaveWriter.WriteSnapshot(opts.Save, sc, snap)
		} else if err == nil {
			err = opts.SaveWriter.Write(opts.Save, sc)
		}
	} else {
		err = opts.SaveWriter.Write(opts.Save, sc)
	}
	if err != nil {
		return &SaveError{Path: opts.Save, Err: err}
	}
	return nil
}

// header is the saved scan's header: its settings, paths, problems so far
// and the tracker's progress, with the records inFlight and the tallies
// pending (a checkpoint's; pending: those of the files an interrupted
// scan left unfinished).
func (res *Result) header(opts *Options, tracker *saved.Tracker, inFlight []analyzer.Accounted, pending []analyzer.Pending, complete bool) saved.Header {
	pos, files := tracker.Progress(inFlight, pending)
	res.mu.Lock()
	problems := append([]source.Problem{}, res.Problems...)
	res.mu.Unlock()
	hdr := saved.Header{
		Ddtsim:   Version(),
		Created:  time.Now().UTC().Truncate(time.Second),
		Model:    res.Settings.Model(res.Policy),
		Options:  saved.Options{Follow: opts.Follow, CountLinks: opts.CountLinks, OneFileSystem: opts.OneFileSystem},
		Paths:    saved.Paths(res.Paths),
		Complete: complete,
		Problems: problems,
		Position: pos,
		Files:    files,
		Shard:    savedShard(opts.Shard),
	}
	if res.read.Active() {
		plan := res.read
		hdr.Read = &plan
	}
	hdr.Host, _ = os.Hostname()
	if wd, err := os.Getwd(); err == nil {
		hdr.Dir = saved.Path(wd)
	}
	if r := opts.Resume; r != nil {
		hdr.Host, hdr.Dir = r.Host, r.Dir
	}
	return hdr
}

// savedShard is the header's record of shard sh: nil when not sharded.
func savedShard(sh source.Shard) *source.Shard {
	if !sh.Sharded() {
		return nil
	}
	return &sh
}

// describeShard names a share in messages.
func describeShard(sh source.Shard) string {
	if !sh.Sharded() {
		return "not sharded"
	}
	return "shard " + sh.String()
}

// shardOf is the share a header records (nil: everything).
func shardOf(sh *source.Shard) source.Shard {
	if sh == nil || !sh.Sharded() {
		return source.Shard{}
	}
	return *sh
}

// Resumable checks that this ddtsim can continue the interrupted saved
// scan sc here and returns the settings to continue it with (Run, with
// Options.Resume): its relative paths must be relative to the working
// directory, and its model must rebuild exactly. name is how messages
// call the file. The errors are *UsageError.
func Resumable(sc *saved.Scan, name string) (model.Settings, error) {
	wd, _ := os.Getwd()
	for _, p := range sc.Paths {
		if !filepath.IsAbs(string(p)) && filepath.Clean(wd) != filepath.Clean(string(sc.Dir)) {
			return model.Settings{}, &UsageError{fmt.Errorf("%s names relative paths (%s) from the directory %s: run ddtsim resume there",
				name, escape.Path(string(p)), escape.Path(string(sc.Dir)))}
		}
	}
	set, p, err := rebuild(sc.Model)
	if err != nil {
		return set, &UsageError{fmt.Errorf("%s: its flags are not valid for this ddtsim: %v", name, err)}
	}
	if m := set.Model(p); !m.Equal(sc.Model) {
		return set, &UsageError{fmt.Errorf("%s: this ddtsim rebuilds its model differently (%s)", name, strings.Join(sc.Model.Diff(m), "; "))}
	}
	return set, nil
}

// rebuild turns a saved model back into the settings and the policy
// they give.
func rebuild(m model.Model) (model.Settings, *zio.Policy, error) {
	set, err := m.Settings()
	if err != nil {
		return set, nil, err
	}
	p, err := set.Policy()
	return set, p, err
}

// FromSaved returns the result a saved (or merged) scan holds, as Run
// returned it, for Report. It fails when this ddtsim cannot rebuild the
// scan's model.
func FromSaved(sc *saved.Scan) (*Result, error) {
	set, p, err := rebuild(sc.Model)
	if err != nil {
		return nil, err
	}
	return &Result{Settings: set, Policy: p, Paths: saved.Strings(sc.Paths), Analysis: sc.Result(), Partial: !sc.Complete,
		Problems: sc.Problems, shard: shardOf(sc.Shard), read: planOf(sc.Read)}, nil
}

// FromMerged returns the result of merged saved scans, as Run returned
// it, for Report (it has no table: Result.Scan.Table is nil). It fails
// when this ddtsim cannot rebuild the scans' model.
func FromMerged(m *saved.Merged) (*Result, error) {
	set, p, err := rebuild(m.Model)
	if err != nil {
		return nil, err
	}
	res := &Result{Settings: set, Policy: p, Paths: saved.Strings(m.Paths), Analysis: m.Result(), Partial: !m.Complete,
		Problems: m.Problems, sample: m.Sample, interrupted: m.Partial, missing: m.Missing, read: planOf(m.Read)}
	if res.read.Active() {
		res.readSample = m.ReadSample
		if res.readSample == nil {
			res.readSample = estimate.NewTally() // nothing stored was read
		}
		res.readGroups = m.ReadGroups
		if res.read.Groups && res.readGroups == nil {
			res.readGroups = estimate.NewGroupSample(nil)
		}
	}
	return res, nil
}

// planOf is the read plan a saved header records: the zero Plan (every
// record read) for none.
func planOf(p *estimate.Plan) estimate.Plan {
	if p == nil {
		return estimate.Plan{}
	}
	return *p
}

// Close releases what the result keeps on disk (the table's spilled runs
// and their directory); the table is not usable after it. The run files
// are closed first: a scan that failed for want of file descriptors could
// not even open the directory to remove it otherwise.
func (res *Result) Close() {
	if res == nil {
		return
	}
	if res.Analysis != nil && res.Analysis.Table != nil {
		res.Analysis.Table.Close()
	}
	if res.Analysis != nil && res.Analysis.Groups != nil {
		res.Analysis.Groups.Close()
	}
	if res.readGroups != nil {
		res.readGroups.Close()
	}
	removeSpillDir(res.spillDir)
}

// Report assembles the report of the result as every command shows it:
// the histogram and zdb -S text, the summary, the sample's estimate with
// its intervals, the volume mode, the DDT size (with the ARC verdict for
// ram > 0, the machine's memory in bytes), the breakdown.
func (res *Result) Report(ram uint64) (*report.Report, error) {
	set, p := res.Settings, res.Policy
	rep, err := report.New(p, set.AshiftValue(), set.Sparse, res.Paths, res.Analysis)
	if err != nil {
		return nil, err
	}
	rep.Guest = set.Guest
	for _, why := range res.partialWhy() {
		rep.MarkPartial(why)
	}
	if res.Partial && res.walkKnown {
		done := res.Analysis.WalkDone
		rep.WalkFinished = &done
	}
	rep.Problems = append(rep.Problems, res.Problems...)
	if n := set.SampleRate(); n > 1 {
		est := res.sample
		if est == nil {
			est = ddt.EstimateTable(res.Analysis.Table, n)
		}
		c := res.Analysis.Counters
		est.CheckCounted(c.Records - c.Holes)
		if err := rep.ApplySample(est, p.Release.BytesSuffix); err != nil {
			return nil, err
		}
	}
	// A plan that left no record unread (a fraction just below 1, or a
	// few records) read them all: the figures are exact, the full
	// scan's (found by a new user: --read 99.9999999% printed ranges).
	if c := res.Analysis.Counters; res.read.Active() && c.Unread > 0 {
		pop := c.Population
		in := estimate.Input{Fraction: res.read.Fraction, Records: pop, Read: pop - c.Unread,
			LSize: c.DataLSize, MaxLSize: c.MaxLSize, ReadLSize: c.ReadLSize, ReadLSizeSq: c.ReadLSizeSq,
			MaxDSize: p.DSize(c.MaxLSize), DataMaxDSize: c.DataMaxDSize, LeastRatio: p.LeastRatio(c.MaxLSize), Tally: res.readSample,
			Entries: func(f func(ddt.Entry) bool) {
				res.Analysis.Table.Range(func(_ ddt.Key, e ddt.Entry) bool { return f(e) })
			}}
		if res.read.Groups {
			// The table's keys are (content, group): the sample is
			// gathered by content and by group (estimate.GroupSample).
			gs := res.readGroups
			if gs == nil {
				gs = res.Analysis.Groups
			}
			if gs == nil {
				gs = estimate.NewGroupSample(nil)
			}
			var err error
			if in.Tally, in.Groups, err = gs.Inputs(c.MaxGroupRecords()); err != nil {
				return nil, fmt.Errorf("the --read sample: %w", err)
			}
			// The groups of the data, at most: one a record of a file
			// of one record, one a record index of each size of the
			// files of more (some of them holes only: an upper bound,
			// the safe side of the bounds' finite-population factor).
			in.Groups.Groups = c.OneRecordPopulation
			for size := range c.SizeFiles {
				_, n := zio.FileRecords(size, p.RecordSize)
				if set.Zvol {
					_, n = zio.ZvolRecords(size, p.RecordSize)
				}
				in.Groups.Groups += n
			}
		}
		est := estimate.Compute(in)
		est.Seed, est.Groups = res.read.Seed, res.read.Groups
		if err := rep.ApplyRead(est, p.Release.BytesSuffix); err != nil {
			return nil, err
		}
	}
	if set.Zvol {
		rep.SetVolume(p.RecordSize)
	}
	rep.EstimateDDT(p, ram)
	rep.EstimateSpace(p)
	rep.FinishRead(p, ram)
	if set.Dedup != "" {
		rep.Properties["dedup"] = set.Dedup // as given: verify, sha256,verify, ...
	}
	rep.Breakdown = report.ArrangeBreakdown(res.Breakdown, res.top)
	return rep, nil
}

// partialWhy says why the result covers part of the data only, one
// sentence each (Report.PartialWhy); nil when it covers it all.
func (res *Result) partialWhy() []string {
	var why []string
	switch {
	case len(res.interrupted) > 0:
		why = append(why, fmt.Sprintf("%s interrupted: the figures cover only what they had read; ddtsim resume DIR completes one",
			english.Count(uint64(len(res.interrupted)), "saved scan")+" merged "+map[bool]string{true: "was", false: "were"}[len(res.interrupted) == 1]))
	case res.Partial && res.walkKnown:
		why = append(why, "the scan was interrupted: the figures cover only what was read")
	case res.Partial:
		why = append(why, "the saved scan was interrupted: the figures cover only what it had read; ddtsim resume DIR completes it")
	}
	if sh := res.shard; sh.Sharded() {
		why = append(why, fmt.Sprintf("shard %s: the figures cover this shard's share of the files only; ddtsim merge of the %d saved shards gives the report of the whole tree", sh, sh.Count))
	}
	return append(why, res.missing...)
}

// Version names this build of ddtsim: module version, VCS revision and Go
// version ("ddtsim (devel) 8b098a0c1f2e go1.26.8"); saved scans record it.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "ddtsim (unknown version)"
	}
	v := "ddtsim " + bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + modified
	}
	return v + " " + bi.GoVersion
}
