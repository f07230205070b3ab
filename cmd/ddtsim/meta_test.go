package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
)

// --version and version print the version, the commit, the Go version and
// platform, the zstd compiled in and the default release, and exit 0; the
// release is the one a scan without --release models (its JSON says).
func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, errs := runT("--version")
	if code != 0 || errs != "" {
		t.Fatalf("--version: exit %d, stderr %q", code, errs)
	}
	_, scanJSON, errs := runT("--json", "../../testdata/sample")
	var rep struct {
		Release string `json:"release"`
		DDTsim  struct {
			Version string `json:"version"`
			Go      string `json:"go"`
			Zstd    string `json:"zstd"`
		} `json:"ddtsim"`
	}
	if err := json.Unmarshal([]byte(scanJSON), &rep); err != nil || rep.Release == "" {
		t.Fatalf("scan --json: %v (%s)", err, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^ddtsim (\(devel\)|v\d+\.\d+\.\d+\S*)$`),
		regexp.MustCompile(`^commit:   ([0-9a-f]{40}(-dirty)?|unknown)$`),
		regexp.MustCompile(`^go:       ` + regexp.QuoteMeta(runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) + `$`),
		regexp.MustCompile(`^zstd:     ` + regexp.QuoteMeta(zstd.Implementation)),
		regexp.MustCompile(`^release:  OpenZFS ` + regexp.QuoteMeta(rep.Release) + ` modelled by default `),
	}
	if len(lines) != len(want) {
		t.Fatalf("--version printed %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i+1, lines[i], re)
		}
	}
	if exact := strings.Contains(lines[3], "approximate"); exact == zstd.Exact {
		t.Errorf("zstd line %q, but zstd.Exact is %v", lines[3], zstd.Exact)
	}
	// The JSON report names the binary that wrote it.
	if rep.DDTsim.Version == "" || rep.DDTsim.Go != runtime.Version() || rep.DDTsim.Zstd != zstd.Implementation {
		t.Errorf("scan --json: ddtsim %+v", rep.DDTsim)
	}
	for _, args := range [][]string{{"version"}, {"--version", "scan", "--zdb", "/nonexistent"}, {"sweep", "--version"}} {
		if code, got, errs := runT(args...); code != 0 || got != out {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want --version's", args, code, got, errs)
		}
	}
	code, js, _ := runT("version", "--json")
	var in map[string]any
	if err := json.Unmarshal([]byte(js), &in); code != 0 || err != nil || in["default_release"] != rep.Release || in["zstd_exact"] != zstd.Exact {
		t.Errorf("version --json: exit %d, %v: %s", code, err, js)
	}
}

// A release build sets the version and commit with -ldflags -X, and a build
// without cgo says its zstd is approximate: built as scripts/release.sh
// builds the non-Linux targets.
func TestVersionOfReleaseBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ddtsim")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command here to build the release binary with (under Wine, none)")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "ddtsim")
	pkg := "github.com/ddtsim/ddtsim/cmd/ddtsim/internal/buildinfo"
	cmd := exec.Command("go", "build", "-o", bin, "-trimpath",
		"-ldflags", "-X "+pkg+".version=v9.8.7-test -X "+pkg+".commit=0123456789abcdef0123456789abcdef01234567-dirty", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	prog, args := bin, []string{"--version"}
	if emu := os.Getenv("DDTSIM_TEST_EXEC"); emu != "" {
		prog, args = emu, append([]string{bin}, args...)
	}
	out, err := exec.Command(prog, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ddtsim v9.8.7-test\n",
		"\ncommit:   0123456789abcdef0123456789abcdef01234567-dirty\n",
		"\nzstd:     klauspost/compress (pure Go, approximate); zstd figures are marked approximate (built without cgo)\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version of a release build without cgo:\n%s\nlacks %q", out, want)
		}
	}
}

// ddtsim help [command] prints what --help prints there, and exits 0 (it
// took help for a path to scan); a command it does not know is a usage
// error naming the commands.
func TestHelpCommand(t *testing.T) {
	t.Parallel()
	_, rootHelp, _ := runT("--help")
	if code, out, errs := runT("help"); code != 0 || out != rootHelp || errs != "" {
		t.Errorf("help: exit %d, stderr %q, stdout same as --help: %v", code, errs, out == rootHelp)
	}
	for _, name := range commandNames {
		_, want, _ := runT(name, "--help")
		if !strings.HasPrefix(want, "Usage: ddtsim "+name) {
			t.Fatalf("%s --help: %q", name, want)
		}
		if code, out, errs := runT("help", name); code != 0 || out != want || errs != "" {
			t.Errorf("help %s: exit %d, stderr %q, stdout same as %s --help: %v", name, code, errs, name, out == want)
		}
	}
	code, _, errs := runT("help", "scna")
	if code != exitUsage || !strings.Contains(errs, `help: no command "scna" (commands: scan, parse,`) {
		t.Errorf("help scna: exit %d, stderr %q", code, errs)
	}
	// A command has no subcommands: not an empty list (found by a new user).
	if code, _, errs := runT("help", "scan", "sweep"); code != exitUsage || errs != "ddtsim: help: scan has no subcommands: ddtsim help scan\n" {
		t.Errorf("help scan sweep: exit %d, stderr %q", code, errs)
	}
}

// A directory named help stays scannable as ./help or scan help.
func TestPathNamedHelp(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll("help", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("help", "f"), bytes.Repeat([]byte("ddtsim "), 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--zdb", "./help"}, {"scan", "--zdb", "help"}} {
		code, out, errs := runT(args...)
		if code != 0 || !strings.Contains(out, "Simulated DDT histogram") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// Every shell's completion script names every command and flag, and is
// valid in its shell (bash -n, zsh -n, fish -n where installed); the bash
// and fish scripts complete commands, enum values and negated flags (run
// in the shell).
func TestCompletion(t *testing.T) {
	t.Parallel()
	scripts := map[string]string{}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, errs := runT("completion", shell)
		if code != 0 || errs != "" {
			t.Fatalf("completion %s: exit %d, stderr %q", shell, code, errs)
		}
		for _, w := range append(commandNames, "volblocksize", "no-cache", "zdb-output", "histogram", "sort") {
			if !regexp.MustCompile(`(^|[ '|(])(--|-l )?` + w + `\b`).MatchString(out) {
				t.Errorf("completion %s lacks %s", shell, w)
			}
		}
		scripts[shell] = out
		path := filepath.Join(t.TempDir(), "ddtsim."+shell)
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("%s not installed: its script is not checked", shell)
			continue
		}
		if out, err := exec.Command(shell, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, out)
		}
	}
	if code, _, errs := runT("completion", "tcsh"); code != exitUsage || !strings.Contains(errs, `"bash","zsh","fish"`) {
		t.Errorf("completion tcsh: exit %d, %q", code, errs)
	}
	cases := []struct{ line, want string }{
		{"ddtsim sw", "sweep"},
		{"ddtsim --spars", "--sparse"},
		{"ddtsim --sparse ", "always auto never"},
		{"ddtsim scan --by ", "dir ext file size"},
		{"ddtsim completion ", "bash fish zsh"},
		{"ddtsim help co", "compare completion"},
		{"ddtsim sweep --no-c", "--no-cache"},
		{"ddtsim sweep --sor", "--sort"},
		{"ddtsim sweep --sort ", "ram space"},
	}
	dir := t.TempDir() // no files to offer beside the words
	if _, err := exec.LookPath("bash"); err == nil {
		// COMP_WORDS as bash splits the line; the replies sorted.
		prog := scripts["bash"] + `
t() { COMP_WORDS=($1); [[ $1 == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _ddtsim; printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '; echo; }
`
		for _, c := range cases {
			prog += "t '" + c.line + "'\n"
		}
		checkCompletions(t, "bash", dir, []string{"-c", prog}, cases)
	}
	if _, err := exec.LookPath("fish"); err == nil {
		prog := ""
		for _, c := range cases {
			prog += "echo (complete -C'" + c.line + "' | cut -f1 | sort)\n"
		}
		path := filepath.Join(t.TempDir(), "ddtsim.fish")
		if err := os.WriteFile(path, []byte(scripts["fish"]), 0o644); err != nil {
			t.Fatal(err)
		}
		checkCompletions(t, "fish", dir, []string{"--no-config", "-c", "source " + path + "\n" + prog}, cases)
	}
}

