package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/space"
)

// --csv and --html show the JSON's space figures (what zfs list and zpool
// list will show) without dedup and with it, whatever dedup is set to
// (verify counts as on).
func TestSpaceCSVAndHTMLMatchJSON(t *testing.T) {
	t.Parallel()
	for _, dedup := range []string{"off", "on", "verify"} {
		args := []string{"-o", "dedup=" + dedup, sampleDir}
		code, js, errs := runT(append([]string{"--json"}, args...)...)
		if code != 0 {
			t.Fatalf("dedup=%s --json: exit %d: %s", dedup, code, errs)
		}
		var doc report.Report
		if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Space == nil || doc.Space.Other == nil {
			t.Fatalf("dedup=%s JSON: %v, space %+v", dedup, err, doc.Space)
		}
		off, on := doc.Space.Figures, *doc.Space.Other
		if dedup != "off" {
			off, on = on, off
		}
		code, out, errs := runT(append([]string{"--csv"}, args...)...)
		if code != 0 {
			t.Fatalf("dedup=%s --csv: exit %d: %s", dedup, code, errs)
		}
		fields := map[string]string{}
		for _, r := range csvSections(t, out)[1][1:] {
			fields[r[0]] = r[1]
		}
		for _, c := range []struct {
			suffix string
			f      space.Figures
		}{{"", off}, {"_dedup", on}} {
			for k, want := range map[string]uint64{"zfs_used": c.f.Used, "zfs_usedds": c.f.UsedDS, "zfs_usedchild": c.f.UsedChild,
				"zfs_logicalused": c.f.LUsed, "zfs_logicalreferenced": c.f.LRefer, "zpool_alloc": c.f.Alloc} {
				if u64(t, fields[k+c.suffix]) != want {
					t.Errorf("dedup=%s: %s%s = %q, JSON %d", dedup, k, c.suffix, fields[k+c.suffix], want)
				}
			}
			for k, want := range map[string]float64{"zfs_compressratio": c.f.CompressRatio, "zpool_dedupratio": c.f.Dedup} {
				if v, err := strconv.ParseFloat(fields[k+c.suffix], 64); err != nil || v != want {
					t.Errorf("dedup=%s: %s%s = %q, JSON %v", dedup, k, c.suffix, fields[k+c.suffix], want)
				}
			}
		}
		m := doc.Space.Metadata
		for k, want := range map[string]uint64{"metadata_blocks": m.Count, "metadata_embedded": m.Embedded, "metadata_lsize": m.LSize,
			"metadata_psize": m.PSize, "metadata_asize": m.ASize, "metadata_indirect_asize": doc.Counters.Indirect.ASize} {
			if u64(t, fields[k]) != want {
				t.Errorf("dedup=%s: %s = %q, JSON %d", dedup, k, fields[k], want)
			}
		}

		path := filepath.Join(t.TempDir(), "r.html")
		if code, _, errs := runT(append([]string{"--html", path}, args...)...); code != 0 {
			t.Fatalf("dedup=%s --html: exit %d: %s", dedup, code, errs)
		}
		page, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b := func(v uint64) string { return fmt.Sprintf(`<td title="%d bytes">%s</td>`, v, nicenum.Format(v, true)) }
		for _, want := range []string{
			"<h2>What zfs list and zpool list will show</h2>",
			"<td>USED (zfs list)</td>" + b(off.Used) + b(on.Used),
			"<td>ALLOC (zpool list)</td>" + b(off.Alloc) + b(on.Alloc),
			fmt.Sprintf("<td>DEDUP (zpool list)</td><td>%.2fx</td><td>%.2fx</td>", off.Dedup, on.Dedup),
			"Dedup never lowers USED",
		} {
			if !strings.Contains(string(page), want) {
				t.Errorf("dedup=%s: the page lacks %s", dedup, want)
			}
		}
	}
}

// TestZvolSpaceVolumesOnly: with --zvol the prediction is of the volumes
// alone: empty files make no volume (zfs create -V refuses a size of 0)
// and the directories scanned have no ZAP on the pool (found by a new
// user: 1,000 empty files gave USED 55M, and a directory of 5,000 files
// 280K of directories). Two files with and without empty ones and
// subdirectories beside them: the same figures.
func TestZvolSpaceVolumesOnly(t *testing.T) {
	t.Parallel()
	plain, busy := t.TempDir(), t.TempDir()
	for _, d := range []string{plain, busy} {
		for i, n := range []int{300 << 10, 70 << 10} {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("v%d", i)), []byte(strings.Repeat(fmt.Sprintf("block %d ", i), n/8)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(busy, fmt.Sprintf("empty-with-a-long-name-%02d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(busy, fmt.Sprintf("dir%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	figures := func(dir string) space.Figures {
		t.Helper()
		code, js, errs := runT("--json", "--zvol", "-o", "compression=lz4", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var doc report.Report
		if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Space == nil {
			t.Fatalf("JSON: %v, space %+v", err, doc.Space)
		}
		return doc.Space.Figures
	}
	p, b := figures(plain), figures(busy)
	if p != b || p.Directories != (space.Blocks{}) || p.Indirect.Count == 0 {
		t.Errorf("volumes of two files: %+v\nwith 40 empty files and 40 directories beside them: %+v", p, b)
	}
}
