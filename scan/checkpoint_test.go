package scan_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// A disk that fills up under the checkpoints: each failed checkpoint is
// reported (ENOSPC, naming the saved scan), the previous checkpoint stays
// in place and readable, the scan goes on, and once there is room again the
// scan is saved, its result the one of a scan never interrupted. The
// checkpoints are taken while a worker waits on a read that does not come
// (the last file's, held until they are seen): a hung read holds no
// checkpoint back.
func TestCheckpointOnFullDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 40 {
		data := testkit.Rand(int64(i%30), 256<<10) // some files alike
		testkit.Write(t, filepath.Join(dir, fmt.Sprintf("f%02d", i)), data)
	}
	set := model.Settings{Release: "2.3.2", Compression: "lz4"}
	clean, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer clean.Close()

	// The last file is read only once enough checkpoints were seen: two
	// refused, then one written again (a failsafe ends the wait).
	ready := make(chan struct{})
	last := filepath.Join(dir, "f39")
	faults := &source.Faults{ReadFault: func(path string, _ uint64) error {
		if path == last {
			select {
			case <-ready:
			case <-time.After(20 * time.Second):
			}
		}
		return nil
	}}
	var full atomic.Bool
	w := &saved.Writer{CreateFault: func(name string) error {
		if full.Load() && filepath.Base(name) == saved.ManifestName {
			return syscall.ENOSPC
		}
		return nil
	}}
	save := filepath.Join(t.TempDir(), "scan")
	var mu sync.Mutex
	var ok, failed int
	var maxPause time.Duration
	var kept *saved.Header // the checkpoint in place while the disk was full
	res, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{Jobs: 2, Save: save, Checkpoint: 5 * time.Millisecond, Faults: faults, SaveWriter: w,
		Checkpointed: func(r scan.CheckpointReport) {
			mu.Lock()
			defer mu.Unlock()
			maxPause = max(maxPause, r.Pause)
			if r.Err == nil {
				ok++
				switch {
				case ok == 1:
					full.Store(true)
				case failed >= 2 && ok == 2:
					close(ready)
				}
				return
			}
			failed++
			var se *scan.SaveError
			if !errors.As(r.Err, &se) || se.Path != save || !errors.Is(r.Err, syscall.ENOSPC) || !strings.Contains(r.Err.Error(), "no space left on device") {
				t.Errorf("checkpoint error %v; want a SaveError naming %s, ENOSPC", r.Err, save)
			}
			if failed == 2 {
				h, err := saved.ReadHeader(save)
				if err != nil || h.Complete {
					t.Errorf("while the disk is full, the saved scan: %v (complete %v); want the first checkpoint", err, h != nil && h.Complete)
				}
				kept = h
				full.Store(false)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if ok < 2 || failed < 2 || kept == nil {
		t.Fatalf("%d checkpoints written, %d failed: the scan was too quick to test them", ok, failed)
	}
	t.Logf("%d checkpoints written, %d refused; longest pause %v", ok, failed, maxPause)
	if !reflect.DeepEqual(res.Analysis.Histogram, clean.Analysis.Histogram) || res.Analysis.Counters.Stored != clean.Analysis.Counters.Stored {
		t.Errorf("the result differs from the scan without checkpoints")
	}
	saved, err := saved.Read(save, saved.DecodeOptions{})
	if err != nil || !saved.Complete || !reflect.DeepEqual(saved.Result().Histogram, clean.Analysis.Histogram) {
		t.Errorf("the saved scan: %v", err)
	}
	names, _ := os.ReadDir(filepath.Dir(save))
	if len(names) != 1 {
		t.Errorf("beside the saved scan: %v; want nothing", names)
	}
}
