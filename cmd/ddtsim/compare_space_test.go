package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ddtsim compare --zdb-output FILE where FILE holds what zfs list -p and
// zpool list -v -p printed for a golden pool (lz4-raidz1x4-a12): exit 0
// and the figures printed; exit 1 with ALLOC 5% larger, naming ALLOC (in
// text and JSON); a tighter --space-tolerance than the model's error
// makes the real text differ; a file of junk is unusable (exit 2), and
// the message names the tables compare reads.
func TestCompareSpaceLists(t *testing.T) {
	t.Parallel()
	c, args := goldenCompareCase(t, "lz4-raidz1x4-a12")
	inputs := goldenInputs(t)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	zfs, zpool := read("zfs-list-space.txt"), read("zpool-list-vp.txt")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	compare := func(file string, extra ...string) (int, string, string) {
		a := append([]string{"compare", "--zdb-output", file}, args...)
		return runT(append(append(a, extra...), inputs...)...)
	}

	lists := write("lists.txt", "$ zfs list -p -o space,logicalused,logicalreferenced,compressratio,refcompressratio tank\n"+zfs+
		"$ zpool list -v -p tank\n"+zpool)
	code, out, errs := compare(lists)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errs)
	}
	for _, s := range []string{
		"actual:    " + lists + ": zfs list (tank, line 3), zpool list (tank, line 6)\n",
		"zfs list USED      tank ", "zfs list USEDDS    tank ", "zfs list LUSED     tank ", "zfs list LREFER    tank ",
		"zfs list RATIO     tank ", "zpool list ALLOC   tank ", "  61882368 ", "zpool list DEDUP   tank ",
		"\nEQUAL within 1%: all 5 zfs list and 2 zpool list figures\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "Note:") || strings.Contains(out, "refcnt") {
		t.Errorf("notes or a histogram:\n%s", out)
	}

	// The zdb -S text and the tables in one file: both compared.
	both := write("both.txt", read("zdb-S.txt")+zfs+zpool)
	if code, out, errs := compare(both); code != 0 || !strings.Contains(out, "and the 4 ratios; and all 5 zfs list and 2 zpool list figures within 1%") || !strings.Contains(out, "refcnt") {
		t.Errorf("zdb -S + lists: exit %d\n%s\n%s", code, out, errs)
	}

	// ALLOC 5% larger (61882368 → 64976486).
	doctored := write("doctored.txt", zfs+strings.Replace(zpool, " 61882368 ", " 64976486 ", 1))
	code, out, errs = compare(doctored)
	if code != 1 || !strings.Contains(out, "DIFFERENT: 1 of 7 figures differ by more than 1%") ||
		!strings.Contains(out, "  zpool list ALLOC (line 4, tank): predicted ") || !strings.Contains(out, "actual 64976486 (-4.") {
		t.Errorf("doctored: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	code, out, _ = compare(doctored, "--json")
	var js struct {
		Exit  int `json:"exit"`
		Space []struct {
			Column string `json:"column"`
			Equal  bool   `json:"equal"`
		} `json:"space"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || code != 1 || js.Exit != 1 || len(js.Space) != 7 || js.Space[5].Column != "ALLOC" || js.Space[5].Equal || !js.Space[0].Equal {
		t.Errorf("--json: exit %d, %v, %+v", code, err, js)
	}

	// The model's error on this pool is above 0.01%: a tighter tolerance
	// makes the real figures differ.
	if code, out, _ := compare(lists, "--space-tolerance", "0.0001"); code != 1 || !strings.Contains(out, "differ by more than 0.01%") {
		t.Errorf("--space-tolerance 0.0001: exit %d\n%s", code, out)
	}
	if code, _, errs := compare(lists, "--space-tolerance=-1"); code != 2 || !strings.Contains(errs, "--space-tolerance -1: must be a fraction") {
		t.Errorf("--space-tolerance -1: exit %d, %s", code, errs)
	}

	junk := write("junk.txt", "total 0\nNAME\nnothing here\n")
	code, out, errs = compare(junk)
	if code != 2 || out != "" || !strings.Contains(errs, "no DDT histogram table found, nor a zfs list or zpool list table") {
		t.Errorf("junk: exit %d, want 2\n%s\n%s", code, out, errs)
	}
}
