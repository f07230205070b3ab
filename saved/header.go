package saved

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// Header is the JSON part of a saved scan: what was scanned, how, and how
// far each file got.
type Header struct {
	Ddtsim  string      `json:"ddtsim"`  // version of the ddtsim that wrote the file
	Created time.Time   `json:"created"` // when the file was written
	Host    string      `json:"host"`    // host name of the machine scanned
	Dir     Path        `json:"dir"`     // working directory of the scan: relative paths are relative to it
	Model   model.Model `json:"model"`
	Options Options     `json:"options"`
	Paths   []Path      `json:"paths"` // the paths named, as given
	// Complete is false for a scan that was interrupted: Position and
	// Files say where it stopped and `ddtsim resume` continues it.
	Complete bool             `json:"complete"`
	Problems []source.Problem `json:"problems"` // paths that could not be read, or changed while read
	// Position (format version 3) is the place in the walk's order
	// (source.Position) up to which every file is done; nil when none is.
	Position *Position `json:"position,omitempty"`
	// Files lists, sorted by path, the files Position does not cover
	// that the scan took records from, with the records it took (in
	// flight when it stopped, done out of order, or given up after a
	// read error), and the paths it could not read (Unread). In format
	// version 2 (no Position) it lists every file the scan took records
	// from.
	Files []File `json:"files"`
	// Shard is the share of a sharded scan (ddtsim scan --shard i/N):
	// {"index": i, "count": N}; absent for a scan of everything.
	Shard *source.Shard `json:"shard,omitempty"`
	// Read is the plan of a scan made with --read (format version 4; 6
	// with groups): {"fraction": F, "seed": S, "groups": true}, the
	// records read chosen by it (estimate.Plan); the table holds those
	// records only (keyed by content and group with groups), and the
	// counters say what the estimate needs of the others (Population,
	// Unread, DataLSize, DataMaxDSize, MaxLSize, ReadLSize, ReadLSizeSq;
	// SizeFiles with groups). Absent for a scan that read
	// every record.
	Read *estimate.Plan `json:"read,omitempty"`
}

// Options are the scan's settings that decide which files are scanned
// (not how their blocks are accounted: that is the Model).
type Options struct {
	Follow        bool `json:"follow"`          // symlinks inside directories followed
	CountLinks    bool `json:"count_links"`     // every name of a hard-linked file counted
	OneFileSystem bool `json:"one_file_system"` // other file systems below a path skipped
}

// File is one file a scan took records from, as it was when the scan
// opened it, and the records done.
type File struct {
	Path Path `json:"path"`
	Arg  int  `json:"arg,omitempty"` // index of the path named it was found under (format 3)
	// Unread: a path the scan could not read, or list (a directory); a
	// resume reads it, and what lies below it. Nothing else is set.
	Unread  bool   `json:"unread,omitempty"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    uint64 `json:"size"`     // bytes
	Mtime   int64  `json:"mtime_ns"` // nanoseconds since the epoch
	Records uint64 `json:"records"`  // level-0 records, holes included
	// Done holds the runs of records [first, end) accounted in the table
	// and the counters, sorted and disjoint: [[0, Records]] for a file
	// done completely.
	Done [][2]uint64 `json:"done"`
	// Tally is the block-pointer tally of a file the scan had not
	// finished (analyzer.BPTally): a resume accounts the file's indirect
	// blocks from it and the records it reads. Absent in scans saved
	// before it was kept (their resume counts the indirect blocks of
	// such a file from the records it reads), and for files finished.
	Tally *analyzer.BPTally `json:"bp_tally,omitempty"`
}

// Position is a place in the walk's order (source.Position), in a saved
// scan's header.
type Position struct {
	Arg  int  `json:"arg"`
	Path Path `json:"path"`
}

func (p *Position) position() source.Position {
	return source.Position{Arg: p.Arg, Path: string(p.Path)}
}

// position is f's place in the walk's order.
func (f *File) position() source.Position { return source.Position{Arg: f.Arg, Path: string(f.Path)} }

// Complete reports whether every record of f is done.
func (f *File) Complete() bool {
	return len(f.Done) == 1 && f.Done[0][0] == 0 && f.Done[0][1] >= f.Records
}

// DoneRecords returns the number of records done.
func (f *File) DoneRecords() uint64 {
	var n uint64
	for _, d := range f.Done {
		n += d[1] - d[0]
	}
	return n
}

// check validates f's runs.
func (f *File) check() error {
	if f.Unread && (len(f.Done) > 0 || f.Records > 0) {
		return fmt.Errorf("file %q: unread, with records", string(f.Path))
	}
	prev := uint64(0)
	for i, d := range f.Done {
		if d[0] >= d[1] || d[1] > f.Records || (i > 0 && d[0] <= prev) {
			return fmt.Errorf("file %q: invalid run of records %v (of %d)", string(f.Path), d, f.Records)
		}
		prev = d[1]
	}
	if f.Tally != nil {
		if err := f.Tally.Check(f.Records); err != nil {
			return fmt.Errorf("file %q: %w", string(f.Path), err)
		}
	}
	return nil
}

// Path is a file name kept byte for byte. In JSON it is a string when it
// is valid UTF-8, else an object {"base64": "..."} holding its bytes.
type Path string

// MarshalJSON implements json.Marshaler.
func (p Path) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(p)) {
		return json.Marshal(string(p))
	}
	return json.Marshal(struct {
		Base64 string `json:"base64"`
	}{base64.StdEncoding.EncodeToString([]byte(p))})
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *Path) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		var o struct {
			Base64 *string `json:"base64"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if o.Base64 == nil {
			return fmt.Errorf("path object without base64")
		}
		raw, err := base64.StdEncoding.DecodeString(*o.Base64)
		if err != nil {
			return fmt.Errorf("path: %w", err)
		}
		*p = Path(raw)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*p = Path(s)
	return nil
}

// Strings returns the paths as strings.
func Strings(ps []Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// Paths returns the strings as Paths.
func Paths(ss []string) []Path {
	out := make([]Path, len(ss))
	for i, s := range ss {
		out[i] = Path(s)
	}
	return out
}
