package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// A build without cgo approximates zstd: its text, JSON, CSV and HTML say
// so wherever the compression is zstd, and nowhere else; a build with cgo
// (exact) marks nothing and says "exact" in JSON and CSV. The test runs in
// both builds (CGO_ENABLED=0 go test ./report/ checks the marks).
// approxMark is the mark of an approximate zstd figure in text or HTML.
var approxMark = regexp.MustCompile(`approximate:?\s+zstd is approximated\s+in\s+this\s+build`)

func TestZstdApproximateMark(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), bytes.Repeat(testkit.Rand(3, 1<<10), 300), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		comp  zio.Compression
		level int
	}{{zio.Zstd, 3}, {zio.Zstd, -1}, {zio.LZ4, 0}, {zio.Gzip1 + 5, 0}, {zio.Off, 0}} {
		p := testkit.Policy(t, tc.comp)
		p.Level = tc.level
		res, err := analyzer.Run(context.Background(), []string{dir}, analyzer.Options{Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(p, 12, model.SparseAuto, []string{dir}, res)
		if err != nil {
			t.Fatal(err)
		}
		name := zio.CompressionName(tc.comp, tc.level)
		approx := tc.comp == zio.Zstd && !zstd.Exact
		var text, js, csv, html bytes.Buffer
		if err := s.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Zstd *string `json:"zstd"`
		}
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		wantJSON := ""
		switch {
		case approx:
			wantJSON = "approximate"
		case tc.comp == zio.Zstd:
			wantJSON = "exact"
		}
		if got := ""; doc.Zstd != nil {
			got = *doc.Zstd
			if got != wantJSON || wantJSON == "" {
				t.Errorf("%s: JSON zstd %q, want %q", name, got, wantJSON)
			}
		} else if wantJSON != "" {
			t.Errorf("%s: JSON has no zstd field, want %q", name, wantJSON)
		}
		if got := strings.Contains(csv.String(), "\nzstd,"+wantJSON+"\n"); got != (wantJSON != "") {
			t.Errorf("%s: CSV zstd row %v, want %q:\n%s", name, got, wantJSON, csv.String())
		}
		// The headline says so too, as its last line (text and HTML).
		if head := s.Headline(); (head[len(head)-1] == ApproximateHeadline) != approx || !strings.Contains(text.String(), ApproximateHeadline+"\n\n") != !approx {
			t.Errorf("%s: headline %q, approximate %v", name, head, approx)
		}
		for format, out := range map[string]string{"text": text.String(), "HTML": html.String()} {
			// The text's APPROXIMATE item, the HTML's note: the label, then
			// ZstdNote (the text wraps it at TextWidth).
			if got := approxMark.MatchString(strings.ToLower(out)); got != approx {
				t.Errorf("%s: %s marks zstd approximate: %v, want %v", name, format, got, approx)
			}
		}
	}
}
