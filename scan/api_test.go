package scan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// What a Go engineer calling the library hit (each failed before its fix).
func TestRunAsALibraryUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	for i := range 8 {
		testkit.Write(t, filepath.Join(data, "f"+string(rune('a'+i))), testkit.Rand(int64(i), 4<<20))
	}
	// A deadline is an interruption like a cancel: the partial result and
	// its save are kept (context.DeadlineExceeded lost both).
	save := filepath.Join(dir, "scan.ddts")
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	res, err := scan.Run(ctx, model.Settings{}, []string{data}, scan.Options{Save: save})
	if !errors.Is(err, context.DeadlineExceeded) || res == nil || !res.Partial {
		t.Fatalf("deadline: %v, %+v", err, res)
	}
	res.Close()
	if sc, err := saved.Read(save, saved.DecodeOptions{}); err != nil || sc.Complete {
		t.Errorf("the partial scan was not saved: %v", err)
	}
	// A file that is not a saved scan is refused before scanning, and
	// left as it was (it was overwritten).
	precious := filepath.Join(dir, "precious.txt")
	testkit.Write(t, precious, []byte("keep me\n"))
	var ue *scan.UsageError
	if _, err := scan.Run(context.Background(), model.Settings{}, []string{data}, scan.Options{Save: precious}); !errors.As(err, &ue) {
		t.Errorf("Save over a text file: %v", err)
	}
	if b, _ := os.ReadFile(precious); string(b) != "keep me\n" {
		t.Errorf("the text file became %q", b)
	}
	if _, err := scan.Run(context.Background(), model.Settings{}, []string{data}, scan.Options{Save: dir}); !errors.As(err, &ue) {
		t.Errorf("Save to a directory: %v", err)
	}
	// Settings built in Go are checked as Parse checks text: no panic on
	// an unknown sparse mode, no upper-case compression.
	for _, set := range []model.Settings{{Sparse: 9}, {Compression: "ZSTD"}, {RecordSize: 3000}} {
		if _, err := scan.Run(context.Background(), set, []string{data}, scan.Options{}); !errors.As(err, &ue) {
			t.Errorf("%+v: %v", set, err)
		}
	}
}
