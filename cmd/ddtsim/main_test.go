package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// testEnv is the env of a command a test runs in its own process: it
// leaves the process's GOMAXPROCS as it is (capCPUs asks, sets nothing).
func testEnv() *env {
	return &env{setMaxProcs: func(int) int { return runtime.GOMAXPROCS(0) }}
}

// runT runs ddtsim with args in a testEnv and returns its exit status,
// stdout and stderr.
func runT(args ...string) (code int, stdout, stderr string) { return runWith(testEnv(), args...) }

// runWith is runT in e.
func runWith(e *env, args ...string) (code int, stdout, stderr string) {
	var o, ee bytes.Buffer
	code = run(e, args, &o, &ee)
	return code, o.String(), ee.String()
}

func TestBadValuesAreClearErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"-o", "recordsize=100K", dir}, "power of two from 512 to 16M"},
		{[]string{"--checkpoint", "1m", dir}, "--checkpoint 1m0s: needs --save DIR"},
		{[]string{"--checkpoint=-1s", "--save", filepath.Join(dir, "s"), dir}, "--checkpoint -1s: invalid"},
		{[]string{"--checkpoint", "often", dir}, "--checkpoint"},
		{[]string{"-o", "recordsize=32M", dir}, "power of two from 512 to 16M"},
		{[]string{"-o", "compression=snappy", dir}, "accepted: on, off, lz4, lzjb, zle, gzip"},
		{[]string{"-o", "compression=gzip-10", dir}, "gzip-1 … gzip-9"},
		{[]string{"--release", "0.7", "-o", "compression=zstd", dir}, "zstd came with 2.0.0"},
		{[]string{"--release", "2.0", "--vdev", "draid2 8", dir}, "dRAID"},
		{[]string{"--vdev", "raidz2 2", dir}, "raidz2"},
		{[]string{"--vdev", "mirror 1", dir}, "mirror"},
		{[]string{"--vdev", "raidz9 12", dir}, "raidz"},
		{[]string{"-o", "copies=4", dir}, "accepted: 1, 2, 3"},
		{[]string{"-o", "dedup=maybe", dir}, "accepted: on, off"},
		{[]string{"-o", "atime=off", dir}, "not modelled (accepted: recordsize, volblocksize, compression, copies, dedup)"},
		{[]string{"-o", "recordsize", dir}, "expected NAME=VALUE"},
		{[]string{"-o", "compression=lz4", "-o", "compress=off", dir}, "compression given twice (also -o compression=lz4)"},
		{[]string{"-o", "recsize=4K", "-o", "recordsize=8K", dir}, "recordsize given twice"},
		{[]string{"--ashift", "8", dir}, "accepted: 9 to 16"},
		{[]string{"--release", "0.5.11", dir}, "releases 0.6.0 to 2.4.4"},
		{[]string{"--release", "2.3.2", "-o", "recordsize=32M", dir}, "power of two from 512 to 16M"},
		{[]string{"--release", "2.1", "-o", "recordsize=2M", dir}, "power of two from 512 to 1M"},
		{[]string{"--sparse", "sometimes", dir}, "sparse"},
		{[]string{"--zdb", "--json", dir}, "can't be used together"},
		{[]string{}, "expected"},
		{[]string{"--ashift", "0x9", dir}, "accepted: 9 to 16"},
		{[]string{"-j", "9223372036854775807", dir}, "accepted: 0 for one per CPU, or 1 to 256"},
		{[]string{"--jobs=-1", dir}, "accepted: 0 for one per CPU"},
		{[]string{"--release", "0.6.5.12", dir}, "not modelled"},
		{[]string{"--release", "0.6.0", "-o", "compression=lz4", dir}, "lz4 came with 0.6.1"},
	}
	for _, c := range cases {
		code, out, errs := runT(c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", c.args, code, exitUsage)
		}
		if !strings.Contains(errs, c.want) {
			t.Errorf("%v: stderr %q does not say %q", c.args, errs, c.want)
		}
		if strings.Contains(out, "Simulated") {
			t.Errorf("%v: printed a report despite the error", c.args)
		}
	}
}

