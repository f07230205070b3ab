package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
)

// outputTree makes victim/ (a file data.txt in it), samplelink -> victim,
// and an empty directory other/, in a fresh directory, and returns it.
func outputTree(t *testing.T) string {
	t.Helper()
	unixOnly(t, noSymlinks)
	top := t.TempDir()
	for _, d := range []string{"victim", "other"} {
		if err := os.Mkdir(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "victim", "data.txt"), bytes.Repeat([]byte("precious data\n"), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("victim", filepath.Join(top, "samplelink")); err != nil {
		t.Fatal(err)
	}
	return top
}

// Findings 1 and 3: --html and --save inside a scanned path are refused
// before the scan, comparing resolved paths, so that a symlink in the
// output's name or in the path scanned does not hide it; nothing is
// written.
func TestOutputInsideScannedPathRefused(t *testing.T) {
	top := outputTree(t)
	t.Chdir(top)
	if err := os.Symlink(filepath.Join(top, "victim", "z.ddts"), filepath.Join(top, "other", "l.ddts")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("victim/data.txt")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--html", "victim/data.txt", "victim"}, "--html victim/data.txt: lies inside victim, which is scanned: write it elsewhere"},
		{[]string{"--html", "victim/new.html", "victim"}, "--html victim/new.html: lies inside victim, which is scanned"},
		{[]string{"--html", "victim", "victim"}, "lies inside victim, which is scanned"},
		{[]string{"--html", "samplelink/r.html", "victim"}, "--html samplelink/r.html (" + filepath.Join(top, "victim", "r.html") + "): lies inside victim, which is scanned"},
		{[]string{"--html", "victim/r.html", "samplelink"}, "lies inside samplelink, which is scanned"},
		{[]string{"--save", "samplelink/x.ddts", "victim"}, "--save samplelink/x.ddts (" + filepath.Join(top, "victim", "x.ddts") + "): lies inside victim, which is scanned: save it elsewhere"},
		{[]string{"--save", "victim/y.ddts", "samplelink"}, "--save victim/y.ddts: lies inside samplelink, which is scanned: save it elsewhere"},
		{[]string{"--save", "other/l.ddts", "victim"}, "lies inside victim, which is scanned: save it elsewhere"},
		{[]string{"--save", "./victim/../victim/d/y.ddts", top + "/victim/"}, "lies inside " + top + "/victim/, which is scanned"},
		{[]string{"--html", "victim/data.txt", "victim/data.txt"}, "lies inside victim/data.txt, which is scanned"},
	} {
		code, out, errs := runT(c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want exit 2 saying %q", c.args, code, len(out), errs, c.want)
		}
	}
	if now, _ := os.ReadFile("victim/data.txt"); !bytes.Equal(now, data) {
		t.Errorf("victim/data.txt was changed")
	}
	if ents, _ := os.ReadDir("victim"); len(ents) != 1 {
		t.Errorf("files were written into the scanned directory: %d entries", len(ents))
	}
	// Outside the paths scanned: written.
	if code, _, errs := runT("--html", "other/r.html", "--save", "other/s.ddts", "samplelink"); code != 0 {
		t.Errorf("outputs outside: exit %d, %s", code, errs)
	}
	if code, _, errs := runT("--html", "other/r.html", "--save", "other/r.html", "victim"); code != exitUsage || !strings.Contains(errs, "name the same file") {
		t.Errorf("--html and --save the same file: exit %d, %s", code, errs)
	}
}

// With -x, an output on another file system than the path scanned is not
// reached by the scan, and is accepted.
func TestCheckOutsideOtherFileSystem(t *testing.T) {
	t.Parallel()
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() || testkit.Stat(t, "/", false).Dev == testkit.Stat(t, "/dev/shm", false).Dev {
		t.Skip("no /dev/shm on a file system of its own")
	}
	if err := scan.CheckOutside("--tmpdir", "/dev/shm", true, []string{"/"}, false); err == nil || !strings.Contains(err.Error(), "lies inside /, which is scanned") {
		t.Errorf("without -x: %v", err)
	}
	if err := scan.CheckOutside("--tmpdir", "/dev/shm", true, []string{"/"}, true); err != nil {
		t.Errorf("with -x: %v", err)
	}
	if err := scan.CheckOutside("--html", "/dev/shm/no/such/r.html", false, []string{"/"}, true); err != nil {
		t.Errorf("with -x, a file not created yet: %v", err)
	}
}

// Finding 2: --tmpdir (or $TMPDIR) inside a path scanned is refused, so
// that the scan does not read its own spill runs.
func TestTmpdirInsideScannedPathRefused(t *testing.T) {
	top := outputTree(t)
	spill := filepath.Join(top, "victim", "spill")
	if err := os.Mkdir(spill, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--mem", "1G", "--tmpdir", spill, filepath.Join(top, "victim")}, "",
			"--tmpdir " + spill + ": lies inside " + filepath.Join(top, "victim") + ", which is scanned: the scan would read its own spill runs; choose a directory elsewhere"},
		{[]string{"--mem", "1G", "--tmpdir", filepath.Join(top, "samplelink", "spill"), filepath.Join(top, "victim")}, "", "which is scanned: the scan would read its own spill runs"},
		{[]string{"--mem", "1G", "--tmpdir", spill, filepath.Join(top, "samplelink")}, "", "which is scanned: the scan would read its own spill runs"},
	} {
		if c.env != "" {
			t.Setenv("TMPDIR", c.env)
		}
		code, out, errs := runT(c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
		if ents, _ := os.ReadDir(spill); len(ents) != 0 {
			t.Errorf("%q: a spill directory was created in %s", c.args, spill)
		}
	}
	t.Setenv("TMPDIR", filepath.Join(top, "other"))
	if code, _, errs := runT("--mem", "1G", filepath.Join(top, "victim")); code != 0 {
		t.Errorf("$TMPDIR outside: exit %d: %s", code, errs)
	}
}

// The default spill directory ($TMPDIR) below a scanned path (ddtsim --mem
// 4G / with TMPDIR=/tmp) is used, and the walk leaves it out: with many
// spills the result equals the scan without --mem.
func TestDefaultTmpdirInsideScannedPathSkipped(t *testing.T) {
	e := tinyMem()
	top := t.TempDir()
	data := filepath.Join(top, "data")
	if err := os.MkdirAll(filepath.Join(data, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		b := make([]byte, 64<<10)
		for j := range b {
			b[j] = byte(i*7 + j*13 + j>>9)
		}
		os.WriteFile(filepath.Join(data, "f"+itoa(i)), b, 0o644)
	}
	_, want, _ := runWith(e, "--zdb", "-o", "recordsize=4K", data)
	t.Setenv("TMPDIR", filepath.Join(data, "tmp"))
	code, got, errs := runWith(e, "--zdb", "-o", "recordsize=4K", "--mem", "2K", data)
	if code != 0 || got != want {
		t.Errorf("exit %d, stderr %q; zdb text with $TMPDIR inside the scan:\n%s\nwithout --mem:\n%s", code, errs, got, want)
	}
	if _, js, _ := runWith(e, "--json", "-o", "recordsize=4K", "--mem", "2K", data); !strings.Contains(js, `"spill_runs": `) ||
		strings.Contains(js, `"spill_runs": 0,`) {
		t.Errorf("the scan did not spill; the test proves nothing")
	}
	if ents, _ := os.ReadDir(filepath.Join(data, "tmp")); len(ents) != 0 {
		t.Errorf("spill directory left behind: %v", ents)
	}
}

// Finding 9: an --html file that cannot be written is refused before the
// scan (exit 2, nothing on standard output), and the check leaves nothing
// behind.
func TestHTMLUnwritableRefusedBeforeScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		html, want string
	}{
		{filepath.Join(dir, "no", "such", "r.html"), "cannot write there: " + testkit.NoParentText(t)},
		{filepath.Join(file, "r.html"), "cannot write there: " + testkit.NotDirText(t)},
		{dir, "cannot write there: it is a directory"},
	} {
		code, out, errs := runT("--html", c.html, sampleDir)
		if code != exitUsage || out != "" || errs != "ddtsim: --html "+c.html+": "+c.want+"\n" {
			t.Errorf("--html %s: exit %d, stdout %d bytes, stderr %q; want exit 2 saying %q", c.html, code, len(out), errs, c.want)
		}
	}
	out := filepath.Join(dir, "r.html")
	if code, _, errs := runT("--html", out, sampleDir); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d entries in %s, want file and r.html", len(ents), dir)
	}
	// An existing report is checked without being changed, then replaced.
	if code, _, errs := runT("--html", out, sampleDir); code != 0 {
		t.Errorf("existing --html file: exit %d: %s", code, errs)
	}
	// Any other file is not replaced (found by a new user: --html
	// important.conf replaced a configuration file); an empty one is.
	conf := filepath.Join(dir, "important.conf")
	os.WriteFile(conf, []byte("setting = 1\n"), 0o644)
	code, stdout, errs := runT("--html", conf, sampleDir)
	if got, _ := os.ReadFile(conf); code != exitUsage || stdout != "" || string(got) != "setting = 1\n" ||
		errs != "ddtsim: --html "+conf+": it exists and is not a ddtsim HTML report: refusing to overwrite it (remove it first, or write elsewhere)\n" {
		t.Errorf("--html over a configuration file: exit %d, stderr %q, file now %q", code, errs, got)
	}
	os.WriteFile(conf, nil, 0o644)
	if code, _, errs := runT("--html", conf, sampleDir); code != 0 {
		t.Errorf("--html over an empty file: exit %d: %s", code, errs)
	}
}

