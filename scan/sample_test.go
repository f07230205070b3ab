package scan_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// A sample that misses the one content half the data is made of gives no
// verdict (found by a new user: "compression alone saves 48.4%; dedup adds
// nothing" with compression=off on data of dedup 2.00).
func TestDecisionFromAnUnreliableSample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	hot := bytes.Repeat([]byte{'A'}, 4096)
	for i := range 4096 {
		if i%2 == 0 {
			b.Write(hot)
			continue
		}
		rec := make([]byte, 4096)
		for j := range rec {
			rec[j] = byte(rng.Uint32())
		}
		b.Write(rec)
	}
	if err := os.WriteFile(filepath.Join(dir, "hot"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	set := model.Settings{RecordSize: 4096, Compression: "off", Sample: 64}
	res, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	rep, err := res.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sample == nil || rep.Sample.Reliable || !rep.Sample.Skewed {
		t.Fatalf("the sample is not flagged: %+v", rep.Sample)
	}
	d := rep.Decision
	if d == nil || !d.Unreliable || d.WorthIt || d.Text != "Verdict (estimate): none: the sample is unreliable (see below); use a smaller N, or no --sample" {
		t.Errorf("decision %+v", d)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "\nVerdict (estimate): none: the sample") || strings.Contains(text.String(), "compression ") {
		t.Errorf("text:\n%s", text.String())
	}
}
