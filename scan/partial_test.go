package scan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// interrupted scans dir with one worker and cancels it once the first
// chunk is done (after wait), and returns the result's report in every
// format.
func interrupted(t *testing.T, dir string, wait time.Duration, found int64) (*scan.Result, *report.Report, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	prog := &analyzer.Progress{}
	res, err := scan.Run(ctx, model.Settings{Release: "2.3.2", Compression: "lz4"}, []string{dir}, scan.Options{Jobs: 1, Progress: prog,
		Done: func(analyzer.FileInfo, uint64, uint64) {
			once.Do(func() {
				// The one worker waits here: the files the walk finds
				// meanwhile stay unread.
				for end := time.Now().Add(10 * time.Second); prog.Files.Load() < found && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(wait)
				cancel()
			})
		}})
	if !errors.Is(err, context.Canceled) || !res.Partial {
		t.Fatalf("not interrupted: %v", err)
	}
	t.Cleanup(res.Close)
	rep, err := res.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	return res, rep, outputsOf(t, rep)
}

func outputsOf(t *testing.T, rep *report.Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, write := range map[string]func(*strings.Builder) error{
		"text": func(b *strings.Builder) error { return rep.WriteText(b) },
		"json": func(b *strings.Builder) error { return rep.WriteJSON(b) },
		"csv":  func(b *strings.Builder) error { return rep.WriteCSV(b) },
		"html": func(b *strings.Builder) error { return rep.WriteHTML(b) },
	} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		out[name] = b.String()
	}
	return out
}

func writeRandom(t *testing.T, path string, seed int64, n int) {
	t.Helper()
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An interrupted scan whose walk had not finished says that its files and
// file data are those found so far, in every format; one whose walk had
// finished says that they are all; a complete scan says neither.
func TestPartialScanSaysHowFarTheWalkGot(t *testing.T) {
	t.Parallel()
	many := t.TempDir()
	for i := range 300 {
		writeRandom(t, filepath.Join(many, fmt.Sprintf("f%03d", i)), int64(i), 64<<10)
	}
	// Cut once the walk has found 3 files, the first one read (found by
	// the CI under load: cut when the walk had found only the file read,
	// the report rightly had no "covered" line and said "1 regular file").
	res, rep, out := interrupted(t, many, 0, 3)
	c := res.Analysis.Counters
	if res.Analysis.WalkDone || c.Files >= 300 || rep.WalkFinished == nil || *rep.WalkFinished {
		t.Fatalf("walk done %v, %d files found, report %v: the test needs a walk cut short", res.Analysis.WalkDone, c.Files, rep.WalkFinished)
	}
	for _, line := range []string{
		"  PARTIAL      the scan was interrupted: the figures cover only what was read\n",
		fmt.Sprintf("  files        %d regular files, %s; 1 directory: found so far; the walk had not finished\n",
			c.Files, nicenum.IEC(c.LogicalBytes)),
		fmt.Sprintf("  covered      %s of the %s of file data found so far: the records read or found in holes; the figures below are for these bytes only\n",
			nicenum.IEC(c.ScannedBytes), nicenum.IEC(c.LogicalBytes)),
	} {
		if !strings.Contains(unwrap(out["text"]), line) {
			t.Errorf("text has no line %q:\n%s", line, out["text"])
		}
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out["json"]), &doc); err != nil || doc["partial"] != true || doc["walk_finished"] != false {
		t.Errorf("JSON partial %v, walk_finished %v (%v)", doc["partial"], doc["walk_finished"], err)
	}
	if !strings.Contains(out["csv"], "\npartial,true\npartial_why,the scan was interrupted: the figures cover only what was read\n") ||
		!strings.Contains(out["csv"], "\nwalk_finished,false\n") {
		t.Errorf("CSV:\n%s", out["csv"])
	}
	if !strings.Contains(out["html"], "The files and file data counted are those found so far: the walk had not finished.") ||
		!strings.Contains(out["html"], "<small>of "+nicenum.IEC(c.LogicalBytes)+" found so far</small>") {
		t.Errorf("HTML does not say the walk had not finished")
	}

	// One file of several chunks: the walk has listed it long before the
	// first chunk is done.
	one := t.TempDir()
	writeRandom(t, filepath.Join(one, "big"), 1, 24<<20)
	res, rep, out = interrupted(t, one, 100*time.Millisecond, 1)
	c = res.Analysis.Counters
	if !res.Analysis.WalkDone || rep.WalkFinished == nil || !*rep.WalkFinished || c.ScannedBytes >= c.LogicalBytes {
		t.Fatalf("walk done %v, report %v, counters %+v", res.Analysis.WalkDone, rep.WalkFinished, c)
	}
	for _, line := range []string{
		"  files        1 regular file, 24 MiB; 1 directory: the walk had finished: these are all the files\n",
		fmt.Sprintf("  covered      %s of the 24 MiB of file data: the records", nicenum.IEC(c.ScannedBytes)),
	} {
		if !strings.Contains(unwrap(out["text"]), line) {
			t.Errorf("text has no line %q:\n%s", line, out["text"])
		}
	}
	if !strings.Contains(out["json"], `"walk_finished": true`) || !strings.Contains(out["csv"], "\nwalk_finished,true\n") ||
		!strings.Contains(out["html"], "The walk had finished: the files and file data counted are all of them.") {
		t.Errorf("JSON, CSV or HTML do not say the walk had finished")
	}

	// Complete: nothing said, nothing added.
	full, err := scan.Run(context.Background(), model.Settings{Release: "2.3.2"}, []string{one}, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	rep, err = full.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	out = outputsOf(t, rep)
	if !full.Analysis.WalkDone || rep.WalkFinished != nil || strings.Contains(out["json"], "walk_finished") || strings.Contains(out["csv"], "walk_finished") ||
		!strings.Contains(out["text"], "  files        1 regular file, 24 MiB; 1 directory\n") {
		t.Errorf("complete scan: walk done %v, report %v\n%s", full.Analysis.WalkDone, rep.WalkFinished, out["text"])
	}
}

// unwrap joins the summary's wrapped lines (continued under a hanging
// indent of 15 spaces).
func unwrap(text string) string { return strings.ReplaceAll(text, "\n               ", " ") }
