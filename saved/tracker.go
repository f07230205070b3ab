package saved

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/input/source"
)

// Tracker records how far a scan got, for its checkpoints and its end, in
// memory that does not grow with the number of files: the position in the
// walk's order up to which every file is done (source.Position), plus the
// files after it in flight (started by the workers, or done out of order),
// the files given up incomplete (a read error: a resume reads the rest)
// and the paths the walk could not read (a resume reads them, whatever the
// position). For a resumed scan it tells the analyzer what the saved scan
// did (Skip, analyzer.Resume.Done). It is safe for concurrent use.
type Tracker struct {
	mu sync.Mutex
	// The saved scan's progress (a resumed scan): its files by path, its
	// position, the paths it could not read.
	saved       map[string]*savedFile
	savedPos    *source.Position
	savedUnread map[string]bool // path → reached by this scan
	ordered     bool            // the saved files carry their Arg (format 3)

	live   map[string]*tracked // started, not yet behind pos (or given up incomplete)
	queue  []*tracked          // started, in walk order; queue[head:] not yet behind pos
	head   int
	pos    *source.Position // every file started up to it is finished
	unread map[string]bool  // paths this scan could not read
}

type savedFile struct {
	File
	asked bool // the resumed scan reached the file
	taken bool // and took it on (Started): its progress is the live one's
}

type tracked struct {
	File
	finished bool
}

// NewTracker returns a tracker that starts from the progress of a saved
// scan: its files, its position (nil: none, or a scan of format version
// 2, whose files are all listed) and its format version. A new scan passes
// nil, nil, Version.
func NewTracker(saved []File, pos *Position, version int) *Tracker {
	t := &Tracker{saved: make(map[string]*savedFile, len(saved)), savedUnread: map[string]bool{},
		live: map[string]*tracked{}, unread: map[string]bool{}, ordered: version >= 3}
	for _, f := range saved {
		if f.Unread {
			t.savedUnread[string(f.Path)] = false
			continue
		}
		f.Done = append([][2]uint64(nil), f.Done...)
		t.saved[string(f.Path)] = &savedFile{File: f}
	}
	if pos != nil {
		p := pos.position()
		t.savedPos = &p
	}
	return t
}

