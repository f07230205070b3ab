package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/escape"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scanfile"
)

// Saved scans: scan --save FILE, merge FILE..., resume FILE.

// saving is what --save (and resume, which saves too) keeps during a scan.
type saving struct {
	path    string // as named (in messages)
	target  string // what is written: path, or the file its symlink names
	tracker *scanfile.Tracker
	resume  *scanfile.Scan // the saved scan being continued; nil for a new scan
}

type mergeCmd struct {
	Zdb   bool     `help:"Print only the zdb -S text, byte for byte." xor:"format"`
	JSON  bool     `name:"json" help:"Print everything as JSON (exact integers)." xor:"format"`
	RAM   string   `name:"ram" placeholder:"SIZE" help:"The memory of the machine that would hold the merged data's pool: say whether its dedup table would stay in the ARC, as for scan."`
	Files []string `arg:"" name:"file" help:"Scans saved with ddtsim --save FILE, made with the same properties (release rules, recordsize, compression, copies, dedup, vdevs, ashift, sparse, sample)."`
}

type resumeCmd struct {
	Zdb    bool   `help:"Print only the zdb -S text, byte for byte." xor:"format"`
	JSON   bool   `name:"json" help:"Print everything as JSON (exact integers)." xor:"format"`
	Jobs   int    `short:"j" default:"0" help:"Worker goroutines (0: one per CPU)."`
	Mem    string `name:"mem" placeholder:"SIZE" help:"Bound the dedup table's memory, as for scan (the saved table is read into memory first)."`
	TmpDir string `name:"tmpdir" placeholder:"DIR" help:"Where --mem writes its runs, as for scan."`
	File   string `arg:"" name:"file" help:"A scan saved with ddtsim --save FILE. It is rescanned with its own flags and paths, skipping what it did, and updated."`
}

// testDoneHook, when set by a test, runs after each Done a saving scan
// records (to interrupt a scan at a chosen point).
var testDoneHook func()

// startSave prepares --save before the scan: the file must be writable
// now, not only after hours of scanning; it must not lie inside the paths
// scanned (a resumed scan, or a later one with the same flags, would
// count it); and an existing file is replaced only if it is a saved scan
// (or empty). A symlink is written through: its target is replaced, the
// link stays.
func (s *scanCmd) startSave(stderr io.Writer) int {
	if s.Save == "" {
		return exitOK
	}
	name := escape.Path(s.Save)
	if err := checkOutside("--save", s.Save, false, s.Paths, s.OneFileSystem); err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	}
	target, err := linkTarget(s.Save)
	if err == nil {
		err = checkReplaceable(target)
		var ne *notSavedScanError
		if errors.As(err, &ne) {
			fmt.Fprintf(stderr, "ddtsim: --save %s: %v\n", name, err)
			return exitUsage
		}
	}
	if err == nil {
		err = scanfile.CheckWritable(target)
	}
	if err != nil {
		// A path that cannot be written is a bad value, as for --html.
		fmt.Fprintf(stderr, "ddtsim: --save %s: cannot write there: %s\n", name, reason(target, err))
		return exitUsage
	}
	if s.save == nil {
		s.save = &saving{}
	}
	s.save.path, s.save.target = s.Save, target
	var files []scanfile.File
	if s.save.resume != nil {
		files = s.save.resume.Files
	}
	s.save.tracker = scanfile.NewTracker(files)
	return exitOK
}

// notSavedScanError refuses to replace a file that is not a saved scan.
type notSavedScanError struct{ why string }

func (e *notSavedScanError) Error() string {
	return e.why + ": refusing to overwrite it (remove it first, or save elsewhere)"
}

// checkReplaceable accepts a --save target that does not exist, is empty
// or holds a saved scan (its first bytes are scanfile.Magic), and refuses
// any other file with a *notSavedScanError.
func checkReplaceable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case !fi.Mode().IsRegular():
		return &notSavedScanError{"it exists and is not a regular file"}
	case fi.Size() == 0:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(scanfile.Magic))
	if n, _ := io.ReadFull(f, head); string(head[:n]) != scanfile.Magic {
		return &notSavedScanError{"it exists and is not a ddtsim saved scan"}
	}
	return nil
}

// withSave adds what saving needs to the scan's options: the progress of
// each file, and for resume the saved scan to continue.
func (s *scanCmd) withSave(o analyzer.Options) analyzer.Options {
	sv := s.save
	if sv == nil || sv.tracker == nil {
		return o
	}
	o.Done = sv.tracker.Done
	if testDoneHook != nil {
		o.Done = func(f analyzer.FileInfo, first, end uint64) {
			sv.tracker.Done(f, first, end)
			testDoneHook()
		}
	}
	if r := sv.resume; r != nil {
		o.Resume = &analyzer.Resume{Table: r.Table, Counters: r.Counters, Done: sv.tracker.Skip}
	}
	return o
}