// Finding 10: --mem has a minimum (1M), and the spill directory is removed
// even when the scan fails (exit 1) because the runs cannot all be opened.
func TestMemMinimumAndSpillDirRemovedOnFailure(t *testing.T) {
	dir := sampleTree(t)
	for _, v := range []string{"1", "1K", "1023K"} {
		code, out, errs := runT("--mem", v, dir)
		if code != exitUsage || out != "" || !strings.Contains(errs, "--mem "+v+": too small (accepted: at least 1M") {
			t.Errorf("--mem %s: exit %d, stderr %q", v, code, errs)
		}
	}
	if code, _, errs := runT("--mem", "1M", dir); code != 0 {
		t.Errorf("--mem 1M: exit %d: %s", code, errs)
	}

	// Many runs and few file descriptors: the merge fails.
	te := tinyMem()
	tmp := t.TempDir()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("%s: no /proc/self/fd to count open files: %v", runtime.GOOS, err)
	}
	testkit.SetFileLimit(t, uint64(len(fds))+40)
	var o, e bytes.Buffer
	code := run(te, []string{"-j", "1", "-o", "recordsize=512", "--mem", "1", "--tmpdir", tmp, dir}, &o, &e)
	if code != exitFailed || !strings.Contains(e.String(), "too many open files") {
		t.Fatalf("exit %d, stderr %q; want exit 1 from running out of file descriptors", code, e.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the spill directory was left behind: %d entries in --tmpdir", len(left))
	}
}