// Skip returns the records of f the saved scan did; it is
// analyzer.Resume.Done. A file done completely is skipped whatever
// happened to it since (as it would be after an uninterrupted scan), and
// so is every file before the saved position, but those the saved scan
// could not read, or that lie below a directory it could not list. A file
// done in part must be unchanged (inode, size, modification time):
// otherwise it is skipped with an error, and the records taken from it
// before stay in the result.
func (t *Tracker) Skip(f analyzer.FileInfo) ([]analyzer.Span, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.saved[f.Path]; e != nil {
		e.asked = true
		if len(e.Done) == 0 {
			return nil, nil
		}
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
	if t.savedPos == nil || f.Position().Compare(*t.savedPos) > 0 {
		return nil, nil
	}
	// Before the saved position: done, unless the saved scan could not
	// read it or a directory above it.
	for p := f.Path; ; {
		if _, ok := t.savedUnread[p]; ok {
			t.savedUnread[p] = true
			return nil, nil
		}
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return []analyzer.Span{{First: 0, End: f.Records}}, nil
}

// Tally returns the block-pointer tally the saved scan kept of f, when
// Skip gives f's records done from the saved file's progress (done
// completely, or in part and unchanged); it is analyzer.Resume.Tally.
func (t *Tracker) Tally(f analyzer.FileInfo) *analyzer.BPTally {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.saved[f.Path]
	if e == nil || e.Tally == nil || !e.Complete() && !same(&e.File, &f) {
		return nil
	}
	return e.Tally
}

// Started records that the scan takes the records of f not in done (what
// Skip gave); it is analyzer.Options.Started, called in the walk's order.
func (t *Tracker) Started(f analyzer.FileInfo, done []analyzer.Span) {
	if len(done) == 1 && done[0].First == 0 && done[0].End >= f.Records && t.behindSaved(&f) {
		// Skipped as done, behind the saved position, which covers it:
		// nothing to remember (a resume skips thousands a second).
		return
	}
	e := &tracked{File: fileOf(&f)}
	for _, d := range done {
		if end := min(d.End, f.Records); d.First < end {
			e.Done = addRun(e.Done, [2]uint64{d.First, end})
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if sf := t.saved[f.Path]; sf != nil {
		sf.taken = true
	}
	t.live[f.Path] = e
	t.queue = append(t.queue, e)
}

// behindSaved reports whether f lies at or behind the saved position.
func (t *Tracker) behindSaved(f *analyzer.FileInfo) bool {
	return t.savedPos != nil && f.Position().Compare(*t.savedPos) <= 0
}

// fileOf is the progress record of f, nothing done.
func fileOf(f *analyzer.FileInfo) File {
	return File{Path: Path(f.Path), Arg: f.Arg, Dev: f.Dev, Ino: f.Ino, Size: f.Size, Mtime: f.Mtime, Records: f.Records}
}

// Done records that records [first, end) of f are done; it is
// analyzer.Options.Done.
func (t *Tracker) Done(f analyzer.FileInfo, first, end uint64) {
	if first >= end {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.live[f.Path]
	if e == nil || !same(&e.File, &f) {
		// Not Started (a caller that does not report starts): kept
		// until the end.
		e = &tracked{File: fileOf(&f)}
		t.live[f.Path] = e
	}
	e.Done = addRun(e.Done, [2]uint64{first, end})
}

// Finished records that the scan is through with f; it is
// analyzer.Options.Finished. The position moves past every file finished
// in the walk's order; those done completely are forgotten.
func (t *Tracker) Finished(f analyzer.FileInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.live[f.Path]
	if e == nil {
		return
	}
	e.finished = true
	for t.head < len(t.queue) && t.queue[t.head].finished {
		x := t.queue[t.head]
		t.queue[t.head] = nil
		t.head++
		p := x.position()
		t.pos = &p
		if x.Complete() && t.live[string(x.Path)] == x {
			delete(t.live, string(x.Path))
		}
	}
	if t.head > 1024 && 2*t.head > len(t.queue) {
		t.queue = append(t.queue[:0], t.queue[t.head:]...)
		t.head = 0
	}
}

// Unread records a path the scan could not read, or list (a directory):
// a resume reads it, and what lies below it, whatever its position.
func (t *Tracker) Unread(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unread[path] = true
}

// Progress returns what a saved scan keeps of the scan's progress: the
// position up to which every file is done (nil: none yet) and the files
// that position does not cover, sorted by path: in flight, done out of
// order, given up incomplete, or not readable (File.Unread). inFlight are
// records accounted but not yet reported to Done (a checkpoint's chunks in
// progress: analyzer.State.InFlight), counted as done; pending the
// block-pointer tallies of the files not finished (analyzer.State.Pending,
// analyzer.Analysis.Pending), kept with their files (File.Tally).
func (t *Tracker) Progress(inFlight []analyzer.Accounted, pending []analyzer.Pending) (*Position, []File) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tallies := map[string]*analyzer.BPTally{}
	for i := range pending {
		tallies[pending[i].File.Path] = &pending[i].Tally
	}
	pos := t.pos
	if pos == nil || t.savedPos != nil && pos.Compare(*t.savedPos) < 0 {
		pos = t.savedPos
	}
	extra := map[string][][2]uint64{}
	for _, a := range inFlight {
		extra[a.File.Path] = append(extra[a.File.Path], [2]uint64{a.First, a.End})
	}
	var out []File
	for path, e := range t.live {
		f := e.File
		f.Done = append([][2]uint64(nil), f.Done...)
		for _, r := range extra[path] {
			f.Done = addRun(f.Done, r)
		}
		delete(extra, path)
		if len(f.Done) == 0 {
			continue // started, nothing done yet: nothing to keep
		}
		f.Tally = tallies[path]
		out = append(out, f)
	}
	for _, a := range inFlight {
		if runs, ok := extra[a.File.Path]; ok { // not Started (not expected)
			f := fileOf(&a.File)
			for _, r := range runs {
				f.Done = addRun(f.Done, r)
			}
			f.Tally = tallies[a.File.Path]
			out = append(out, f)
			delete(extra, a.File.Path)
		}
	}
	for _, e := range t.saved {
		if e.taken {
			// This scan's progress replaces it: listed above, or
			// behind the position once done.
			continue
		}
		if e.Complete() && t.ordered && pos != nil && e.position().Compare(*pos) <= 0 {
			continue // behind the position: done
		}
		f := e.File
		f.Done = append([][2]uint64(nil), f.Done...)
		out = append(out, f)
	}
	for path := range t.unread {
		out = append(out, File{Path: Path(path), Unread: true})
	}
	for path, reached := range t.savedUnread {
		if !reached && !t.unread[path] {
			out = append(out, File{Path: Path(path), Unread: true})
		}
	}
	sortFiles(out)
	var p *Position
	if pos != nil {
		p = &Position{Arg: pos.Arg, Path: Path(pos.Path)}
	}
	return p, out
}

// Missed returns the files the saved scan had done in part and the
// resumed scan did not reach (deleted or moved since, or now unreadable):
// what was taken from them stays in the result.
func (t *Tracker) Missed() []File {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []File
	for _, e := range t.saved {
		if !e.asked && !e.Complete() {
			out = append(out, e.File)
		}
	}
	sortFiles(out)
	return out
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
