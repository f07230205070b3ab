package scanfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/escape"
)

// ModelError is the refusal to merge scans made with different models.
type ModelError struct {
	First string   // the file the others are compared with
	Diffs []string // per differing file: "FILE: property: first's value vs its value; ..."
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("the scans were made with different properties and cannot be merged (compared with %s):\n  %s",
		e.First, strings.Join(e.Diffs, "\n  "))
}

// Merged is the sum of several saved scans.
type Merged struct {
	// Scan is the combined scan: the first one's model and options, every
	// scan's paths and problems, the table and counters summed, Complete
	// only if every scan was. Files is empty.
	Scan
	Partial []string // the files holding interrupted scans
	// Notes are warnings for the user: scans naming the same paths (which
	// merge adds all the same), releases or ddtsim versions that differ.
	Notes []string
}

// ErrSameScan is wrapped by Merge's refusal of one saved scan named twice
// (under one name or two).
var ErrSameScan = errors.New("are the same saved scan")

// Merge reads the saved scans in files and adds them up: tables (refcnts of
// equal blocks add) and counters. Scans with different models are refused
// with a *ModelError listing the differences, before any table is read.
func Merge(files []string) (*Merged, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no saved scan to merge")
	}
	for i, a := range files {
		for _, b := range files[:i] {
			fa, ea := os.Stat(a)
			fb, eb := os.Stat(b)
			if ea == nil && eb == nil && os.SameFile(fa, fb) {
				return nil, fmt.Errorf("%s and %s %w: merging it with itself would count its files twice", escape.Path(b), escape.Path(a), ErrSameScan)
			}
		}
	}
	hdrs := make([]*Header, len(files))
	for i, f := range files {
		h, err := ReadHeader(f)
		if err != nil {
			return nil, err
		}
		hdrs[i] = h
	}
	m := &Merged{}
	var diffs []string
	for i := 1; i < len(files); i++ {
		if d := hdrs[0].Model.Diff(hdrs[i].Model); len(d) > 0 {
			diffs = append(diffs, files[i]+": "+strings.Join(d, "; "))
		}
	}
	if diffs != nil {
		return nil, &ModelError{First: files[0], Diffs: diffs}
	}
	m.Notes = append(m.Notes, differing(files, hdrs, "OpenZFS releases", func(h *Header) string { return h.Model.Release },
		"they follow the same rules; the report names "+hdrs[0].Model.Release)...)
	m.Notes = append(m.Notes, differing(files, hdrs, "ddtsim versions", func(h *Header) string { return h.Ddtsim },
		"their figures may differ where ddtsim changed")...)
	m.Notes = append(m.Notes, overlaps(files, hdrs)...)

	first, err := Read(files[0], DecodeOptions{})
	if err != nil {
		return nil, err
	}
	m.Scan = *first
	m.Files = nil
	m.Complete = true
	m.Paths, m.Problems = nil, nil
	m.Counters = analyzer.Counters{}
	for i, f := range files {
		s := first
		if i > 0 {
			s, err = Read(f, DecodeOptions{Table: m.Table, Check: func(h *Header) error {
				if d := hdrs[0].Model.Diff(h.Model); len(d) > 0 {
					return fmt.Errorf("changed while merging: %s", strings.Join(d, "; "))
				}
				return nil
			}})
			if err != nil {
				return nil, err
			}
		}
		if !s.Complete {
			m.Complete = false
			m.Partial = append(m.Partial, f)
		}
		m.Paths = append(m.Paths, s.Paths...)
		m.Problems = append(m.Problems, s.Problems...)
		AddCounters(&m.Counters, &s.Counters)
	}
	return m, nil
}

// differing notes when the scans differ in what value gives.
func differing(files []string, hdrs []*Header, what string, value func(*Header) string, consequence string) []string {
	seen := map[string]bool{}
	var vals []string
	for _, h := range hdrs {
		if v := value(h); !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	if len(vals) < 2 {
		return nil
	}
	return []string{fmt.Sprintf("the scans were made with different %s (%s): %s", what, strings.Join(vals, ", "), consequence)}
}

// overlaps notes the paths two scans share (the same path, or one inside
// the other). Merge cannot tell whether they hold the same files (another
// host, a shared mount, files changed in between): it adds them.
func overlaps(files []string, hdrs []*Header) []string {
	abs := func(h *Header, p Path) string {
		s := string(p)
		if !filepath.IsAbs(s) {
			s = filepath.Join(string(h.Dir), s)
		}
		return filepath.Clean(s)
	}
	inside := func(a, b string) bool { // a is b or inside it
		return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, "/")+"/")
	}
	var notes []string
	for i := range hdrs {
		for j := i + 1; j < len(hdrs); j++ {
			for _, p := range hdrs[i].Paths {
				for _, q := range hdrs[j].Paths {
					a, b := abs(hdrs[i], p), abs(hdrs[j], q)
					if !inside(a, b) && !inside(b, a) {
						continue
					}
					shared := a
					if len(b) > len(a) {
						shared = b
					}
					if hdrs[i].Host == hdrs[j].Host {
						notes = append(notes, fmt.Sprintf("%s and %s both scanned %s on host %s: merge adds them, so the files they share count twice",
							files[i], files[j], shared, hdrs[i].Host))
					} else {
						notes = append(notes, fmt.Sprintf("%s (host %s) and %s (host %s) both name %s: merge adds them; if that is the same storage, its files count twice",
							files[i], hdrs[i].Host, files[j], hdrs[j].Host, shared))
					}
				}
			}
		}
	}
	return notes
}

// AddCounters adds every counter of src to dst (for scans of different
// files, every counter adds up).
func AddCounters(dst, src *analyzer.Counters) {
	d := reflect.ValueOf(dst).Elem()
	s := reflect.ValueOf(src).Elem()
	for i := 0; i < d.NumField(); i++ {
		if f := d.Field(i); f.Kind() == reflect.Uint64 && f.CanSet() {
			f.SetUint(f.Uint() + s.Field(i).Uint())
		}
	}
}