// checkCompletions runs shell with args in dir; each line it prints is the
// completions of one case.
func checkCompletions(t *testing.T, shell, dir string, args []string, cases []struct{ line, want string }) {
	t.Helper()
	cmd := exec.Command(shell, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", shell, err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(cases) {
		t.Fatalf("%s printed %d lines for %d cases:\n%s", shell, len(got), len(cases), out)
	}
	for i, c := range cases {
		if strings.TrimSpace(got[i]) != c.want {
			t.Errorf("%s: %q completes to %q, want %q", shell, c.line, strings.TrimSpace(got[i]), c.want)
		}
	}
}

// docs/ddtsim.1 is what ddtsim man prints now (regenerate it with
// go run ./cmd/ddtsim man > docs/ddtsim.1), and groff reads it without a
// warning where groff is installed.
func TestManPageCurrent(t *testing.T) {
	t.Parallel()
	code, page, errs := runT("man")
	if code != 0 || errs != "" {
		t.Fatalf("man: exit %d, stderr %q", code, errs)
	}
	for _, want := range append([]string{".TH DDTSIM 1 ", ".SH NAME\nddtsim \\- ", ".SH EXIT STATUS", `\fB\-\-no\-cache\fR`}, commandNames...) {
		if !strings.Contains(page, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
	checked, err := os.ReadFile("../../docs/ddtsim.1")
	if err != nil || string(checked) != page {
		t.Errorf("docs/ddtsim.1 is not current (%v): run go run ./cmd/ddtsim man > docs/ddtsim.1", err)
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Log("groff not installed: the page is not rendered")
		return
	}
	cmd := exec.Command("groff", "-man", "-ww", "-z", "-Tutf8")
	cmd.Stdin = strings.NewReader(page)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff: %v\n%s", err, out)
	}
}

// Each command's --bytes help names only the formats that command prints
// (found by a new user: merge's spoke of "the HTML page's", which merge
// cannot write).
func TestBytesHelpPerCommand(t *testing.T) {
	bytesHelp := regexp.MustCompile(`(?s)--bytes\s+(.*?)\n\s+-`)
	t.Parallel()
	for _, c := range []struct {
		cmd       string
		html, csv bool
	}{{"scan", true, true}, {"compare", true, true}, {"report", false, true}, {"merge", false, false}, {"resume", false, false}} {
		code, out, _ := runT(c.cmd, "--help")
		m := bytesHelp.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("%s --help: exit %d:\n%s", c.cmd, code, out)
		}
		help := strings.Join(strings.Fields(m[1]), " ")
		if strings.Contains(help, "HTML") != c.html || strings.Contains(help, "CSV") != c.csv || !strings.Contains(help, "JSON") {
			t.Errorf("%s --help: %q (HTML %v, CSV %v)", c.cmd, help, c.html, c.csv)
		}
	}
}

