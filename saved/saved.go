package saved

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ddtsim/ddtsim/estimate"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Version is the newest format version this package writes (the
// manifest's "version"); it reads it and versions 1 to 3. Version 3 keeps
// a scan's progress as a position in the walk's order (Header.Position)
// where 2 listed every file: a ddtsim reading only version 2 would scan
// again the files behind the position, so the version changed. Version 4
// is version 3 with the plan of a scan made with --read (Header.Read): a
// ddtsim reading only version 3 would take its table of the records read
// for the whole data's. Version 5 is version 4 with a group plan
// (estimate.Plan.Groups): its table's keys are (content, group), which a
// ddtsim reading only version 4 would take for contents and resume with a
// plan of single records. Version 6 is version 5 with every record of a
// group read in the table (the records left holes under
// ddt.HoleGroupKey, the files of one record marked in their group:
// estimate.Plan.TableGroup) and no list of the groups read in the
// counters: a ddtsim reading only 5 would find no group's records.
// Version 7 is version 6 with the groups of files of more than one record
// keyed by their size's tag and record index (estimate.Plan.TableGroup,
// so that their stratum is known: estimate.Strata), and the counters'
// files of one record per LSIZE and records in holes per size: a ddtsim
// reading only 6 would take a group for another. Versions 5 and 6 were
// development builds' (December 2026), and are refused. A scan without a
// plan is written as version 3, one with a plan of single records as 4
// (WriteVersion), which older ddtsims read.
const Version = 7

// WriteVersion is the format version a scan with header h is written in:
// 7 with a group plan, 4 with a plan of single records, else 3.
func WriteVersion(h *Header) int {
	switch {
	case h.Read != nil && h.Read.Groups:
		return 7
	case h.Read != nil:
		return 4
	}
	return 3
}

// Format is the manifest's "format": what the directory is.
const Format = "ddtsim saved scan"

// ManifestName is the name of the manifest in a saved scan's directory.
const ManifestName = "_manifest.json"

// Errors a file is refused with (wrapped with details).
var (
	ErrNotScan   = errors.New("not a ddtsim saved scan")
	ErrVersion   = errors.New("unsupported saved scan version")
	ErrTruncated = errors.New("truncated")
	ErrCorrupt   = errors.New("corrupt")
)

// maxBlock bounds LSIZE and PSIZE (SPA_MAXBLOCKSIZE, 16 MiB).
const maxBlock = 16 << 20

// Scan is a saved scan: its header, table and counters.
type Scan struct {
	Header
	// Table holds the entries; its DSIZE comes from the model's policy.
	Table *ddt.Table
	// Counters as the scan counted them (the figures derived from the
	// table, UniqueBlocks, Stored, Embedded, are as saved; see Result).
	Counters analyzer.Counters
	// Version is the format version read (Version for a scan to write).
	Version int
}

// Manifest is _manifest.json: the header, the counters and the partition
// files of a saved scan (format versions 2 and 3).
type Manifest struct {
	Format  string `json:"format"`  // Format
	Version int    `json:"version"` // Version
	Header
	Counters analyzer.Counters `json:"counters"`
	// Parts describes the Partitions table files, partition p at index p.
	Parts []Part `json:"partitions"`
}

// Result returns the scan as an analyzer result: the table, its histogram,
// and the counters with the figures derived from the table recomputed (the
// table's memory is that of the table read, in this process).
func (s *Scan) Result() *analyzer.Analysis {
	var plan estimate.Plan
	if s.Read != nil {
		plan = *s.Read
	}
	// A group plan's table is keyed by (content, group): its histogram
	// and entries are by content (analyzer.Summarize).
	c := s.Counters
	var strata *estimate.Strata
	if p, err := s.Model.Policy(); plan.Groups && err == nil {
		strata = c.Strata(plan, s.Model.Records, p.DSize)
	}
	h, st, groups := analyzer.Summarize(s.Table, plan, strata, 0, "")
	setTableCounters(&c, st)
	c.TableBytes = uint64(s.Table.PeakBytes())
	c.SpillRuns = uint64(s.Table.SpillRuns())
	return &analyzer.Analysis{Table: s.Table, Histogram: h, Counters: c, Groups: groups}
}