// A small tree: a 300 KiB random file, its copy, a text file and an
// unreadable (missing) path.
func sampleTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data := make([]byte, 300<<10)
	x := uint32(1)
	for i := range data {
		x = x*1103515245 + 12345
		data[i] = byte(x >> 16)
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 3000)
	for name, d := range map[string][]byte{"a": data, "b": data, "text": text} {
		if err := os.WriteFile(filepath.Join(dir, name), d, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestJSONMatchesZdbText(t *testing.T) {
	t.Parallel()
	dir := sampleTree(t)
	code, out, errs := runT("--json", dir)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var doc struct {
		Release    string
		Properties map[string]string
		Histogram  []struct {
			Refcnt    uint64
			Allocated struct{ Blocks, LSize, PSize, DSize uint64 }
		}
		Total struct {
			Allocated, Referenced struct{ Blocks, LSize, PSize, DSize uint64 }
		}
		Ratios   *struct{ Dedup, Compress, Copies, Combined float64 }
		Counters map[string]any
		Zdb      string `json:"zdb_S"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	_, zdbOut, _ := runT("--zdb", dir)
	if doc.Zdb != zdbOut {
		t.Errorf("JSON zdb_S differs from --zdb output")
	}
	// a and b: 3 records each (2 full, 1 tail), all shared: refcnt 2.
	// text: 132000 bytes = 2 records, compressible.
	if doc.Release != "2.4.4" || doc.Properties["compression"] != "lz4" || doc.Properties["recordsize"] != "128K" {
		t.Errorf("model fields: %s %v", doc.Release, doc.Properties)
	}
	if doc.Total.Referenced.Blocks != 8 || doc.Total.Allocated.Blocks != 5 || doc.Counters["files"] != float64(3) {
		t.Errorf("totals %+v, counters %v; want 8 referenced, 5 allocated blocks, 3 files", doc.Total, doc.Counters)
	}
	if doc.Total.Referenced.LSize != 8*128<<10 || doc.Counters["logical_bytes"] != float64(2*300<<10+132000) {
		t.Errorf("sizes: %+v %v", doc.Total, doc.Counters)
	}
	if doc.Ratios == nil || doc.Ratios.Dedup <= 1 || doc.Ratios.Compress <= 1 {
		t.Errorf("ratios %+v", doc.Ratios)
	}
}

func TestDefaultOutputAndErrors(t *testing.T) {
	t.Parallel()
	dir := sampleTree(t)
	missing := filepath.Join(dir, "nope")
	code, out, errs := runT(dir, missing)
	if code != exitWithErrors {
		t.Errorf("exit %d, want %d (completed with errors)", code, exitWithErrors)
	}
	if !strings.Contains(errs, missing) || !strings.Contains(errs, testkit.NotExistText(t)) {
		t.Errorf("stderr %q does not name %s and the reason", errs, missing)
	}
	_, zdbOut, _ := runT("--zdb", dir)
	if _, body, _ := strings.Cut(out, "\n\n"); !strings.HasPrefix(body, zdbOut) {
		t.Errorf("default output does not follow its headline with the zdb -S text")
	}
	for _, want := range []string{"Summary", "3 regular files", "1 error", "DDT entries  5: one per distinct block stored"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestEmptyScanIsZdbEmptyOutput(t *testing.T) {
	t.Parallel()
	code, out, _ := runT("--zdb", t.TempDir())
	want := "Simulated DDT histogram:\n\n" +
		"bucket              allocated                       referenced          \n" +
		"______   ______________________________   ______________________________\n" +
		"refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n" +
		"------   ------   -----   -----   -----   ------   -----   -----   -----\n\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, output %q", code, out)
	}
}

// An interrupted scan prints the partial result, marked, and exits 130
// (143 for SIGTERM, by the signal's number).
func TestInterruptedScan(t *testing.T) {
	t.Parallel()
	dir := sampleTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, format := range []string{"", "--json"} {
		s := scanCmd{env: testEnv()}
		s.Paths = []string{dir}
		s.Release, s.Ashift, s.Sparse, s.JSON = "latest", "12", "auto", format == "--json"
		var o, e bytes.Buffer
		code := exitCode(s.runContext(ctx, func() int { return 143 }, &o, &e), &e)
		if code != 143 || !strings.Contains(e.String(), "interrupted") {
			t.Errorf("%s: exit %d, stderr %q", format, code, e.String())
		}
		if !strings.Contains(o.String(), "PARTIAL") && !strings.Contains(o.String(), `"partial": true`) {
			t.Errorf("%s: result not marked partial:\n%s", format, o.String())
		}
	}
}

// Problems are listed in JSON with their path (escaped when not UTF-8)
// and reason; the warning on stderr escapes the name too.
func TestProblemsListedAndEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "evil\nddtsim: fake\xff")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runT("--json", bad, empty)
	if code != exitWithErrors {
		t.Fatalf("exit %d", code)
	}
	if strings.Count(errs, "\n") != 2 || !strings.Contains(errs, `evil\nddtsim: fake\xff`) {
		t.Errorf("stderr not escaped: %q", errs)
	}
	var doc struct {
		Paths    []string
		Problems []struct{ Path, Kind, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// The system's reason: no such file on Unix; on Windows the name itself
	// is refused.
	_, err := os.Lstat(bad)
	var pe *os.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("lstat of the missing name: %v", err)
	}
	if len(doc.Problems) != 1 || doc.Problems[0].Kind != "error" || !strings.HasSuffix(doc.Problems[0].Path, `evil\nddtsim: fake\xff`) ||
		!strings.Contains(doc.Problems[0].Reason, pe.Err.Error()) || !strings.HasSuffix(doc.Paths[0], `\xff`) {
		t.Errorf("problems %+v, paths %q", doc.Problems, doc.Paths)
	}
}

// A path named that does not exist is said before the scan starts (not
// when the walk reaches it); when no path named can be scanned, nothing
// is printed on stdout and the exit status is 2, not a completed empty
// scan.
func TestMissingPathsBeforeTheScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "f"), []byte("some data"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []string
	e := testEnv()
	e.faults = &source.Faults{BeforeOpen: func(string) { seen = append(seen, "opened") }} // on the walker's goroutine, as the warning
	stderr := &orderedWriter{log: &seen}
	code := run(e, []string{"--zdb", data, filepath.Join(dir, "typo")}, io.Discard, stderr)
	if code != exitWithErrors || len(seen) < 2 || !strings.Contains(seen[0], "typo: stat: "+testkit.NotExistText(t)) || !slices.Contains(seen, "opened") {
		t.Errorf("exit %d; events %q: the missing path must be said before any file is opened", code, seen)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := testkit.Mkfifo(t, fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runT(filepath.Join(dir, "typo"), fifo)
	if code != exitUsage || out != "" || !strings.Contains(errs, "nothing to scan: "+filepath.Join(dir, "typo")+": no such file or directory; "+fifo+": a FIFO") {
		t.Errorf("nothing scannable: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// orderedWriter records each write in log, beside the scan's events.
type orderedWriter struct{ log *[]string }

func (w *orderedWriter) Write(p []byte) (int, error) {
	*w.log = append(*w.log, string(p))
	return len(p), nil
}

func TestReleaseList(t *testing.T) {
	t.Parallel()
	code, out, _ := runT("--release", "list")
	if code != 0 || !strings.Contains(out, "2.3.2") || !strings.Contains(out, "P6") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runT("--release", "list", "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) < 10 {
		t.Errorf("--release list --json: exit %d, %v, %d rows", code, err, len(rows))
	}
}

// The resolved release is reported: 2.1 means 2.1.16, with 2.1's rules.
func TestReleaseResolvedInReport(t *testing.T) {
	t.Parallel()
	code, out, _ := runT("--json", "--release", "2.1", sampleTree(t))
	var doc struct {
		Release      string `json:"release"`
		ReleaseRules string `json:"release_rules"`
	}
	json.Unmarshal([]byte(out), &doc)
	if code != 0 || doc.Release != "2.1.16" || doc.ReleaseRules != "2.1" {
		t.Errorf("exit %d, release %q rules %q", code, doc.Release, doc.ReleaseRules)
	}
}

// A file whose name is not UTF-8, named on the command line, is found.
func TestNonUTF8Argument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "bad\xff\xfe")
	if err := os.WriteFile(name, bytes.Repeat([]byte("x"), 5000), 0o644); err != nil {
		t.Skipf("file system refuses the name: %v", err)
	}
	code, out, errs := runT("--json", name)
	if code != 0 || errs != "" || !strings.Contains(out, `"files": 1`) || !strings.Contains(out, `bad\\xff\\xfe"`) {
		t.Errorf("exit %d, stderr %q, out:\n%s", code, errs, out)
	}
}

// --zdb with --sample keeps zdb's format on stdout and says on stderr that
// the table is an estimate.
func TestZdbSampleNote(t *testing.T) {
	t.Parallel()
	code, out, errs := runT("--zdb", "--sample", "1/4", "../../testdata/sample")
	if code != 0 || !strings.HasPrefix(out, "Simulated DDT histogram:\n") || strings.Contains(out, "SAMPLED") ||
		!strings.Contains(errs, "ddtsim: note:") || !strings.Contains(errs, "estimate") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	if _, _, errs := runT("--zdb", "../../testdata/sample"); errs != "" {
		t.Errorf("exact scan printed a note: %q", errs)
	}
}

// The summary's wording when nothing is saved, and the caution under the
// DDT estimate of an unreliable sample (found by a new user: "saved
// -2.05M ... by holes, compression and dedup"; a "fits" verdict resting
// on a sample flagged as unreliable).
func TestSummaryWording(t *testing.T) {
	t.Parallel()
	code, out, _ := runT("-o", "copies=3", "-o", "compression=off", "--sparse", "never", "../../testdata/sample")
	if code != 0 || !strings.Contains(out, "  saved        nothing: the pool would take 2.67 MiB more than the 2.48 MiB of file data (107.8%):") {
		t.Errorf("copies=3: exit %d\n%s", code, out)
	}
	code, out, _ = runT("--sample", "1/2", "-o", "dedup=on", "--ram", "4G", "../../testdata/sample")
	if code != 0 || !strings.Contains(out, "    caution    from a sample flagged above as unreliable") {
		t.Errorf("--sample 1/2: exit %d\n%s", code, out)
	}
	// Each line of a sample's headline says it is an estimate (found by
	// a new user: only the verdict did).
	for i, l := range strings.SplitN(out, "\n", 4)[:3] {
		if !strings.Contains(l, "(estimate)") {
			t.Errorf("--sample 1/2: headline line %d not marked an estimate: %q", i+1, l)
		}
	}
	code, out, _ = runT("-o", "dedup=on", "--ram", "4G", "../../testdata/sample")
	if code != 0 || strings.Contains(out, "caution") || !strings.Contains(out, "  saved        1.22 MiB of the 2.48 MiB of file data (49.0%)\n") {
		t.Errorf("full scan: exit %d\n%s", code, out)
	}
}

// A sampled scan's saved line is an estimate with an interval, without
// causes (found by a new user: random data at 1/256 printed "saved
// nothing: ... copies, parity and padding cost more" on a plain disk);
// the full scan's figure lies in the interval.
func TestSampledSaved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	var b bytes.Buffer
	rec := make([]byte, 4096)
	for i := 0; i < 24000; i++ {
		for j := range rec {
			rec[j] = byte(r.Uint32())
		}
		clear(rec[r.IntN(4096):]) // some compress
		b.Write(rec)
		if i%3 == 0 {
			b.Write(rec) // some dedup
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, full, _ := runT("-o", "recordsize=4K", "--ashift", "9", dir)
	m := regexp.MustCompile(`saved +\S+ \S+ of the \S+ \S+ of file data \((-?[0-9.]+)%\)`).FindStringSubmatch(full)
	if m == nil {
		t.Fatalf("full scan:\n%s", full)
	}
	truth, _ := strconv.ParseFloat(m[1], 64)
	code, out, errs := runT("--sample", "1/16", "-o", "recordsize=4K", "--ashift", "9", dir)
	s := regexp.MustCompile(`saved +about \S+ \S+ of the \S+ \S+ of file data \(-?[0-9.]+%; 95%: (-?[0-9.]+)% to\s+(-?[0-9.]+)%\), estimated`).FindStringSubmatch(out)
	if code != 0 || s == nil {
		t.Fatalf("exit %d, %s\n%s", code, errs, out)
	}
	lo, _ := strconv.ParseFloat(s[1], 64)
	hi, _ := strconv.ParseFloat(s[2], 64)
	if truth < lo || truth > hi || strings.Contains(out, "parity") {
		t.Errorf("full scan saves %.1f%%, the sample says %.1f%% to %.1f%%:\n%s", truth, lo, hi, out)
	}
}

// --stages prints where the scan's time went on stderr, after the scan;
// stdout is the report, byte for byte as without it (but for the peak RSS
// of the process, which the first run may raise).
func TestStagesOnStderr(t *testing.T) {
	t.Parallel()
	noRSS := regexp.MustCompile(`process [0-9.]+ [KMGT]?i?B peak RSS`)
	code, want, errs := runT(sampleDir)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	code, out, errs := runT("--stages", sampleDir)
	if out, want = noRSS.ReplaceAllString(out, ""), noRSS.ReplaceAllString(want, ""); code != 0 || out != want || !strings.Contains(want, "DDT entries") {
		t.Errorf("--stages: exit %d, stdout differs: %v", code, out != want)
	}
	for _, s := range []string{"stages: wall ", "  read ", "  hash ", "  compress ", "  walk "} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
	// A scan refused before it began (found by a new user: it printed a
	// block of zeros): no stages.
	code, out, errs = runT("--stages", filepath.Join(t.TempDir(), "missing"))
	if code != exitUsage || out != "" || strings.Contains(errs, "stages:") || !strings.Contains(errs, "nothing to scan") {
		t.Errorf("missing path with --stages: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