// finishSave completes the report of a resumed scan with what the saved
// part knew, and writes the save file. It returns false when saving
// failed (said on stderr).
func (s *scanCmd) finishSave(pr *prediction, stderr io.Writer) bool {
	sv := s.save
	if sv == nil || sv.tracker == nil {
		return true
	}
	if r := sv.resume; r != nil {
		// Files that changed while the saved part read them stay
		// counted (Counters.Changed); errors are the resumed scan's own.
		var kept []report.Problem
		for _, p := range r.Problems {
			if p.Kind == "changed" {
				kept = append(kept, report.Problem(p))
			}
		}
		if kept != nil {
			pr.report.Problems = append(kept, pr.report.Problems...)
		}
		if !pr.interrupted {
			for _, f := range sv.tracker.Missed() {
				why := fmt.Sprintf("partly scanned before the interruption, not found again: the %d of its %d records scanned before are kept in the result",
					f.DoneRecords(), f.Records)
				fmt.Fprintf(stderr, "ddtsim: %s: %s\n", escape.Path(string(f.Path)), why)
				pr.report.Problems = append(pr.report.Problems, report.Problem{Path: escape.Path(string(f.Path)), Kind: "error", Reason: why})
				pr.res.Counters.Errors++
				pr.report.Counters.Errors++
			}
		}
	}
	hdr := scanfile.Header{
		Ddtsim:   ddtsimVersion(),
		Created:  time.Now().UTC().Truncate(time.Second),
		Model:    scanfile.ModelOf(pr.policy, s.Vdev, s.ashift, pr.sparse, s.sample, s.zvol),
		Options:  scanfile.Options{Follow: s.Follow, CountLinks: s.CountLinks, OneFileSystem: s.OneFileSystem},
		Paths:    scanfile.Paths(s.Paths),
		Complete: !pr.interrupted,
		Problems: []scanfile.Problem{},
		Files:    sv.tracker.Files(),
	}
	hdr.Host, _ = os.Hostname()
	if wd, err := os.Getwd(); err == nil {
		hdr.Dir = scanfile.Path(wd)
	}
	if r := sv.resume; r != nil {
		hdr.Host, hdr.Dir = r.Host, r.Dir
	}
	for _, p := range pr.report.Problems {
		hdr.Problems = append(hdr.Problems, scanfile.Problem(p))
	}
	err := scanfile.Write(sv.target, &scanfile.Scan{Header: hdr, Table: pr.res.Table, Counters: pr.res.Counters})
	name := escape.Path(sv.path)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "ddtsim: saving the scan in %s: %v\n", name, err)
		return false
	case pr.interrupted:
		fmt.Fprintf(stderr, "ddtsim: the partial scan is saved in %s: ddtsim resume %s continues it\n", name, name)
	}
	return true
}

// ddtsimVersion names this build: module version and VCS revision.
func ddtsimVersion() string {
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

// run merges the saved scans and prints the report. Exit status: 0
// merged; 1 a file could not be read (missing, not a saved scan, of
// another version, truncated, corrupt); 2 the scans have different
// properties (listed); 3 merged, but some paths could not be read when the
// scans were made.
func (m *mergeCmd) run(stdout, stderr io.Writer) int {
	ramFlag := scanCmd{RAM: m.RAM}
	if err := ramFlag.parseRAM(); err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	}
	for i, a := range m.Files {
		for _, b := range m.Files[:i] {
			fa, ea := os.Stat(a)
			fb, eb := os.Stat(b)
			if ea == nil && eb == nil && os.SameFile(fa, fb) {
				fmt.Fprintf(stderr, "ddtsim: %s and %s are the same saved scan: merging it with itself would count its files twice\n",
					escape.Path(b), escape.Path(a))
				return exitUsage
			}
		}
	}
	mg, err := scanfile.Merge(m.Files)
	var me *scanfile.ModelError
	switch {
	case errors.As(err, &me):
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	case err != nil:
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitFailed
	}
	for _, n := range mg.Notes {
		fmt.Fprintln(stderr, "ddtsim: note:", n)
	}
	code := printSaved(&mg.Scan, m.Zdb, m.JSON, ramFlag.ram, stdout, stderr)
	if len(mg.Partial) > 0 && code != exitFailed {
		fmt.Fprintf(stderr, "ddtsim: the result is partial: interrupted scans: %s (ddtsim resume FILE completes one)\n",
			strings.Join(mg.Partial, ", "))
	}
	return code
}

// printSaved prints the report of a saved (or merged) scan in the format
// asked for (ram > 0, bytes: with the ARC verdict) and returns the exit status: 0, 3 when paths could not be
// read, 1 when printing failed. The report is assembled as for a scan
// with the saved flags (newReport).
func printSaved(sc *scanfile.Scan, zdb, json bool, ram uint64, stdout, stderr io.Writer) int {
	s := scanFromSaved(&sc.Header)
	p, err := s.policy()
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitFailed
	}
	sparse, _ := analyzer.ParseSparse(sc.Model.Sparse)
	res := sc.Result()
	var problems []report.Problem
	for _, pb := range sc.Problems {
		problems = append(problems, report.Problem(pb))
	}
	rep, err := newReport(reportInput{policy: p, ashift: s.ashift, sparse: sparse, paths: s.Paths, res: res,
		sample: sc.Model.Sample, zvol: s.zvol, ram: ram, partial: !sc.Complete, problems: problems})
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitFailed
	}
	switch {
	case zdb:
		_, err = io.WriteString(stdout, rep.Zdb)
		if note := rep.EstimateNote(); note != "" {
			fmt.Fprintln(stderr, "ddtsim: note:", note)
		}
	case json:
		err = rep.WriteJSON(stdout)
	default:
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim: writing the report:", err)
		return exitFailed
	}
	if res.Counters.Errors > 0 {
		return exitWithErrors
	}
	return exitOK
}