// Finding 13: --save refuses to replace a file that is not a saved scan,
// replaces a saved scan (or an empty file), and writes through a symlink
// to its target instead of replacing the link.
func TestSaveRefusesForeignFileAndWritesThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := sampleTree(t)
	out := t.TempDir()
	foreign := filepath.Join(out, "notes.txt")
	os.WriteFile(foreign, []byte("my notes\n"), 0o644)
	code, stdout, errs := runT("--save", foreign, dir)
	if code != exitUsage || stdout != "" || !strings.Contains(errs, "--save "+foreign+": it exists and is not a ddtsim saved scan: refusing to overwrite it") {
		t.Errorf("--save over a text file: exit %d, stderr %q", code, errs)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "my notes\n" {
		t.Errorf("the file was changed: %q", b)
	}
	unixOnly(t, noSymlinks+"; and no FIFOs")
	toForeign := filepath.Join(out, "to-notes")
	os.Symlink(foreign, toForeign)
	if code, _, errs := runT("--save", toForeign, dir); code != exitUsage || !strings.Contains(errs, "not a ddtsim saved scan") {
		t.Errorf("--save through a symlink to a text file: exit %d, stderr %q", code, errs)
	}
	fifo := filepath.Join(out, "fifo")
	if err := testkit.Mkfifo(t, fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runT("--save", fifo, dir); code != exitUsage || !strings.Contains(errs, "it exists and is not a directory or a regular file") {
		t.Errorf("--save over a FIFO: exit %d, stderr %q", code, errs)
	}

	isScan := func(path string) bool {
		_, err := saved.ReadManifest(path)
		return err == nil
	}
	// A saved scan is replaced, and so is an empty file.
	saved := filepath.Join(out, "a.ddts")
	empty := filepath.Join(out, "empty.ddts")
	os.WriteFile(empty, nil, 0o644)
	for _, f := range []string{saved, saved, empty} {
		if code, _, errs := runT("--save", f, dir); code != 0 || !isScan(f) {
			t.Errorf("--save %s: exit %d, %s", f, code, errs)
		}
	}
	// A symlink stays a symlink; its target gets the scan, also when it
	// does not exist yet.
	for _, target := range []string{saved, filepath.Join(out, "new.ddts")} {
		link := filepath.Join(out, "link-"+filepath.Base(target))
		if err := os.Symlink(filepath.Base(target), link); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runT("--save", link, dir); code != 0 {
			t.Errorf("--save %s: exit %d, %s", link, code, errs)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink", link)
		}
		if !isScan(target) {
			t.Errorf("%s does not hold the saved scan", target)
		}
		if code, _, errs := runT("resume", link); code != 0 || !strings.Contains(errs, "complete") {
			t.Errorf("resume %s: exit %d, %s", link, code, errs)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 8 {
		t.Errorf("%d entries in %s, want 8 (no temporary files left)", len(ents), out)
	}
}

// Names that could pass for others (issue 29, item 9): a right-to-left
// override (U+202E: "evil\u202etxt.exe" shows as "evilexe.txt") is
// escaped in the text and CSV; a literal backslash prints apart from a
// tab; JSON keeps each escaped name's bytes in base64 beside it.
func TestNamesEscapedUnambiguously(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := []string{"evil\u202etxt.exe", "iso\u2066x\u2069", `tab\there`, "tab\there", "plain"}
	wants := []string{`evil\u202etxt.exe`, `iso\u2066x\u2069`, `tab\\there`, `tab\there`}
	if runtime.GOOS == "windows" {
		// A tab is not allowed in a name there, and a backslash separates.
		names = slices.Concat(names[:2], names[4:])
		wants = wants[:2]
	}
	for i, n := range names {
		testkit.Write(t, filepath.Join(dir, n), testkit.Rand(int64(70+i), 9000))
	}
	code, text, errs := runT("--by", "file", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, csv, _ := runT("--by", "file", "--csv", dir)
	for _, out := range []string{text, csv} {
		if strings.ContainsAny(out, "\u202e\u2066\u2069\t") {
			t.Errorf("raw bidi control or tab printed:\n%s", out)
		}
		for _, want := range wants {
			if !strings.Contains(out, string(filepath.Separator)+want) {
				t.Errorf("no %s in:\n%s", want, out)
			}
		}
	}
	_, js, _ := runT("--by", "file", "--json", dir)
	var doc struct {
		Groups []struct {
			Name       string `json:"name"`
			NameBase64 string `json:"name_base64"`
		} `json:"breakdown"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, g := range doc.Groups {
		raw, err := base64.StdEncoding.DecodeString(g.NameBase64)
		switch {
		case g.NameBase64 == "" && strings.Contains(filepath.Base(g.Name), `\`): // Windows' separators aside
			t.Errorf("%q: escaped, but no name_base64", g.Name)
		case g.NameBase64 == "":
			got[filepath.Base(g.Name)] = true
		case err != nil:
			t.Errorf("%q: name_base64 %q: %v", g.Name, g.NameBase64, err)
		default:
			got[filepath.Base(string(raw))] = true
		}
	}
	for _, n := range names {
		if !got[n] {
			t.Errorf("%q not recoverable from the JSON groups %+v", n, doc.Groups)
		}
	}
	// The paths named, and the problems, keep theirs too.
	bad := filepath.Join(dir, "gone\u202e")
	_, js, _ = runT("--json", filepath.Join(dir, "plain"), bad)
	var top struct {
		PathsBase64 []string `json:"paths_base64"`
		Problems    []struct {
			Path       string `json:"path"`
			PathBase64 string `json:"path_base64"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(js), &top); err != nil {
		t.Fatal(err)
	}
	if len(top.PathsBase64) != 2 || top.PathsBase64[1] != base64.StdEncoding.EncodeToString([]byte(bad)) ||
		len(top.Problems) != 1 || top.Problems[0].PathBase64 != top.PathsBase64[1] || strings.Contains(top.Problems[0].Path, "\u202e") {
		t.Errorf("JSON paths_base64 %q, problems %+v", top.PathsBase64, top.Problems)
	}
}

// TestHTMLToStdout: --html - writes the HTML page to standard output in
// place of the text report (no file named "-"), the same page --html FILE
// writes; beside --zdb, --json or --csv (a second report for standard
// output) it is refused before the scan with one message (issue 29, item
// 6).
func TestHTMLToStdout(t *testing.T) { // not parallel: t.Chdir
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), bytes.Repeat([]byte("a block of text\n"), 20000), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	code, out, errs := runT("--html", "-", dir)
	if code != 0 || errs != "" {
		t.Fatalf("--html -: exit %d, stderr %q", code, errs)
	}
	if !report.IsHTMLReport(strings.NewReader(out)) || !strings.HasSuffix(out, "</html>\n") {
		t.Errorf("--html - printed %.200q…; want the HTML page alone", out)
	}
	if _, err := os.Lstat(filepath.Join(cwd, "-")); err == nil {
		t.Errorf("--html - created a file named -")
	}
	file := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := runT("--html", file, dir); code != 0 {
		t.Fatalf("--html FILE: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rss := regexp.MustCompile(`process [0-9.]+ [KMGT]?i?B peak RSS`) // differs from run to run
	if got, want := rss.ReplaceAllString(out, ""), rss.ReplaceAllString(string(b), ""); got != want {
		t.Errorf("--html - printed a page other than --html FILE's:\n%.400s\nwant\n%.400s", got, want)
	}
	for _, other := range []string{"--zdb", "--json", "--csv"} {
		code, out, errs := runT("--html", "-", other, dir)
		want := "ddtsim: --html - and " + other + " would both write to standard output: give one of them, or --html a file name\n"
		if code != exitUsage || out != "" || errs != want {
			t.Errorf("--html - %s: exit %d, stdout %.80q, stderr %q; want exit %d, stderr %q", other, code, out, errs, exitUsage, want)
		}
	}
}

// A 1 GiB file of holes saves 1 GiB less its metadata, which Format
// rounds to "1024M": the summary says it in the unit of the whole (found
// by a new user: "1024 MiB of the 1 GiB of file data").
func TestSavedOneUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "allhole")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f, 1<<30); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runT(f)
	if code != 0 || !strings.Contains(out, "  saved        1.00 GiB of the 1 GiB of file data (100.0%)\n") {
		t.Errorf("exit %d, stderr %q, report:\n%s", code, errs, out)
	}
}