// setTableCounters sets the counters a table's summary decides.
func setTableCounters(c *analyzer.Counters, st ddt.Summary) {
	c.UniqueBlocks = st.Entries
	c.Stored = st.Refs
	c.UniqueEmbedded = st.EmbeddedEntries
	c.Embedded = st.EmbeddedRefs
	c.EmbeddedLSize = st.EmbeddedLSize
}

// Write saves s in the directory path (format version 3, or 4 with a
// read plan: WriteVersion; a manifest and Partitions Parquet files) so that path holds either what it held before
// or all of the new scan: everything is written to a new directory beside
// path and synced, which then takes path's place (an exchange of the two
// where the system has renameat2, else two renames); the old content is
// removed last. path may hold a saved scan of either version, an empty
// directory or an empty file (CheckReplaceable). New files get mode 0644.
func Write(path string, s *Scan) error { return (*Writer)(nil).Write(path, s) }

// WriteSnapshot is Write of s with the entries of snap in place of
// s.Table's (a checkpoint: the table went on changing after the copy), and
// the counters the table decides (UniqueBlocks, Stored, Embedded) set from
// them.
func WriteSnapshot(path string, s *Scan, snap *Snapshot) error {
	return (*Writer)(nil).WriteSnapshot(path, s, snap)
}

// Writer writes saved scans as Write and WriteSnapshot do, through test
// seams that make the writing fail where a test wants it to: for tests
// only. A nil (or zero) Writer is Write's. Each write has the Writer it is
// given, so that tests that set its seams may run in parallel.
type Writer struct {
	// CreateFault, when set, runs before each file of the new saved scan
	// is created (name: its path in the directory being written: the
	// partition files, from several goroutines at once, then the
	// manifest); a non-nil error fails the creation, as a full disk
	// (ENOSPC) would.
	CreateFault func(name string) error
	// BeforeReplace, when set, runs once the new directory is written
	// and synced, just before it takes path's place; a non-nil error
	// fails the write there.
	BeforeReplace func() error
	// Budget bounds the memory the writing uses for the rows it sorts at
	// once, bytes; 0: DefaultWriteBudget. A table over it is written in
	// passes over key ranges.
	Budget int64
}

// budget is w.Budget or its default (w may be nil).
func (w *Writer) budget() int64 {
	if w == nil || w.Budget <= 0 {
		return DefaultWriteBudget
	}
	return w.Budget
}

// Write saves s in the directory path as the package's Write does,
// through w's seams (w may be nil: none).
func (w *Writer) Write(path string, s *Scan) error {
	return w.write(path, s, func(dir string) ([]Part, error) { return writeTable(dir, s.Table, w.budget(), w.createFault()) })
}

// WriteSnapshot saves s with the entries of snap as the package's
// WriteSnapshot does, through w's seams (w may be nil: none).
func (w *Writer) WriteSnapshot(path string, s *Scan, snap *Snapshot) error {
	c := *s
	setTableCounters(&c.Counters, snap.sum)
	s = &c
	return w.write(path, s, func(dir string) ([]Part, error) {
		parts, err := writeRows(dir, snap.rows, w.createFault())
		if err != nil {
			return nil, err
		}
		return parts, checkRows(parts, snap.n)
	})
}

// createFault is w.CreateFault; nil for a nil w.
func (w *Writer) createFault() func(name string) error {
	if w == nil {
		return nil
	}
	return w.CreateFault
}

