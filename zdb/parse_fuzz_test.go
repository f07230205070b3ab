package zdb_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// FuzzParse feeds the parser arbitrary text: it must not panic, every
// diagnostic must point at a line of the text, every number it read must
// be a well-formed interval, the reports must be writable (JSON holds no
// NaN or infinity), and comparing with it must give an outcome or
// ErrUnusable.
//
//	go test ./zdb -run '^$' -fuzz '^FuzzParse$' -fuzztime 30s
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(zdb.ZdbOutputs(), "*.txt"))
	for _, name := range []string{"lz4-128k-a12-dedup", "v21-lz4-128k-a12-dedup", "off-128k-a12-never-dedup"} {
		for _, file := range []string{"zdb-S.txt", "zdb-DD.txt", "zpool-status-D.txt"} {
			seeds = append(seeds, filepath.Join(golden.Root(), "cases", name, file))
		}
	}
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(zdb.WorkedZdbS)
	f.Add(strings.Replace(zdb.WorkedZdbS, "copies = 1.00, dedup", "copies = 1.00,\ndedup", 1))
	f.Add("DDT-log-sha256-0: flags=0x01 [FLUSHING CHECKPOINT]; obj=1; len=0x10; txg=9; entries=2\n    checkpoint: 1:2:3:4:5\n")
	f.Add(" dedup: DDT entries 7, size 2.27K on disk, 1K in core, 1K cached (99.50%)\n")
	f.Add("     1    16.0E    16.0E   1.00K   2.00K   1024K   99999999999999999999 1 1\n Total 1 1 1 1 1 1 1 1\n")
	f.Add("dedup = 1.00, compress = 1.00,\n")
	f.Fuzz(func(t *testing.T, text string) {
		p := zdb.ParseString(text)
		if q, err := zdb.Parse(strings.NewReader(text)); err == nil && strings.TrimPrefix(text, "\ufeff") != "\n" {
			// Parse streams what ParseString splits: the same result (but
			// for a lone line break, one empty line to Parse, none to
			// ParseString, as before).
			var a, b strings.Builder
			p.WriteJSON(&a)
			q.WriteJSON(&b)
			if a.String() != b.String() {
				t.Fatalf("Parse and ParseString differ:\n%s\n%s", b.String(), a.String())
			}
		}
		for _, d := range p.Diags {
			if d.Line < 0 || d.Line > p.Lines {
				t.Fatalf("diagnostic at line %d of %d: %s", d.Line, p.Lines, d)
			}
		}
		for _, tb := range p.Tables {
			rows := append([]zdb.Row(nil), tb.Rows...)
			if tb.Total != nil {
				rows = append(rows, *tb.Total)
			}
			last := -1
			for i := range rows {
				r := &rows[i]
				if r.Bucket >= 0 {
					if r.Bucket > 63 || r.Bucket <= last {
						t.Fatalf("bucket %d after %d", r.Bucket, last)
					}
					last = r.Bucket
				}
				for _, v := range r.Cells() {
					checkValue(t, *v)
				}
			}
		}
		for _, s := range p.Summaries {
			if !s.NoEntries {
				checkValue(t, s.OnDisk.Printed)
				checkValue(t, s.InCore.Printed)
			}
		}
		if err := p.WriteText(io.Discard, "fuzz"); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteJSON(io.Discard); err != nil {
			t.Fatal(err)
		}
		h := &ddt.Histogram{}
		h.Add(3, 131072, 65536, 69632)
		c, err := compare.Compare(h, p, compare.Options{Tolerance: 0.01})
		switch {
		case err != nil && !errors.Is(err, compare.ErrUnusable):
			t.Fatalf("compare: %v", err)
		case err != nil:
		case c.Outcome != compare.Equal && c.Outcome != compare.Different && c.Outcome != compare.CannotTell:
			t.Fatalf("compare outcome %v", c.Outcome)
		default:
			if err := c.WriteText(io.Discard); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteJSON(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func checkValue(t *testing.T, v nicenum.Value) {
	t.Helper()
	if v.Lo > v.Hi || v.Except != 0 && (v.Except <= v.Lo || v.Except >= v.Hi) {
		t.Fatalf("bad interval %+v", v)
	}
	if c := v.Text[len(v.Text)-1]; c >= 'E' && c <= 'T' && c != 'B' {
		if nicenum.Format(v.Lo, false) != v.Text || nicenum.Format(v.Hi, false) != v.Text {
			t.Fatalf("%q: ends %d, %d print as %q, %q", v.Text, v.Lo, v.Hi, nicenum.Format(v.Lo, false), nicenum.Format(v.Hi, false))
		}
	}
}