// TestZdbSaysZstdApproximate: --zdb prints zdb -S's text alone, so a build
// that approximates zstd says so on stderr; an exact one, and every other
// compression, says nothing (found by a new user: a build without cgo
// printed its zstd table with no word of it). CGO_ENABLED=0 go test
// checks the note, the default build its absence.
func TestZdbSaysZstdApproximate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), bytes.Repeat([]byte("ddtsim zstd "), 40000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, comp := range []string{"zstd", "zstd-fast-1", "lz4"} {
		code, out, errs := runT("-o", "compression="+comp, "--zdb", dir)
		if code != 0 || !strings.Contains(out, "Simulated DDT histogram") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", comp, code, out, errs)
		}
		want := !zstd.Exact && strings.HasPrefix(comp, "zstd")
		if got := strings.Contains(errs, "approximate"); got != want {
			t.Errorf("%s (exact zstd: %v): stderr %q; want a note of zstd approximated: %v", comp, zstd.Exact, errs, want)
		}
		if strings.Contains(out, "approximate") {
			t.Errorf("%s: the note is in zdb's text: %q", comp, out)
		}
	}
}

// TestCompareSaysZstdApproximate: compare in a build that approximates
// zstd says so in its notes (found by a new user: it blamed the ashift
// for the difference); the exact build says nothing of it.
func TestCompareSaysZstdApproximate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), bytes.Repeat([]byte("ddtsim compare zstd "), 30000), 0o644); err != nil {
		t.Fatal(err)
	}
	code, zdbText, errs := runT("-o", "compression=zstd", "--zdb", dir)
	if code != 0 {
		t.Fatalf("--zdb: exit %d, %s", code, errs)
	}
	actual := filepath.Join(t.TempDir(), "zdb-S.txt")
	if err := os.WriteFile(actual, []byte(zdbText), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runT("compare", "--zdb-output", actual, "-o", "compression=zstd", dir)
	if code != 0 {
		t.Fatalf("compare with its own table: exit %d\n%s%s", code, out, errs)
	}
	if got := strings.Contains(out, "zstd is approximated in this build"); got == zstd.Exact {
		t.Errorf("exact zstd %v, a note of approximation %v:\n%s", zstd.Exact, got, out)
	}
}