// write is Write with the table files written into a directory by table.
func (w *Writer) write(path string, s *Scan, table func(dir string) ([]Part, error)) (err error) {
	tmp, parent, err := createTempDir(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && tmp != "" {
			os.RemoveAll(tmp)
		}
	}()
	parts, err := table(tmp)
	if err != nil {
		return err
	}
	m := Manifest{Format: Format, Version: WriteVersion(&s.Header), Header: s.Header, Counters: s.Counters, Parts: parts}
	b, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return err
	}
	if fault := w.createFault(); fault != nil {
		if err := fault(filepath.Join(tmp, ManifestName)); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ManifestName), append(b, '\n'), 0o644); err != nil {
		return err
	}
	names := []string{filepath.Join(tmp, ManifestName)}
	for _, part := range parts {
		names = append(names, filepath.Join(tmp, part.File))
	}
	if err := syncFiles(names); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if w != nil && w.BeforeReplace != nil {
		if err := w.BeforeReplace(); err != nil {
			return err
		}
	}
	// Checked again: something else may have taken path's place while
	// the scan ran. The new scan is then kept under a name of its own.
	if err := CheckReplaceable(path); err != nil {
		// Kept under the same name by every later write of this process
		// (checkpoints, the end), which replace it as they would path.
		kept := fmt.Sprintf("%s.ddtsim-%d", filepath.Clean(path), os.Getpid())
		if CheckReplaceable(kept) == nil && replace(tmp, kept, parent) == nil {
			tmp = ""
			return fmt.Errorf("%s: %w; the scan is saved in %s instead", escape.Path(path), err, escape.Path(kept))
		}
		return fmt.Errorf("%s: %w", escape.Path(path), err)
	}
	return replace(tmp, path, parent)
}

// syncDir makes a directory's entries durable where the file system
// allows.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	d.Sync() // not every file system syncs directories
	return d.Close()
}

// replace puts the directory tmp in path's place.
func replace(tmp, path, parent string) error {
	_, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if exchange(tmp, path) == nil {
			os.RemoveAll(tmp) // now the old content
			break
		}
		old := tmp + ".old"
		if err := os.Rename(path, old); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Rename(old, path)
			return err
		}
		os.RemoveAll(old)
	}
	return syncDir(parent)
}

// CheckWritable reports early whether Write(path) can create its
// temporary directory, so that a long scan does not fail only at its end.
func CheckWritable(path string) error {
	if b := filepath.Base(path); b == "." || b == ".." || b == "/" || strings.HasSuffix(path, "/.") || strings.HasSuffix(path, "/..") {
		return fmt.Errorf("name the directory itself (its parent and its name), not %q: it is replaced as a whole", filepath.Base(path))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if isMountPoint(path) {
			return fmt.Errorf("it is a mount point, which cannot be replaced: save into a directory below it")
		}
	}
	tmp, _, err := createTempDir(path)
	if err != nil {
		return err
	}
	return os.Remove(tmp)
}

// createTempDir creates the directory Write writes path through, in
// path's parent directory (returned too), named after path.
func createTempDir(path string) (string, string, error) {
	dir, base := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
	tmp, err := os.MkdirTemp(dir, fmt.Sprintf(".%s.%d-*.tmp", base, os.Getpid()))
	if err == nil {
		// MkdirTemp makes it 0700: an existing scan keeps its mode, a
		// new one is 0777 less the umask, as mkdir makes it.
		mode := os.FileMode(0o777) &^ umask
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			mode = st.Mode().Perm()
		}
		os.Chmod(tmp, mode)
	}
	return tmp, dir, err
}

// RemoveStale removes what killed writes of the saved scan at path left
// beside it (see removeStale); Write does it too.
func RemoveStale(path string) {
	dir, base := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base)
}

// removeStale removes what a Write of dir/base killed before its end left
// beside it: the directories .base.PID-N.tmp (and .tmp.old) of processes
// that no longer run. Those of a live process (another ddtsim saving
// there) are left alone.
func removeStale(dir, base string) {
	names, err := readNames(dir)
	if err != nil {
		return
	}
	prefix := "." + base + "."
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok || !(strings.HasSuffix(rest, ".tmp") || strings.HasSuffix(rest, ".tmp.old")) {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if gone(pid) {
			os.RemoveAll(filepath.Join(dir, n))
		}
	}
}

