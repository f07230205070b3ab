package breakdown_test

import (
	"bytes"
	"testing"

	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// TestBreakdownTextAndCSV checks the breakdown in report's text: after the
// summary, which it leaves as it was.
func TestBreakdownTextAndCSV(t *testing.T) {
	t.Parallel()
	root := breakdown.BreakdownTree(t)
	p := testkit.Policy(t, zio.LZ4)
	res, b := breakdown.ScanBreakdown(t, p, model.SparseAuto, breakdown.ByDir, root)
	s, err := report.New(p, 12, model.SparseAuto, []string{root}, res)
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := s.WriteText(&plain); err != nil {
		t.Fatal(err)
	}
	s.Breakdown = b
	var text bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(text.Bytes(), plain.Bytes()) {
		t.Errorf("the breakdown changes the report before it")
	}
	for _, want := range []string{"Breakdown by subdirectory of", breakdown.TotalName, "largest remainder", "zeros: "} {
		if !bytes.Contains(text.Bytes(), []byte(want)) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
}
