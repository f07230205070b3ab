package scan_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"html"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/breakdown"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// The breakdown's groups are listed largest first by logical bytes, the
// same in text, JSON, CSV and HTML; with Top the others are folded into
// one "(N others)" row of their sums, and the rows still add up exactly
// to the total.
func TestBreakdownLargestFirstAndTop(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"dir", "ext", "size", "file"} {
		for _, fold := range []bool{false, true} {
			top := 0
			if fold {
				top = map[string]int{"dir": 2, "ext": 2, "size": 1}[by] // two groups folded
			}
			res, err := scan.Run(context.Background(), model.Settings{Release: "2.3.2", Dedup: "on"}, []string{"../testdata/sample"}, scan.Options{By: by, Top: top})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := res.Report(0)
			if err != nil {
				t.Fatal(err)
			}
			all := res.Breakdown.Groups // as accumulated: every group
			if len(all) != top+2 && top > 0 || len(all) < 3 {
				t.Fatalf("--by %s: %d groups, the test needs more", by, len(all))
			}
			b := rep.Breakdown
			want := len(all)
			if top > 0 {
				want = top + 1
			}
			if len(b.Groups) != want {
				t.Fatalf("--by %s --top %d: %d rows, want %d", by, top, len(b.Groups), want)
			}
			listed := b.Groups
			if top > 0 {
				last := b.Groups[top]
				if wantName := "(" + itoa(len(all)-top) + " others)"; last.Name != wantName {
					t.Errorf("--by %s --top %d: last row %q, want %q", by, top, last.Name, wantName)
				}
				listed = b.Groups[:top]
			}
			for i := 1; i < len(listed); i++ {
				if listed[i-1].LogicalBytes < listed[i].LogicalBytes {
					t.Errorf("--by %s: %q (%d bytes) before %q (%d)", by, listed[i-1].Name, listed[i-1].LogicalBytes, listed[i].Name, listed[i].LogicalBytes)
				}
			}
			if top > 0 && b.Groups[top].LogicalBytes > listed[top-1].LogicalBytes*uint64(len(all)-top) {
				t.Errorf("--by %s: the folded groups are not the smallest", by)
			}
			if sum := breakdown.SumGroups(b.Groups); sum != b.Sum {
				t.Errorf("--by %s --top %d: rows add up to %+v, total %+v", by, top, sum, b.Sum)
			}
			allSum := breakdown.SumGroups(all)
			if allSum != b.Sum {
				t.Errorf("--by %s --top %d: total %+v, every group's sum %+v", by, top, b.Sum, allSum)
			}
			names := make([]string, len(b.Groups))
			for i, g := range b.Groups {
				names[i] = g.Name
			}
			// JSON and CSV list the same rows in the same order.
			var js strings.Builder
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Breakdown []struct {
					Name string `json:"name"`
				} `json:"breakdown"`
			}
			json.Unmarshal([]byte(js.String()), &doc)
			var jsNames []string
			for _, g := range doc.Breakdown {
				jsNames = append(jsNames, g.Name)
			}
			var cs strings.Builder
			if err := rep.WriteCSV(&cs); err != nil {
				t.Fatal(err)
			}
			tables := strings.Split(cs.String(), "\n\n")
			rows, err := csv.NewReader(strings.NewReader(tables[len(tables)-1])).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var csvNames []string
			for _, r := range rows[1 : len(rows)-1] {
				csvNames = append(csvNames, r[0])
			}
			if strings.Join(jsNames, "|") != strings.Join(names, "|") || strings.Join(csvNames, "|") != strings.Join(names, "|") {
				t.Errorf("--by %s --top %d: rows %q; JSON %q; CSV %q", by, top, names, jsNames, csvNames)
			}
			// The text table, and the HTML table, in the same order.
			var tx, ht strings.Builder
			rep.WriteText(&tx)
			rep.WriteHTML(&ht)
			text, _ := strings.CutPrefix(tx.String()[strings.Index(tx.String(), "\nBreakdown by"):], "\n")
			pos, hpos := 0, 0
			for _, n := range names {
				i := strings.Index(text[pos:], "\n"+n+" ")
				h := strings.Index(ht.String()[hpos:], "<td>"+html.EscapeString(n)+"</td>")
				if i < 0 || h < 0 {
					t.Errorf("--by %s --top %d: text or HTML lists %q out of order", by, top, n)
					break
				}
				pos += i + 1
				hpos += h + 1
			}
			res.Close()
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// --top without --by, or below 0, is refused before anything is scanned.
func TestTopUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		opts scan.Options
		want string
	}{
		{scan.Options{Top: 3}, "--top 3: needs --by: it keeps the largest groups of the breakdown"},
		{scan.Options{By: "ext", Top: -1}, "--top -1: invalid"},
	} {
		_, err := scan.Run(context.Background(), model.Settings{}, []string{"../testdata/sample"}, c.opts)
		var ue *scan.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error %q", c.opts, err, c.want)
		}
	}
}