// ReadManifest reads the manifest of the saved scan in directory dir and
// checks it: its format, version, partitions and files.
func ReadManifest(dir string) (*Manifest, error) {
	name := filepath.Join(dir, ManifestName)
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file (%s)", name, ErrNotScan, st.Mode().Type())
	}
	b, err := os.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w: the directory has no %s", dir, ErrNotScan, ManifestName)
		}
		return nil, err
	}
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil || probe.Format != Format {
		if err != nil && bytes.Contains(b, []byte(`"format": "`+Format+`"`)) {
			// A manifest cut short, or damaged, not another file.
			return nil, fmt.Errorf("%s: %w: the manifest is cut short or damaged (%v)", name, ErrCorrupt, err)
		}
		return nil, fmt.Errorf("%s: %w", name, ErrNotScan)
	}
	if probe.Version < 2 || probe.Version > Version {
		return nil, fmt.Errorf("%s: %w: format version %d; this ddtsim reads versions 1 to %d (it was written by another ddtsim: use that one, or a newer one)", name, ErrVersion, probe.Version, Version)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrCorrupt, err)
	}
	if m.Read != nil && m.Read.Groups && (m.Version == 5 || m.Version == 6) {
		// A development build's group plan (December 2026): version 5
		// kept its groups' records in the counters, not in the table;
		// version 6 keyed its groups otherwise.
		return nil, fmt.Errorf("%s: %w: format version %d, a --read group sample of a development build, which this ddtsim cannot take up: scan again", name, ErrVersion, m.Version)
	}
	if m.Read != nil && (m.Version < 4 || m.Read.Groups && m.Version < 7 || !(m.Read.Fraction > 0 && m.Read.Fraction <= 1)) {
		return nil, fmt.Errorf("%s: %w: read plan %+v in format version %d", name, ErrCorrupt, *m.Read, m.Version)
	}
	if len(m.Parts) != Partitions {
		return nil, fmt.Errorf("%s: %w: %d partitions listed, want %d", name, ErrCorrupt, len(m.Parts), Partitions)
	}
	for i := range m.Files {
		if err := m.Files[i].check(); err != nil {
			return nil, fmt.Errorf("%s: %w: %v", name, ErrCorrupt, err)
		}
	}
	return &m, nil
}

// DecodeOptions adjust Read.
type DecodeOptions struct {
	// Check, when set, is called with the header before any entry is
	// read; an error from it ends Read with that error.
	Check func(*Header) error
	// Table, when set, receives the entries (added to what it holds, as
	// merging scans does) instead of a new table. It must have been made
	// for an equal model. After an error its content is meaningless.
	Table *ddt.Table
	// HeaderOnly stops after the header (no table file is read).
	HeaderOnly bool
}

