package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// modulePath is this module's path, as go.mod names it.
const modulePath = "github.com/ddtsim/ddtsim"

// listPackages returns every package of the module (go list ./...) with
// the packages of the module its non-test files import, both as paths
// relative to the module root.
func listPackages(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../../...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		name := strings.TrimPrefix(f[0], modulePath+"/")
		var imps []string
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				imps = append(imps, rel)
			}
		}
		slices.Sort(imps)
		pkgs[name] = imps
	}
	return pkgs
}

// layoutDocPath is the page holding the layout table, relative to the
// repository's root.
const layoutDocPath = "docs/development.md"

// layoutRow is one row of the layout table in docs/development.md.
type layoutRow struct {
	pkg     string
	imports []string
}

// docLayout reads the rows of the table under docs/development.md's "##
// Layout of the code": | `package` | what it owns | `imports` ... |.
func docLayout(t *testing.T) []layoutRow {
	t.Helper()
	section, _, _ := strings.Cut(docAfter(t, layoutDocPath, "## Layout of the code\n"), "\n## ")
	var rows []layoutRow
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		r := layoutRow{pkg: strings.Trim(strings.TrimSpace(cells[1]), "`")}
		for _, imp := range strings.Split(cells[3], ",") {
			if imp = strings.Trim(strings.TrimSpace(imp), "`"); imp != "" && imp != "—" {
				r.imports = append(r.imports, imp)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// TestDocsLayout keeps docs/development.md's layout table true to the code: it lists
// every package of the module (go list) once, each with exactly the
// packages of the module it imports, and in an order where every package
// imports only packages listed below it (the pipeline reads from the
// command at the top down to the model of ZFS at the bottom; no import
// runs back up). On failure it prints the rows with their imports as the
// code has them.
func TestDocsLayout(t *testing.T) {
	pkgs := listPackages(t)
	rows := docLayout(t)
	if len(rows) == 0 {
		t.Fatal(layoutDocPath + "'s layout section has no table rows")
	}
	index := map[string]int{}
	for i, r := range rows {
		if _, dup := index[r.pkg]; dup {
			t.Errorf("%s: layout lists %s twice", layoutDocPath, r.pkg)
		}
		index[r.pkg] = i
	}
	var want strings.Builder
	for _, r := range rows {
		imps, ok := pkgs[r.pkg]
		if !ok {
			t.Errorf("%s: layout lists %s, which is not a package of the module", layoutDocPath, r.pkg)
			continue
		}
		if !slices.Equal(imps, r.imports) {
			t.Errorf("%s: layout: %s imports %v, the table says %v", layoutDocPath, r.pkg, imps, r.imports)
		}
		for _, imp := range imps {
			if j, ok := index[imp]; ok && j <= index[r.pkg] {
				t.Errorf("%s: layout: %s imports %s, which is listed above it", layoutDocPath, r.pkg, imp)
			}
		}
		fmt.Fprintf(&want, "| `%s` | … | %s |\n", r.pkg, importsCell(imps))
	}
	for p := range pkgs {
		if _, ok := index[p]; !ok {
			t.Errorf("%s: layout does not list package %s (imports %s)", layoutDocPath, p, importsCell(pkgs[p]))
		}
	}
	// internal/ holds the tests' helpers only: the program itself (all
	// but them and the benchmark tools under scripts/) never imports them.
	for p, imps := range pkgs {
		for _, imp := range imps {
			if strings.HasPrefix(imp, "internal/") && !strings.HasPrefix(p, "internal/") && !strings.HasPrefix(p, "scripts/") {
				t.Errorf("%s imports the test helper %s", p, imp)
			}
		}
	}
	if t.Failed() {
		t.Logf("the rows as the code has them:\n%s", want.String())
	}
}

// importsCell is the imports column of a row.
func importsCell(imps []string) string {
	if len(imps) == 0 {
		return "—"
	}
	q := make([]string, len(imps))
	for i, imp := range imps {
		q[i] = "`" + imp + "`"
	}
	return strings.Join(q, ", ")
}
