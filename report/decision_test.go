package report

import (
	"context"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

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

// The verdict line, word for word: dedup worth it (many copies of large
// records), not worth it (no duplicate; a saving smaller than 50 times the
// table's RAM), not worth it on a machine whose ARC cannot hold the table.
// It is the third line of the text (after the space and RAM lines, before
// the histogram), leads the HTML page, and is the JSON decision.text and
// the CSV decision row; the rule is stated in the summary.
func TestDecisionLine(t *testing.T) {
	t.Parallel()
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
		// 4 copies of 4 MiB of random data: 16 MiB without dedup, 4 with.
		{"copies", p, 0, copies, true,
			"Verdict: worth it: dedup saves 12 MiB (75.0%), over 50x the table's RAM"},
		{"no duplicate", p, 0, unique, false,
			"Verdict: probably not worth it: dedup saves nothing (no block is stored twice)"},
		// 64K saved, less than 50 times the table's 64K.
		{"small saving", p, 0, small, false,
			"Verdict: probably not worth it: dedup saves 64 KiB (50.0%), under 50x the table's RAM"},
		// 75% saved, but less than 50 times the table's 288K.
		{"copies, 4K records, 64M of RAM", p4k, 64 << 20, copies, false,
			"Verdict: probably not worth it: dedup saves 12 MiB (75.0%), under 50x the table's RAM"},
	} {
		s := decisionScan(t, c.p, c.ram, c.dir)
		s.EstimateSpace(c.p)
		d := s.Decision
		if d == nil {
			t.Fatalf("%s: no decision", c.name)
		}
		if d.Text != c.want || d.WorthIt != c.worth || d.Rule != Rule {
			t.Errorf("%s: decision\n%q (worth it %v), want\n%q (%v)", c.name, d.Text, d.WorthIt, c.want, c.worth)
		}
		o := render(t, s)
		lines := strings.Split(o.text, "\n")
		if len(lines) < 4 || !strings.HasPrefix(lines[0], "Space: without dedup USED ") || !strings.HasPrefix(lines[1], "RAM: dedup table ") ||
			lines[2] != d.Text || lines[3] != "" || !strings.HasPrefix(lines[4], "Simulated DDT histogram:") {
			t.Errorf("%s: text does not lead with space, RAM and verdict:\n%s", c.name, o.text)
		}
		if !strings.Contains(o.text, "\n  verdict      rule: worth it when dedup saves at least 10% of the size without dedup and 50 times\n") {
			t.Errorf("%s: the summary does not state the rule:\n%s", c.name, o.text)
		}
		jd, _ := o.json["decision"].(map[string]any)
		if jd["text"] != d.Text || jd["worth_it"] != c.worth || jd["dedup_saves"] != float64(d.DedupSaves) {
			t.Errorf("%s: JSON decision %v", c.name, jd)
		}
		if o.csv["decision"] != d.Text || o.csv["decision_worth_it"] != fmt.Sprint(c.worth) {
			t.Errorf("%s: CSV decision %q %q", c.name, o.csv["decision"], o.csv["decision_worth_it"])
		}
		body := o.html[strings.Index(o.html, "<main>"):]
		if i, j := strings.Index(body, `<p class="decision`), strings.Index(body, `<div class="cards">`); i < 0 || i > j || strings.Count(body, template.HTMLEscapeString(d.Text)) != 1 {
			t.Errorf("%s: HTML does not lead with the verdict (once):\n%s", c.name, body[:min(len(body), 2000)])
		}
		if strings.Contains(s.Zdb, "Verdict") {
			t.Errorf("%s: the zdb -S text has the verdict", c.name)
		}
	}

	// A table the ARC cannot hold: not worth it, whatever it saves.
	s := decisionScan(t, p, 64<<20, copies)
	s.DDT.ARC.Verdict = ddtsize.VerdictNoFit
	if d := s.decide(); d.WorthIt || d.ARC != "does not fit" ||
		d.Text != "Verdict: not worth it on this machine: the table's 64 KiB does not fit in its ARC" {
		t.Errorf("no fit: %q (worth it %v)", d.Text, d.WorthIt)
	}
}

