package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// Finding 12: flags that would be ignored are refused, saying why.
func TestIgnoredFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "dir", "--zdb", sampleDir}, "--by has no place in --zdb output (zdb -S prints none); use the text, --json, --csv or --html"},
		{[]string{"--ram", "8G", "--zdb", sampleDir}, "--ram has no place in --zdb output (zdb -S prints no DDT size)"},
		// Found by a new user: --bytes was ignored there without a word.
		{[]string{"--bytes", "--zdb", sampleDir}, "--bytes has no place in --zdb output (zdb -S prints its own units)"},
		{[]string{"--bytes", "--json", sampleDir}, "--bytes has no place with --json: JSON always holds exact bytes"},
		{[]string{"--bytes", "--csv", sampleDir}, "--bytes has no place with --csv: CSV always holds exact bytes"},
		{[]string{"merge", "--bytes", "--json", sampleDir}, "--bytes has no place with --json: JSON always holds exact bytes"},
		{[]string{"--by", "", sampleDir}, `--by "": invalid (accepted: dir, ext, size, file)`},
		{[]string{"--by=", sampleDir}, `--by "": invalid (accepted: dir, ext, size, file)`},
		{[]string{"--save", "", sampleDir}, `--save "": needs a file name`},
		{[]string{"--html=", sampleDir}, `--html "": needs a file name`},
		{[]string{"--mem", "1G", "--tmpdir", "", sampleDir}, `--tmpdir "": needs a directory`},
		{[]string{"--release", "", sampleDir}, `--release "": needs a value`},
		{[]string{"--mem", "", sampleDir}, `--mem "": needs a value`},
		{[]string{"resume", "--mem", "", "x.ddts"}, `--mem "": needs a value`},
		{[]string{"resume", "-j", "100000", "x.ddts"}, "--jobs 100000: invalid"},
		{[]string{"--release", "list", sampleDir}, "--release list takes no paths"},
		{[]string{"--release", "list", "--csv"}, "--release list prints the release table as text, or with --json as JSON: not with --csv"},
		{[]string{"--release", "list", "--zdb", "--by", "dir"}, "not with --zdb, --by"},
	} {
		code, out, errs := runT(c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want exit 2 saying %q", c.args, code, len(out), errs, c.want)
		}
	}
	// --by is case-insensitive, as -o values are.
	code, out, errs := runT("--json", "--by", "DIR", sampleDir)
	var doc struct {
		By string `json:"breakdown_by"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || doc.By != "dir" {
		t.Errorf("--by DIR: exit %d, %v, breakdown_by %q, stderr %q", code, err, doc.By, errs)
	}
	if code, _, errs := runT("--release", "list", "--json"); code != 0 {
		t.Errorf("--release list --json: exit %d, %s", code, errs)
	}
}

// Finding 14: messages give examples within the limits of the release,
// and say what sizes are accepted.
func TestValueMessagesFitTheRelease(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args          []string
		want, notWant string
	}{
		{[]string{"--release", "0.6.4", "-o", "recordsize=1M", dir}, "accepted: a power of two from 512 to 128K, e.g. 4K, 128K)", "1M)"},
		{[]string{"-o", "recordsize=3K", dir}, "accepted: a power of two from 512 to 16M, e.g. 4K, 128K, 1M)", ""},
		{[]string{"--release", "0.6.4", "--volblocksize", "256K", dir}, "release 0.6.4.2 has no large blocks (they came with 0.6.5)", "which new pools have"},
		{[]string{"--volblocksize", "3K", dir}, "above 128K the pool needs large_blocks, which new pools have", ""},
		// The option as given (a new user was told of a --volblocksize
		// they had not written).
		{[]string{"--volblocksize", "3K", dir}, "ddtsim: --volblocksize 3K: invalid", ""},
		{[]string{"-o", "volblocksize=3K", dir}, "ddtsim: -o volblocksize=3K: invalid", "--volblocksize"},
		{[]string{"-o", "dedup=on,verify", dir}, "the last four also with ,verify", "each also"},
		{[]string{"--mem", "1.5G", dir}, "--mem 1.5G: invalid (accepted: the table's memory bound as a size, a whole number with an optional K, M, G, T, P or E suffix (powers of 1024; KiB or KB the same)", ""},
		{[]string{"--ram", "1.5G", dir}, "--ram 1.5G: invalid (accepted: the machine's memory, a whole number with an optional K, M, G, T, P or E suffix (powers of 1024; KiB or KB the same)", ""},
	} {
		code, _, errs := runT(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || (c.notWant != "" && strings.Contains(errs, c.notWant)) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 saying %q (and not %q)", c.args, code, errs, c.want, c.notWant)
		}
	}
}

// Finding 15: every dedup value zfs takes is accepted and means dedup on
// (the same table as dedup=on); the report shows the value as given.
// Values zfs refuses (upper case among them), or that a release does not
// have, are refused.
func TestDedupValues(t *testing.T) {
	t.Parallel()
	dir := sampleTree(t)
	_, on, _ := runT("--zdb", "-o", "dedup=on", dir)
	for _, v := range []string{"on", "verify", "sha256", "sha256,verify", "sha512", "sha512,verify", "skein", "skein,verify",
		"edonr,verify", "blake3", "blake3,verify", "off"} {
		code, out, errs := runT("--json", "-o", "dedup="+v, dir)
		var doc struct {
			Properties map[string]string `json:"properties"`
			Zdb        string            `json:"zdb_S"`
		}
		if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
			t.Errorf("dedup=%s: exit %d, %v, %s", v, code, err, errs)
			continue
		}
		if got := doc.Properties["dedup"]; got != v {
			t.Errorf("dedup=%s: properties say dedup=%s", v, got)
		}
		if v != "off" && doc.Zdb != on {
			t.Errorf("dedup=%s: the table differs from dedup=on's", v)
		}
	}
	for _, v := range []string{"SHA256,Verify", "Off", "ON"} {
		if code, _, errs := runT("-o", "dedup="+v, dir); code != exitUsage || !strings.Contains(errs, "zfs takes dedup values in lower case") {
			t.Errorf("dedup=%s: exit %d, %q", v, code, errs)
		}
	}
	if _, out, _ := runT("-o", "dedup=sha256,verify", dir); !strings.Contains(out, ", dedup=sha256,verify, ") {
		t.Errorf("summary does not show dedup=sha256,verify:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "dedup=edonr", dir}, "zfs takes edonr for dedup only with verify (dedup=edonr,verify)"},
		{[]string{"-o", "dedup=fletcher4", dir}, "accepted: on, off, verify, sha256, sha512, skein, blake3, the last four also with ,verify, and edonr,verify"},
		{[]string{"-o", "dedup=verify,verify", dir}, "accepted: on, off, verify"},
		{[]string{"--release", "2.1", "-o", "dedup=blake3", dir}, "blake3 does not exist in release 2.1.16 (it came with 2.2.0)"},
		{[]string{"--release", "0.6.5", "-o", "dedup=skein,verify", dir}, "skein does not exist in release 0.6.5.11 (it came with 0.7.0)"},
	} {
		code, _, errs := runT(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
	if code, _, errs := runT("--release", "2.2", "-o", "dedup=blake3", dir); code != 0 {
		t.Errorf("blake3 on 2.2: exit %d, %s", code, errs)
	}
}

// A directory named like a command is read as the command; the error
// says so and how to name the directory (it blamed the flag only).
func TestPathNamedLikeACommand(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("sweep", 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runT("-o", "recordsize=4K", "sweep")
	if code != exitUsage || !strings.HasSuffix(errs, "(sweep is read as the command sweep; to scan the path sweep, write ./sweep)\n") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runT("--zdb", "-o", "recordsize=4K", "./sweep"); code != 0 {
		t.Errorf("./sweep: exit %d, %s", code, errs)
	}
	// Typed first, the word is the command: no hint on its flag errors
	// (found by a new user, in the repository's root).
	if code, _, errs := runT("sweep", "--csv", "x"); code != exitUsage || strings.Contains(errs, "is read as the command") {
		t.Errorf("sweep --csv: exit %d, stderr %q", code, errs)
	}
}

// The progress line is in zdb's units; once the walk has listed every
// file it gives the share done and the time left (it showed neither, and
// mixed MiB with MB/s).
func TestProgressLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		files, done, total int64
		walked             bool
		elapsed            time.Duration
		want               string
	}{
		{12, 3 << 20, 10 << 20, false, 2 * time.Second, "scanning: 3M of 10M found so far (12 files; the walk goes on), 1.50M/s"},
		{40, 1 << 30, 4 << 30, true, 10 * time.Second, "scanning: 1G of 4G (25%, 40 files), 102M/s, about 30s left"},
		{40, 0, 4 << 30, true, 500 * time.Millisecond, "scanning: 0B of 4G (0%, 40 files)"},
	} {
		if got := progressLine(c.files, c.done, c.total, c.walked, c.elapsed); got != c.want {
			t.Errorf("progressLine(%+v) = %q, want %q", c, got, c.want)
		}
	}
}
