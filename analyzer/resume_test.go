package analyzer

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// progress is a minimal tracker of what Options.Done reported.
type progress struct {
	mu    sync.Mutex
	files map[string]*doneFile
}

type doneFile struct {
	info  FileInfo
	spans []Span
}

func newProgress() *progress { return &progress{files: map[string]*doneFile{}} }

func (p *progress) done(f FileInfo, first, end uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.files[f.Path]
	if d == nil {
		d = &doneFile{info: f}
		p.files[f.Path] = d
	}
	d.spans = append(d.spans, Span{first, end})
}

// skip returns the spans done in f, sorted and merged, and checks that no
// record was reported twice.
func (p *progress) skip(t *testing.T) func(FileInfo) ([]Span, error) {
	return func(f FileInfo) ([]Span, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		d := p.files[f.Path]
		if d == nil {
			return nil, nil
		}
		if d.info != f {
			return nil, os.ErrInvalid
		}
		sort.Slice(d.spans, func(i, j int) bool { return d.spans[i].First < d.spans[j].First })
		var out []Span
		for _, s := range d.spans {
			if n := len(out); n > 0 && s.First < out[n-1].End {
				t.Errorf("%s: records %d-%d reported done twice", f.Path, s.First, out[n-1].End)
			}
			if n := len(out); n > 0 && s.First <= out[n-1].End {
				out[n-1].End = max(out[n-1].End, s.End)
				continue
			}
			out = append(out, s)
		}
		d.spans = out
		return append([]Span(nil), out...), nil
	}
}

// An interrupted scan continued with Resume (several times over) ends with
// exactly the table and counters of an uninterrupted scan.
func TestResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("scans the golden inputs several times")
	}
	inputs, err := golden.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lz4-128k-a12", "off-128k-a12-never", "lz4-4k-a12"} {
		t.Run(name, func(t *testing.T) {
			c, err := golden.FindCase(name)
			if err != nil {
				t.Fatal(err)
			}
			p, sp := goldenPolicy(t, c)
			want, err := Run(context.Background(), inputs, Options{Policy: p, Sparse: sp, Jobs: 4})
			if err != nil {
				t.Fatal(err)
			}
			prog := newProgress()
			var prev *Analysis
			rounds := 0
			for _, stopAfter := range []int{3, 40, 150, -1} {
				rounds++
				ctx, cancel := context.WithCancel(context.Background())
				var mu sync.Mutex
				n := 0
				opts := Options{Policy: p, Sparse: sp, Jobs: 4,
					Done: func(f FileInfo, first, end uint64) {
						prog.done(f, first, end)
						mu.Lock()
						n++
						if n == stopAfter {
							cancel()
						}
						mu.Unlock()
					},
					Warn: func(path string, err error) { t.Errorf("%s: %v", path, err) },
				}
				if prev != nil {
					opts.Resume = &Resume{Table: prev.Table, Counters: prev.Counters, Done: prog.skip(t)}
				}
				res, err := Run(ctx, inputs, opts)
				cancel()
				if err != nil && stopAfter < 0 {
					t.Fatal(err)
				}
				prev = res
				if err == nil {
					break
				}
			}
			if rounds < 4 {
				t.Errorf("only %d rounds: the interruptions did not happen", rounds)
			}
			if *prev.Histogram != *want.Histogram {
				t.Errorf("histogram after resuming differs:\n got %+v\nwant %+v", prev.Histogram.Total(), want.Histogram.Total())
			}
			if !reflect.DeepEqual(prev.Counters, want.Counters) {
				t.Errorf("counters after resuming differ:\n got %+v\nwant %+v", prev.Counters, want.Counters)
			}
		})
	}
}

// A file done in part and changed before the resume is skipped with a
// warning; a file done completely is not read again.
func TestResumeSkipsChangedAndDoneFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	testkit.Write(t, a, testkit.Rand(1, 1<<20))
	testkit.Write(t, b, testkit.Rand(2, 1<<20))
	p := testkit.Policy(t, zio.LZ4)
	info := func(path string) FileInfo {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return FileInfo{Path: path, Size: uint64(st.Size()), Mtime: st.ModTime().UnixNano(), Records: 8}
	}
	var reads sync.Map
	faults := &source.Faults{ReadFault: func(path string, off uint64) error { reads.Store(path, true); return nil }}
	var warns []string
	res, err := Run(context.Background(), []string{dir}, Options{Policy: p, Jobs: 2, Faults: faults,
		Warn: func(path string, err error) { warns = append(warns, path+": "+err.Error()) },
		Resume: &Resume{
			Done: func(f FileInfo) ([]Span, error) {
				if f.Path == a {
					return []Span{{0, 8}}, nil
				}
				if want := info(b); f.Size != want.Size || f.Records != 8 {
					t.Errorf("FileInfo %+v", f)
				}
				return nil, os.ErrExist
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reads.Load(a); ok {
		t.Error("a file done completely was read again")
	}
	if _, ok := reads.Load(b); ok {
		t.Error("a file refused by Resume.Done was read")
	}
	if res.Counters.Files != 2 || res.Counters.Errors != 1 || res.Counters.Records != 0 || len(warns) != 1 || !strings.HasPrefix(warns[0], b) {
		t.Errorf("counters %+v, warnings %q", res.Counters, warns)
	}
}

// A read error in an interrupted scan: the records read before it are
// done, the others are read again by the resumed scan, which then ends
// as a scan without the error.
func TestResumeRetriesAfterReadError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	testkit.Write(t, f, testkit.Rand(3, 20<<20)) // 160 records, 3 chunks
	p := testkit.Policy(t, zio.LZ4)
	want, _ := scanT(t, p, model.SparseAuto, dir)
	prog := newProgress()
	faults := &source.Faults{ReadFault: func(path string, off uint64) error {
		if off == 70<<17 {
			return syscall.EIO
		}
		return nil
	}}
	res, err := Run(context.Background(), []string{dir}, Options{Policy: p, Jobs: 1, Done: prog.done, Faults: faults})
	if err != nil || res.Counters.Errors != 1 {
		t.Fatalf("%v, counters %+v", err, res.Counters)
	}
	d := prog.files[f]
	if d == nil || len(d.spans) != 2 || d.spans[0] != (Span{0, 64}) || d.spans[1] != (Span{64, 70}) {
		t.Fatalf("done %+v", d)
	}
	got, err := Run(context.Background(), []string{dir}, Options{Policy: p, Jobs: 2,
		Resume: &Resume{Table: res.Table, Counters: res.Counters, Done: prog.skip(t)}})
	if err != nil {
		t.Fatal(err)
	}
	// The file's indirect block was counted by each run for the records
	// it read (a resumed file is two pieces): one more block.
	if g, w := got.Counters.Indirect.Count, want.Counters.Indirect.Count; g != w+1 {
		t.Errorf("indirect blocks %d after the retry, want %d + 1", g, w)
	}
	got.Counters.Indirect, want.Counters.Indirect = space.Blocks{}, space.Blocks{}
	if *got.Histogram != *want.Histogram || !reflect.DeepEqual(got.Counters, want.Counters) {
		t.Errorf("after the retry:\n got %+v\nwant %+v", got.Counters, want.Counters)
	}
}
