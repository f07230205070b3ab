package scan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/scan/outpath"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// OptionError is an option of a scan whose value cannot be used, or that
// cannot go with another: nothing was scanned. Option is named as the
// command line's flag that sets it; the message is "OPTION VALUE:
// REASON" ("--jobs 300: invalid (accepted: ...)", "--top 3: needs --by:
// ..."), or "OPTION: REASON" without a value.
type OptionError struct {
	Option string // the flag: "--jobs"
	Value  string // its value as given (a path escaped: escape.Path); "" for none
	Reason string // what is wrong and, for a bad value, what is accepted
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return e.Option + ": " + e.Reason
	}
	return e.Option + " " + e.Value + ": " + e.Reason
}

// CheckJobs refuses a number of workers (Options.Jobs, -j) out of range
// with an *OptionError.
func CheckJobs(n int) error {
	if n < 0 || n > analyzer.MaxJobs {
		return &OptionError{Option: "--jobs", Value: fmt.Sprint(n), Reason: fmt.Sprintf("invalid (accepted: 0 for one per CPU, or 1 to %d)", analyzer.MaxJobs)}
	}
	return nil
}

// Validate checks the options for a scan of paths with set, as Run does
// before it scans anything; the error is an *OptionError. It refuses
// Jobs out of range, a Shard out of range or with By, By of an unknown
// kind or with a sample, Read with a sample or By, or other than the
// plan of the scan resumed, Top below 0 or without By, TmpDir without Mem or
// inside the paths (the scan would read its own spill runs; with
// OneFileSystem, one on another file system is accepted). Save is checked
// by OpenSaver.
func (o *Options) Validate(set model.Settings, paths []string) error {
	if err := CheckJobs(o.Jobs); err != nil {
		return err
	}
	if err := o.Shard.Check(); err != nil {
		return &OptionError{Option: "--shard", Value: o.Shard.String(), Reason: err.Error()}
	}
	if o.Shard.Sharded() && o.By != "" {
		return &OptionError{Option: "--shard", Value: o.Shard.String(),
			Reason: "not with --by: a shard's breakdown covers only its share, and saved scans keep no breakdown, so merge could not add the shards' up"}
	}
	if o.By != "" {
		switch {
		case !slices.Contains(breakdown.Kinds, strings.ToLower(o.By)):
			return &OptionError{Option: "--by", Value: o.By, Reason: "invalid (accepted: " + strings.Join(breakdown.Kinds, ", ") + ")"}
		case set.SampleRate() > 1:
			return &OptionError{Option: "--by", Value: o.By, Reason: "not with --sample yet: a breakdown needs every block"}
		}
	}
	if o.Read.Active() {
		v := fmt.Sprintf("%g%%", 100*o.Read.Fraction)
		switch {
		case set.SampleRate() > 1:
			return &OptionError{Option: "--read", Value: v, Reason: "not with --sample yet: the estimator needs every content of the records read"}
		case o.By != "":
			return &OptionError{Option: "--read", Value: v, Reason: "not with --by yet: a breakdown needs every block"}
		}
	}
	if r := o.Resume; r != nil && o.Read.Active() && (r.Read == nil || *r.Read != o.Read) {
		saved := "every record"
		if r.Read != nil {
			saved = r.Read.String()
		}
		return &OptionError{Option: "--read", Value: o.Read.String(),
			Reason: "the saved scan read " + saved + ": a resumed scan goes on with its own plan"}
	}
	switch {
	case o.Top < 0:
		return &OptionError{Option: "--top", Value: fmt.Sprint(o.Top), Reason: "invalid (accepted: a number of groups, 1 or more; 0 lists them all)"}
	case o.Top > 0 && o.By == "":
		return &OptionError{Option: "--top", Value: fmt.Sprint(o.Top), Reason: "needs --by: it keeps the largest groups of the breakdown"}
	}
	if o.TmpDir != "" {
		if o.Mem <= 0 {
			return &OptionError{Option: "--tmpdir", Value: escape.Path(o.TmpDir), Reason: "needs --mem SIZE: it is where --mem spills the table"}
		}
		// Spill runs among the files scanned would be read as data: an
		// explicit TmpDir among the paths is refused; the default one
		// ($TMPDIR, e.g. /tmp under a scanned /) is used and left out of
		// the walk.
		if err := CheckOutside("--tmpdir", o.TmpDir, true, paths, o.OneFileSystem); err != nil {
			return err
		}
	}
	return nil
}

// CheckOutside refuses (*OptionError) an output of a scan named by option
// ("--save", "--html", "--tmpdir") that lies inside one of the paths
// scanned, comparing resolved paths (symlinks in the output's name or in
// the paths named do not hide it): the scan would read its own output, or
// overwrite what it reads. isDir says the output is a directory
// (--tmpdir). With oneFS (-x), an output on another file system than the
// path is not reached by the scan and is accepted.
func CheckOutside(option, name string, isDir bool, paths []string, oneFS bool) error {
	out, inside, err := outpath.Inside(name, isDir, paths, oneFS)
	switch {
	case err != nil:
		return &OptionError{Option: option, Value: escape.Path(name), Reason: Reason(name, err)}
	case inside == "":
		return nil
	}
	what := "write it elsewhere"
	switch {
	case isDir:
		what = "the scan would read its own spill runs; choose a directory elsewhere"
	case option == "--save":
		what = "save it elsewhere"
	}
	value := escape.Path(name)
	if abs, err := filepath.Abs(name); err != nil || abs != out {
		value += " (" + escape.Path(out) + ")" // through a symlink
	}
	return &OptionError{Option: option, Value: value, Reason: "lies inside " + escape.Path(inside) + ", which is scanned: " + what}
}