func (r *resumeCmd) run(stdout, stderr io.Writer) int {
	ctx, interruptCode, stop := interruptContext(context.Background())
	defer stop()
	return r.runContext(ctx, interruptCode, stdout, stderr)
}

// runContext continues the saved scan until done or ctx is cancelled,
// saves it again, prints the report and returns the exit status (that of
// a scan; 1 when the file cannot be read, 2 when it cannot be resumed
// here).
func (r *resumeCmd) runContext(ctx context.Context, interruptCode func() int, stdout, stderr io.Writer) int {
	if r.Jobs < 0 || r.Jobs > analyzer.MaxJobs {
		fmt.Fprintf(stderr, "ddtsim: --jobs %d: invalid (accepted: 0 for one per CPU, or 1 to %d)\n", r.Jobs, analyzer.MaxJobs)
		return exitUsage
	}
	saved, err := scanfile.Read(r.File, scanfile.DecodeOptions{})
	if err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitFailed
	}
	name := escape.Path(r.File)
	if saved.Complete {
		fmt.Fprintf(stderr, "ddtsim: %s: the scan is complete; nothing to resume\n", name)
		return printSaved(saved, r.Zdb, r.JSON, 0, stdout, stderr)
	}
	if v := ddtsimVersion(); saved.Ddtsim != v {
		fmt.Fprintf(stderr, "ddtsim: note: %s was saved by %s; this is %s\n", name, saved.Ddtsim, v)
	}
	if host, _ := os.Hostname(); saved.Host != "" && host != saved.Host {
		fmt.Fprintf(stderr, "ddtsim: note: %s was scanned on host %s, this is %s: its paths must name the same files here\n", name, saved.Host, host)
	}
	wd, _ := os.Getwd()
	for _, p := range saved.Paths {
		if !filepath.IsAbs(string(p)) && filepath.Clean(wd) != filepath.Clean(string(saved.Dir)) {
			fmt.Fprintf(stderr, "ddtsim: %s names relative paths (%s) from the directory %s: run ddtsim resume there\n",
				name, escape.Path(string(p)), escape.Path(string(saved.Dir)))
			return exitUsage
		}
	}
	s := scanFromSaved(&saved.Header)
	s.Zdb, s.JSON, s.Jobs, s.Mem, s.TmpDir = r.Zdb, r.JSON, r.Jobs, r.Mem, r.TmpDir
	s.Save = r.File
	s.save = &saving{resume: saved}
	// The flags must rebuild the saved model exactly.
	p, err := s.policy()
	if err != nil {
		fmt.Fprintf(stderr, "ddtsim: %s: its flags are not valid for this ddtsim: %v\n", name, err)
		return exitUsage
	}
	sample, err := parseSample(s.Sample)
	if err != nil {
		fmt.Fprintf(stderr, "ddtsim: %s: %v\n", name, err)
		return exitUsage
	}
	sparse, _ := analyzer.ParseSparse(s.Sparse)
	if m := scanfile.ModelOf(p, s.Vdev, s.ashift, sparse, sample, s.zvol); !m.Equal(saved.Model) {
		fmt.Fprintf(stderr, "ddtsim: %s: this ddtsim rebuilds its model differently (%s)\n", name, strings.Join(saved.Model.Diff(m), "; "))
		return exitUsage
	}
	return s.runContext(ctx, interruptCode, stdout, stderr)
}

// scanFromSaved returns the scan command a saved scan was made with.
func scanFromSaved(h *scanfile.Header) *scanCmd {
	m := h.Model
	dedup := "off"
	if m.Dedup {
		dedup = "on"
	}
	s := &scanCmd{
		Property: []string{
			"recordsize=" + strconv.FormatUint(uint64(m.RecordSize), 10),
			"compression=" + m.Compression,
			"copies=" + strconv.Itoa(m.Copies),
			"dedup=" + dedup,
		},
		Vdev:          m.Vdevs,
		Ashift:        strconv.Itoa(m.Ashift),
		Release:       m.Release,
		Sparse:        m.Sparse,
		Follow:        h.Options.Follow,
		CountLinks:    h.Options.CountLinks,
		OneFileSystem: h.Options.OneFileSystem,
		Paths:         scanfile.Strings(h.Paths),
	}
	if m.Sample > 1 {
		s.Sample = fmt.Sprintf("1/%d", m.Sample)
	}
	if m.Zvol() {
		s.Property[0] = "volblocksize=" + strconv.FormatUint(uint64(m.VolBlockSize), 10)
	}
	return s
}