// Each saving is credited to its cause (issue 29, item 1): a sparse file
// with compression=off saves by its holes, not by compression; embedded
// records (item 2) are credited apart, and cost metadata: the summary's
// saving is less that metadata, never all the data.
func TestSavingsCredited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "sparse")
	// 1 MiB of random data at 64 MiB into a 256 MiB file: the rest holes.
	fh, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt(testkit.Rand(21, 1<<20), 64<<20); err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(256 << 20); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	p := testkit.Policy(t, zio.Off)
	s := decisionScan(t, p, 0, dir)
	s.EstimateSpace(p)
	d := s.Decision
	holes, dedup, by := int64(255<<20), int64(0), "holes 255 MiB (2040 holes)"
	if runtime.GOOS == "windows" {
		// There a file has holes only once marked sparse: this one's
		// 2040 records of zeros are data, stored with compression=off,
		// and dedup keeps one of them.
		holes, dedup, by = 0, 2039*128<<10, "holes 0 B (0 holes)"
	}
	if d == nil || d.HolesSaves != holes || d.CompressionSaves != 0 || d.EmbeddedSaves != 0 || d.DedupSaves != dedup {
		t.Fatalf("credits %+v, want holes %d, dedup %d, compression 0", d, holes, dedup)
	}
	o := render(t, s)
	if !strings.Contains(strings.Join(strings.Fields(o.text), " "), " by "+by+", embedded records 0 B (0 records), padding, copies and parity 0 B,") {
		t.Errorf("text does not credit the holes:\n%s", o.text)
	}
	// With compression=off what the blocks cost past the data is not
	// compression's (found by a new user: "compression -185 KiB" with
	// compression=off, for two 300,000-byte files' last records).
	pad := t.TempDir()
	testkit.Write(t, filepath.Join(pad, "f"), testkit.Rand(22, 300000))
	s = decisionScan(t, p, 0, pad)
	s.EstimateSpace(p)
	// 300,000 bytes in three 128K records: 93,216 bytes of padding.
	if o := strings.Join(strings.Fields(render(t, s).text), " "); !strings.Contains(o, ", padding, copies and parity -91.0 KiB, dedup 0 B") || strings.Contains(o, "compression -") {
		t.Errorf("compression=off: the padding is not named so:\n%s", o)
	}

	// Small files that lz4 squeezes into their block pointers: no data
	// block, but the saving is not all the data, their dnodes cost.
	emb := t.TempDir()
	var total uint64
	for i := range 200 {
		b := []byte(fmt.Sprintf("%d-%s", i, strings.Repeat("a", 100+i)))
		total += uint64(len(b))
		testkit.Write(t, filepath.Join(emb, fmt.Sprint("f", i)), b)
	}
	pl := testkit.Policy(t, zio.LZ4)
	s = decisionScan(t, pl, 0, emb)
	s.EstimateSpace(pl)
	if s.Counters.Embedded != 200 || s.Total.Referenced.DSize != 0 {
		t.Fatalf("embedded %d, DSIZE %d: want every record embedded", s.Counters.Embedded, s.Total.Referenced.DSize)
	}
	net, of, ok := s.SavedNet()
	if !ok || of != total || net >= int64(total) || net != int64(total)-int64(s.Space.Metadata.ASize) {
		t.Errorf("saved %d of %d (%v), want the %d bytes less the metadata %d", net, of, ok, total, s.Space.Metadata.ASize)
	}
	o = render(t, s)
	if strings.Contains(o.text, "(100.0%)") || !strings.Contains(o.text, "    embedded   200 records kept in block pointers take no data block") {
		t.Errorf("text claims all saved, or says nothing of embedded records:\n%s", o.text)
	}

	// Embedded records are credited the file data they hold, not their
	// LSIZE: a 6-byte file and two copies of it are credited 6 B each,
	// and so is the tail of a 4K+9-byte file at recordsize 4K (found by a new user: a
	// 6-byte file was credited 512 B beside a file that did not
	// compress, compression 512 B less).
	mix := t.TempDir()
	testkit.Write(t, filepath.Join(mix, "r"), testkit.Rand(22, 300000))
	for _, n := range []string{"a", "b", "c"} {
		testkit.Write(t, filepath.Join(mix, n), []byte("hello\n"))
	}
	testkit.Write(t, filepath.Join(mix, "t"), append(testkit.Rand(23, 4<<10), "last data"...))
	p4 := *pl
	p4.RecordSize = 4 << 10
	s = decisionScan(t, &p4, 0, mix)
	s.EstimateSpace(&p4)
	if d := s.Decision; d == nil || s.Counters.Embedded != 4 || d.EmbeddedSaves != 3*6+9 {
		t.Errorf("%d records embedded, credits %+v: want 4 records, embedded %d B", s.Counters.Embedded, d, 3*6+9)
	}
}

