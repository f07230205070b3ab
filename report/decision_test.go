package report

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/ddtsize"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// decisionScan scans dir with p and estimates the DDT with ram.
func decisionScan(t *testing.T, p *zio.Policy, ram uint64, dir string) *Report {
	t.Helper()
	res, err := analyzer.Run(context.Background(), []string{dir}, analyzer.Options{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(p, 12, model.SparseAuto, []string{dir}, res)
	if err != nil {
		t.Fatal(err)
	}
	s.EstimateDDT(p, ram)
	return s
}

// The decision line, word for word: dedup worth it (many copies of
// large records), not worth it (no duplicate; a saving smaller than 50
// times the table's RAM), not worth it on a machine whose ARC cannot hold
// the table. It follows the histogram in the text, leads the HTML page,
// and is the JSON decision.text and the CSV decision row.
func TestDecisionLine(t *testing.T) {
	t.Parallel()
	const rule = " (rule: worth it when dedup saves at least 10% of the size without dedup and 50 times the table's RAM, and the table fits in the ARC when --ram is given)"
	copies := t.TempDir()
	data := testkit.Rand(11, 4<<20)
	for i := range 4 {
		testkit.Write(t, filepath.Join(copies, fmt.Sprint("copy", i)), data)
	}
	unique := t.TempDir()
	testkit.Write(t, filepath.Join(unique, "a"), testkit.Rand(12, 4<<20))
	testkit.Write(t, filepath.Join(unique, "b"), []byte(strings.Repeat("ddtsim decides ", 100000)))
	small := t.TempDir()
	testkit.Write(t, filepath.Join(small, "a"), testkit.Rand(13, 64<<10))
	testkit.Write(t, filepath.Join(small, "b"), testkit.Rand(13, 64<<10))
	p := testkit.Policy(t, zio.LZ4)
	p4k := testkit.Policy(t, zio.LZ4)
	p4k.RecordSize = 4096

	for _, c := range []struct {
		name  string
		p     *zio.Policy
		ram   uint64
		dir   string
		worth bool
		want  string
	}{
		{"copies", p, 0, copies, true,
			"Decision: compression alone saves 0B of 16M (0.0%); dedup adds 12M on top (75.0% of the 16M left) for a DDT of 64K in RAM: worth it"},
		{"no duplicate", p, 0, unique, false,
			"Decision: compression alone saves 1.38M of 5.43M (25.5%); dedup adds nothing on top (no block is stored twice) for a DDT of 64K in RAM: probably not worth it"},
		{"small saving", p, 0, small, false,
			"Decision: compression alone saves 0B of 128K (0.0%); dedup adds 64K on top (50.0% of the 128K left) for a DDT of 64K in RAM: probably not worth it"},
		// 75% saved, but less than 50 times the table's 288K.
		{"copies, 4K records, 64M of RAM", p4k, 64 << 20, copies, false,
			"Decision: compression alone saves 0B of 16M (0.0%); dedup adds 12M on top (75.0% of the 16M left) for a DDT of 288K in RAM, which fits in the ARC with 64M of RAM: probably not worth it"},
	} {
		s := decisionScan(t, c.p, c.ram, c.dir)
		d := s.Decision
		if d == nil {
			t.Fatalf("%s: no decision", c.name)
		}
		if d.Text != c.want+rule || d.WorthIt != c.worth {
			t.Errorf("%s: decision\n%q (worth it %v), want\n%q (%v)", c.name, d.Text, d.WorthIt, c.want+rule, c.worth)
		}
		o := render(t, s)
		if !strings.Contains(o.text, "dedup * compress / copies = ") || !strings.Contains(o.text, "\n\n"+d.Text+"\nSummary: ") {
			t.Errorf("%s: text does not follow the histogram with the decision:\n%s", c.name, o.text)
		}
		jd, _ := o.json["decision"].(map[string]any)
		if jd["text"] != d.Text || jd["worth_it"] != c.worth || jd["dedup_saves"] != float64(d.DedupSaves) {
			t.Errorf("%s: JSON decision %v", c.name, jd)
		}
		if o.csv["decision"] != d.Text || o.csv["decision_worth_it"] != fmt.Sprint(c.worth) {
			t.Errorf("%s: CSV decision %q %q", c.name, o.csv["decision"], o.csv["decision_worth_it"])
		}
		body := o.html[strings.Index(o.html, "<main>"):]
		if i, j := strings.Index(body, `<p class="decision`), strings.Index(body, `<div class="cards">`); i < 0 || i > j || strings.Count(body, "dedup adds") != 1 {
			t.Errorf("%s: HTML does not lead with the decision (once):\n%s", c.name, body[:min(len(body), 2000)])
		}
		if strings.Contains(s.Zdb, "Decision") {
			t.Errorf("%s: the zdb -S text has the decision", c.name)
		}
	}

	// A table the ARC cannot hold: not worth it, whatever it saves.
	s := decisionScan(t, p, 64<<20, copies)
	s.DDT.ARC.Verdict = ddtsize.VerdictNoFit
	if d := s.decide(); d.WorthIt || d.ARC != "does not fit" ||
		d.Text != "Decision: compression alone saves 0B of 16M (0.0%); dedup adds 12M on top (75.0% of the 16M left) for a DDT of 64K in RAM, which does not fit in the ARC with 64M of RAM: not worth it on this machine"+rule {
		t.Errorf("no fit: %q (worth it %v)", d.Text, d.WorthIt)
	}
}
