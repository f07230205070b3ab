package scan

import (
	"errors"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan/outpath"
	"github.com/ddtsim/ddtsim/text/escape"
)

// Saver is the directory a scan is saved in (Options.Save, the command
// line's --save DIR, and the saved scan ddtsim resume continues).
// OpenSaver checks it once, before the scan; Run then writes the
// checkpoints to it while the scan runs, and the scan when it ends,
// complete or interrupted (partial, for ddtsim resume). A Saver serves
// one Run. It holds the saved scan's lock (saved.TakeLock) from OpenSaver
// to Close, so that no other process saves there meanwhile.
type Saver struct {
	name   string // as named (in messages)
	target string // what is written: name, or the file its symlinks lead to
	lock   *saved.Lock

	// During Run: what the scan has done of each file, and the
	// checkpoints (nil without).
	tracker *saved.Tracker
	ck      *checkpointer
}

// OpenSaver checks name as the directory to save a scan of paths in,
// before the scan rather than after hours of it, and returns its Saver.
// It refuses (*OptionError, Option "--save") a directory that lies inside
// one of the paths (a later scan, or the resumed one, would count it; with
// oneFS, one on another file system than the path is not reached and is
// accepted), one that holds a path scanned (saving would replace it), an
// existing file or directory that is not a saved scan (or empty: see
// saved.CheckReplaceable), and one that cannot be written now
// (saved.CheckWritable). A symlink is written through: its target is
// replaced, the link stays. It then locks the target (saved.TakeLock): a
// directory another process is saving a scan in is refused with a
// *saved.LockedError naming that process. Close releases the lock.
func OpenSaver(name string, paths []string, oneFS bool) (*Saver, error) {
	if err := CheckOutside("--save", name, false, paths, oneFS); err != nil {
		return nil, err
	}
	bad := func(reason string) error {
		return &OptionError{Option: "--save", Value: escape.Path(name), Reason: reason}
	}
	// The other way round too: a path scanned inside DIR would be
	// replaced with it.
	if dir, err := outpath.Resolve(name); err == nil {
		for _, p := range paths {
			if r, err := outpath.Resolve(p); err == nil && outpath.Within(r, dir) {
				return nil, bad("the path scanned " + escape.Path(p) + " lies inside it, and saving replaces it: save elsewhere")
			}
		}
	}
	target, err := outpath.LinkTarget(name)
	if err == nil {
		err = saved.CheckReplaceable(target)
		if ne := (*saved.NotSavedScanError)(nil); errors.As(err, &ne) {
			return nil, bad(err.Error())
		}
	}
	if err == nil {
		err = saved.CheckWritable(target)
	}
	if err != nil {
		return nil, bad("cannot write there: " + Reason(target, err))
	}
	lock, err := saved.TakeLock(target)
	if le := (*saved.LockedError)(nil); errors.As(err, &le) {
		le.Path = name
		return nil, le
	}
	if err != nil {
		return nil, bad("cannot lock it: " + Reason(target, err))
	}
	return &Saver{name: name, target: target, lock: lock}, nil
}

// Close releases the lock OpenSaver took; the Saver saves nothing more.
// A nil Saver is closed already.
func (sv *Saver) Close() error {
	if sv == nil {
		return nil
	}
	return sv.lock.Unlock()
}

// Name is the directory as it was named to OpenSaver, for messages.
func (sv *Saver) Name() string { return sv.name }

// Target is the directory written: Name, or where its symlinks lead.
func (sv *Saver) Target() string { return sv.target }

// start prepares the saving of a run of res (ao's hooks): it tracks what
// the scan does of each file, from what the resumed scan (opts.Resume)
// did, whose records are not read again, and every opts.Checkpoint it
// saves the scan so far.
func (sv *Saver) start(res *Result, opts *Options, ao *analyzer.Options) {
	var files []saved.File
	var pos *saved.Position
	version := saved.Version
	r := opts.Resume
	if r != nil {
		files, pos, version = r.Files, r.Position, r.Version
	}
	sv.tracker = saved.NewTracker(files, pos, version)
	ao.Done, ao.Started, ao.Finished = sv.tracker.Done, sv.tracker.Started, sv.tracker.Finished
	if every := opts.Checkpoint; every >= 0 {
		if every == 0 {
			every = DefaultCheckpoint
		}
		sv.ck = &checkpointer{res: res, opts: opts, tracker: sv.tracker}
		ao.CheckpointEvery, ao.Checkpoint = every, sv.ck.take
	}
	if r != nil {
		ao.Resume = &analyzer.Resume{Table: r.Table, Counters: r.Counters, Done: sv.tracker.Skip, Tally: sv.tracker.Tally}
		if opts.Shard.Sharded() {
			ao.Resume.Saved = savedRuns(r.Files)
		}
	}
}

// wait waits for the checkpoint being written, if any.
func (sv *Saver) wait() {
	if sv != nil {
		sv.ck.wait()
	}
}

// finish saves the scan as it ended, complete or interrupted (partial:
// ddtsim resume continues it), in opts.Save (Target), its table copied
// into the memory of the last checkpoint's copy when it fits. The error
// is a *SaveError.
func (sv *Saver) finish(res *Result, opts *Options) error {
	var reuse *saved.Snapshot
	if sv.ck != nil {
		reuse, sv.ck.written = sv.ck.written, nil
	}
	return res.save(*opts, sv.tracker, reuse)
}
