package scanfile

import (
	"fmt"
	"sort"
	"sync"

	"github.com/ddtsim/ddtsim/analyzer"
)

// Tracker records how far a scan got in each file (analyzer.Options.Done)
// and, for a resumed scan, tells the analyzer what the saved scan did
// (analyzer.Resume.Done). It is safe for concurrent use.
type Tracker struct {
	mu    sync.Mutex
	files map[string]*tracked
}

type tracked struct {
	File
	asked bool // the resumed scan reached the file
}

// NewTracker returns a tracker that starts from the progress of a saved
// scan (nil for a new scan).
func NewTracker(saved []File) *Tracker {
	t := &Tracker{files: make(map[string]*tracked, len(saved))}
	for _, f := range saved {
		f.Done = append([][2]uint64(nil), f.Done...)
		t.files[string(f.Path)] = &tracked{File: f}
	}
	return t
}

// Done records that records [first, end) of f are done; it is
// analyzer.Options.Done.
func (t *Tracker) Done(f analyzer.FileInfo, first, end uint64) {
	if first >= end {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.files[f.Path]
	if e == nil || !same(&e.File, &f) {
		// A new file, or (not expected: the analyzer skips changed
		// files) another version of one: its progress starts now.
		e = &tracked{File: File{Path: Path(f.Path), Dev: f.Dev, Ino: f.Ino, Size: f.Size, Mtime: f.Mtime, Records: f.Records}, asked: true}
		t.files[f.Path] = e
	}
	e.Done = addRun(e.Done, [2]uint64{first, end})
}

// same reports whether the file found now is the one the progress was
// recorded for: same inode, size, modification time and record count. The
// device number is not compared: it may change across reboots (LVM, NFS,
// btrfs), which is when scans are resumed.
func same(e *File, f *analyzer.FileInfo) bool {
	return e.Ino == f.Ino && e.Size == f.Size && e.Mtime == f.Mtime && e.Records == f.Records
}

// addRun inserts run r into the sorted, disjoint runs, merging it with the
// runs it touches or overlaps.
func addRun(runs [][2]uint64, r [2]uint64) [][2]uint64 {
	i := sort.Search(len(runs), func(i int) bool { return runs[i][1] >= r[0] })
	j := i
	for j < len(runs) && runs[j][0] <= r[1] {
		r[0] = min(r[0], runs[j][0])
		r[1] = max(r[1], runs[j][1])
		j++
	}
	if i == j {
		runs = append(runs, [2]uint64{})
		copy(runs[i+1:], runs[i:])
		runs[i] = r
		return runs
	}
	runs[i] = r
	return append(runs[:i+1], runs[j:]...)
}

// Skip returns the records of f the saved scan did; it is
// analyzer.Resume.Done. A file done completely is skipped whatever
// happened to it since (as it would be after an uninterrupted scan). A
// file done in part must be unchanged (inode, size, modification time):
// otherwise it is skipped with an error, and the records taken from it
// before stay in the result.
func (t *Tracker) Skip(f analyzer.FileInfo) ([]analyzer.Span, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.files[f.Path]
	if e == nil || len(e.Done) == 0 {
		return nil, nil
	}
	e.asked = true
	if e.Complete() {
		return []analyzer.Span{{First: 0, End: max(e.Records, f.Records)}}, nil
	}
	if !same(&e.File, &f) {
		return nil, fmt.Errorf("changed since the scan was saved (%s): skipped; the %d of its %d records scanned before the interruption are kept in the result",
			changes(&e.File, &f), e.DoneRecords(), e.Records)
	}
	spans := make([]analyzer.Span, len(e.Done))
	for i, d := range e.Done {
		spans[i] = analyzer.Span{First: d[0], End: d[1]}
	}
	return spans, nil
}

// changes says how the file differs from the saved one.
func changes(e *File, f *analyzer.FileInfo) string {
	switch {
	case e.Ino != f.Ino:
		return fmt.Sprintf("another file now: inode %d, was %d", f.Ino, e.Ino)
	case e.Size != f.Size:
		return fmt.Sprintf("size %d bytes, was %d", f.Size, e.Size)
	case e.Mtime != f.Mtime:
		return "modified"
	}
	return fmt.Sprintf("%d records, was %d", f.Records, e.Records)
}

// Files returns the progress of every file, sorted by path.
func (t *Tracker) Files() []File {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]File, 0, len(t.files))
	for _, e := range t.files {
		f := e.File
		f.Done = append([][2]uint64(nil), f.Done...)
		out = append(out, f)
	}
	sortFiles(out)
	return out
}

// Missed returns the files the saved scan had done in part and the
// resumed scan did not reach (deleted or moved since, or now unreadable):
// what was taken from them stays in the result.
func (t *Tracker) Missed() []File {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []File
	for _, e := range t.files {
		if !e.asked && !e.Complete() {
			out = append(out, e.File)
		}
	}
	sortFiles(out)
	return out
}