// The headline's lines fit TextWidth columns with the widest sizes (8
// characters: "1.50 GiB"), a table of billions of entries, the ARC verdict
// and the partial mark; so do the summary's lines with --bytes.
func TestHeadlineWidth(t *testing.T) {
	t.Parallel()
	p := testkit.Policy(t, zio.LZ4)
	wide := uint64(1<<30 + 1<<29 + 12345) // 1.50G
	for _, verdict := range []string{ddtsize.VerdictFits, ddtsize.VerdictTight, ddtsize.VerdictNoFit} {
		for _, partial := range []bool{false, true} {
			s := decisionScan(t, p, 64<<30, filepath.Join("..", "testdata", "sample"))
			s.EstimateSpace(p)
			s.Partial, s.Bytes = partial, true
			sp := s.Space
			sp.Used, sp.Alloc, sp.Other.Used, sp.Other.Alloc = wide, wide, wide, wide
			s.DDT.InCore, s.DDT.Entries, s.DDT.ARC.RAM, s.DDT.ARC.Verdict = wide, 12345678901, wide<<10, verdict
			s.Total.Referenced.DSize = wide * 4
			s.Total.Allocated.DSize = wide
			s.Decision = s.decide()
			head := s.Headline()
			if len(head) != 3 {
				t.Fatalf("headline of %d lines: %q", len(head), head)
			}
			o := render(t, s)
			text := strings.TrimSuffix(o.text, "\n")
			for i, l := range strings.Split(text, "\n") {
				if n := utf8.RuneCountInString(l); n > TextWidth && !strings.Contains(s.Zdb, l) {
					t.Errorf("%s, partial %v: line %d has %d columns: %q", verdict, partial, i+1, n, l)
				}
			}
		}
	}
}

// A saving far below nothing reads as times the data, not as a
// percentage of seven digits (found by a new user: 1638300.0% for a 3-byte
// file).
func TestSavedNothingTimesTheData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testkit.Write(t, filepath.Join(dir, "ok"), []byte("abc"))
	p := testkit.Policy(t, zio.LZ4)
	s := decisionScan(t, p, 0, dir)
	s.EstimateSpace(p)
	o := render(t, s)
	net, of, _ := s.SavedNet()
	want := fmt.Sprintf("more than the 3 B of file data (%.0f times the\n", float64(-net)/float64(of))
	if net >= -10*int64(of) || !strings.Contains(o.text, want) {
		t.Errorf("saved %d of %d; want %q in:\n%s", net, of, want, o.text)
	}
	// The CSV gives the text's figure too (a new user took saved_bytes,
	// before the metadata, for it).
	if o.csv["saved_net_bytes"] != fmt.Sprint(net) {
		t.Errorf("CSV saved_net_bytes %q, want %d", o.csv["saved_net_bytes"], net)
	}
}