// Read reads the saved scan at path: a directory (format version 2 to 4) or a
// file of format version 1. The table is read into memory (Merge does
// not need to). Errors name the file at fault.
func Read(path string, opts DecodeOptions) (*Scan, error) {
	st, err := os.Stat(path)
	if err != nil {
		if pid, held := LockHolder(path); held && errors.Is(err, fs.ErrNotExist) {
			// Its first checkpoint not written yet (found by a new user:
			// merge said only "stat sv4: no such file or directory").
			return nil, &LockedError{Path: path, PID: pid}
		}
		return nil, err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w: not a directory or a regular file (%s)", path, ErrNotScan, st.Mode().Type())
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		s, err := decodeV1(f, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return s, nil
	}
	m, err := ReadManifest(path)
	if err != nil {
		return nil, err
	}
	s := &Scan{Header: m.Header, Counters: m.Counters, Version: m.Version}
	p, err := s.begin(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p == nil {
		return s, nil
	}
	for i, part := range m.Parts {
		pr, err := openPart(path, i, part, true)
		if err != nil {
			return nil, err
		}
		for {
			r, err := pr.next()
			if err == nil && r != nil {
				err = checkModel(pr, r, p)
			}
			if err != nil {
				pr.close()
				return nil, err
			}
			if r == nil {
				break
			}
			k := r.keyOf()
			if s.Table.RefN(k, uint32(r.LSize), uint64(r.Refcnt)) {
				s.Table.Set(k, uint32(r.PSize))
			}
		}
		pr.close()
	}
	return s, nil
}

// checkModel checks a row against the scan's model: LSIZE at most the
// recordsize (the volblocksize of a volume), DSIZE the model's for its
// PSIZE.
func checkModel(pr *partReader, r *Row, p *zio.Policy) error {
	if r.LSize > int64(p.RecordSize) {
		return fmt.Errorf("%s: %w: row %d: lsize %d, larger than the scan's recordsize %d (a table of another model)",
			pr.name, ErrPart, pr.rows-1, r.LSize, p.RecordSize)
	}
	want := int64(0)
	if r.PSize > 0 {
		want = int64(p.DSize(uint64(r.PSize)))
	}
	if r.DSize != want {
		return fmt.Errorf("%s: %w: row %d: dsize %d, where the scan's model gives %d for psize %d (a table of another model)",
			pr.name, ErrPart, pr.rows-1, r.DSize, want, r.PSize)
	}
	return nil
}

// begin does what reading a saved scan does between its header and its
// table (DecodeOptions): Check, HeaderOnly (nil policy), and the table to
// fill, made for the model's policy, which it returns.
func (s *Scan) begin(opts DecodeOptions) (*zio.Policy, error) {
	if opts.Check != nil {
		if err := opts.Check(&s.Header); err != nil {
			return nil, err
		}
	}
	if opts.HeaderOnly {
		return nil, nil
	}
	p, err := s.Model.Policy()
	if err != nil {
		return nil, fmt.Errorf("the saved model: %w", err)
	}
	s.Table = opts.Table
	if s.Table == nil {
		s.Table = ddt.NewTable(p.DSize)
	}
	return p, nil
}

// ReadHeader reads only the header of the saved scan at path.
func ReadHeader(path string) (*Header, error) {
	s, err := Read(path, DecodeOptions{HeaderOnly: true})
	if err != nil {
		return nil, err
	}
	return &s.Header, nil
}

// sortFiles sorts files by path.
func sortFiles(files []File) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
}

// NotSavedScanError is CheckReplaceable's refusal to replace a file that
// is not a saved scan.
type NotSavedScanError struct{ why string }

func (e *NotSavedScanError) Error() string {
	return e.why + ": refusing to overwrite it (remove it first, or save elsewhere)"
}

// CheckReplaceable accepts a --save target that does not exist, is an
// empty directory or an empty file, or holds a saved scan (a directory
// with a ddtsim manifest, or a file of format version 1), and refuses
// anything else with a *NotSavedScanError.
func CheckReplaceable(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		names, err := readNames(path)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return nil
		}
		if _, err := ReadManifest(path); err != nil && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrCorrupt) {
			return &NotSavedScanError{"it is a directory that does not hold a ddtsim saved scan"}
		}
		var other []string
		for _, n := range names {
			if n != ManifestName && !(strings.HasPrefix(n, "part-") && strings.HasSuffix(n, ".parquet")) {
				other = append(other, n)
			}
		}
		if len(other) > 0 {
			sort.Strings(other)
			if len(other) > 3 {
				other = append(other[:3], "...")
			}
			return &NotSavedScanError{fmt.Sprintf("it holds a saved scan and other files (%s), which replacing it would delete", escape.Path(strings.Join(other, ", ")))}
		}
		return nil
	case !fi.Mode().IsRegular():
		return &NotSavedScanError{"it exists and is not a directory or a regular file"}
	case fi.Size() == 0:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(magicV1))
	if n, _ := io.ReadFull(f, head); string(head[:n]) != magicV1 {
		return &NotSavedScanError{"it exists and is not a ddtsim saved scan"}
	}
	return nil
}

// readNames lists a directory's entries.
func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
