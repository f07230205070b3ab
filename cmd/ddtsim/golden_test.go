package main

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/goldenmodel"
)

func TestMain(m *testing.M) {
	if os.Getenv("DDTSIM_TEST_RUN_MAIN") == "1" {
		e, err := faultChild() // fault_test.go
		if err != nil {
			os.Stderr.WriteString("faultChild: " + err.Error() + "\n")
			os.Exit(99)
		}
		if os.Getenv("DDTSIM_TEST_READY_FD") == "3" {
			readyChild(e) // signals_test.go
		}
		if os.Getenv("DDTSIM_TEST_EARLY_SIGNAL") == "1" {
			e.caught = earlySignal // signals_test.go
		}
		runMain(e) // the test binary as ddtsim (signals_test.go)
		return
	}
	// The commands run in this process, each in a testEnv: -j must not
	// change its GOMAXPROCS for the tests after them (TestJobsCapCPUs).
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		os.Stderr.WriteString("cleanup: " + err.Error() + "\n")
	}
	os.Exit(code)
}

// caseArgs turns a golden dataset case into ddtsim flags (--zdb, then
// goldenmodel.Args), or says why the case is outside what this build
// reproduces exactly.
func caseArgs(c golden.Case) (args []string, why string) {
	if !goldenmodel.Exact(c) {
		return nil, "compression " + c.Props["compression"] + " is an approximation in this build (scan TestGolden: approxBounds)"
	}
	return append([]string{"--zdb"}, goldenmodel.Args(c, false)...), ""
}

// scanCase is the golden case name and the flags that scan its inputs
// as it was made (caseArgs without --zdb); it skips the test where the
// case's compression is approximated in this build.
func scanCase(t *testing.T, name string) (golden.Case, []string) {
	t.Helper()
	c, err := golden.FindCase(name)
	if err != nil {
		t.Fatal(err)
	}
	args, why := caseArgs(c)
	if why != "" {
		t.Skip(why)
	}
	return c, args[1:]
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestGoldenSettings gives the flags of every golden case (goldenmodel.Args:
// --release, --vdev, --ashift, --sparse, -o, --zvol or --volblocksize;
// the volume cases with --guest too) to scan, compare and the default
// command, and checks that the settings they build are those the
// pipeline's golden tests scan with (goldenmodel.Settings: scan TestGolden,
// TestGoldenZvol, TestGoldenZvolGuest) and hold to real zdb -S byte for
// byte: with the same settings, the command prints what they checked.
// Nothing is scanned here (TestGoldenEndToEnd runs a few cases).
func TestGoldenSettings(t *testing.T) {
	cases, err := golden.Cases()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		for _, guest := range []bool{false, true} {
			if guest && c.Zvol == "" {
				continue
			}
			n++
			want := goldenmodel.Settings(t, c, guest)
			args := goldenmodel.Args(c, guest)
			for _, cmd := range [][]string{nil, {"scan"}, {"compare", "--zdb-output", "zdb-S.txt"}} {
				cl := parseCLI(t, append(append(append([]string{}, cmd...), args...), "path")...)
				sc := &cl.Scan
				if len(cmd) > 0 && cmd[0] == "compare" {
					sc = &cl.Compare.Scan
				}
				got, err := sc.settings()
				if err != nil {
					t.Errorf("%s: %q: %v", c.Name, args, err)
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: ddtsim %q builds\n%+v\nthe pipeline's golden test scans with\n%+v", c.Name, append(cmd, args...), got, want)
				}
				if !slices.Equal(sc.Paths, []string{"path"}) {
					t.Errorf("%s: %q: paths %q", c.Name, args, sc.Paths)
				}
			}
		}
	}
	// 35 dataset cases, 5 volume cases twice (raw and --guest).
	if n < 45 {
		t.Errorf("%d cases' settings compared, want at least 45", n)
	}
}

// TestGoldenEndToEnd runs the command on the golden inputs for three
// golden cases, one output each, and compares with what real zdb -S
// printed, byte for byte: --zdb (one disk, LZ4), --json's zdb_S (raidz2,
// 2.1, recordsize 16K) and the text report, which begins with it (a
// volume a file, --volblocksize).
func TestGoldenEndToEnd(t *testing.T) {
	_, inputs := golden.ForScanTest(t)
	_, vols := golden.ForZvolTest(t)
	for _, tc := range []struct{ name, format string }{
		{"lz4-128k-a12", "--zdb"},
		{"v21-lz4-16k-raidz2x6-a12", "--json"},
		{"zvol-lz4-16k-a12", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := golden.FindCase(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.ZdbS()
			if err != nil {
				t.Fatal(err)
			}
			args := goldenmodel.Args(c, false)
			if tc.format != "" {
				args = append(args, tc.format)
			}
			in := inputs
			if c.Zvol != "" {
				in = vols
			}
			code, out, errs := runT(append(args, in...)...)
			if code != 0 {
				t.Fatalf("ddtsim %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errs)
			}
			got := out
			switch tc.format {
			case "--json":
				var doc struct {
					Zdb string `json:"zdb_S"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatal(err)
				}
				got = doc.Zdb
			case "":
				// The headline's three lines and an empty line, then zdb -S.
				head, body, _ := strings.Cut(out, "\n\n")
				if strings.Count(head, "\n") != 2 || !strings.HasPrefix(body, want) || !strings.Contains(out, "\nSummary: OpenZFS 2.3.2, volblocksize=16K") {
					t.Errorf("the text report does not begin with the headline and real zdb -S, or names no volblocksize:\n%s", out)
				}
				got = body[:min(len(body), len(want))]
			}
			if got != want {
				t.Errorf("ddtsim %s differs from real zdb -S (-real +ddtsim):\n%s",
					strings.Join(args, " "), cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")))
			}
		})
	}
}
