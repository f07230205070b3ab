package main

import (
	"bytes"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zfs/compress/gzip"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
)

func TestMain(m *testing.M) {
	if os.Getenv("DDTSIM_TEST_RUN_MAIN") == "1" {
		e, err := faultChild() // fault_test.go
		if err != nil {
			os.Stderr.WriteString("faultChild: " + err.Error() + "\n")
			os.Exit(99)
		}
		if os.Getenv("DDTSIM_TEST_READY_FD") == "3" {
			// signals_test.go: say when the scan has done its first
			// chunk (the signal handlers are in place by then).
			ready := os.NewFile(3, "ready")
			var once sync.Once
			e.done = func() { once.Do(func() { ready.Write([]byte{1}); ready.Close() }) }
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

// caseArgs turns a golden case into ddtsim flags, or says why the case is
// outside what ddtsim models yet.
func caseArgs(c golden.Case) (args []string, why string) {
	// case.env's vdevs ("stripe 3", "raidz2 6", "draid2 8", ...) is
	// --vdev's syntax.
	args = []string{"--zdb", "--release", c.Release, "--vdev", c.Vdevs, "--ashift", itoa(c.Ashift), "--sparse", c.Sparse}
	names := make([]string, 0, len(c.Props))
	for k := range c.Props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := c.Props[k]
		if k == "compression" && !exactCompression(v) {
			return nil, "compression " + v + " is an approximation in this build (TestGoldenApproxCompressors)"
		}
		args = append(args, "-o", k+"="+v)
	}
	return args, ""
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestGoldenZdbS runs ddtsim --zdb on the golden input set for every golden
// case it models and compares stdout with what real `zdb -S` printed, byte
// for byte.
func TestGoldenZdbS(t *testing.T) {
	cases, inputs := golden.ForScanTest(t)
	ran := 0
	for _, c := range cases {
		args, why := caseArgs(c)
		t.Run(c.Name, func(t *testing.T) {
			if why != "" {
				t.Skip(why)
			}
			ran++
			want, err := c.ZdbS()
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run(testEnv(), append(args, inputs...), &stdout, &stderr)
			if code != 0 {
				t.Fatalf("ddtsim %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr.String())
			}
			if got := stdout.String(); got != want {
				t.Errorf("ddtsim %s differs from real zdb -S (-real +ddtsim):\n%s",
					strings.Join(args, " "), cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")))
			}
		})
	}
	// The off/lz4/lzjb/zle cases, 2.3.2 and 2.1.11: 18 on one disk, 8 on
	// other layouts (stripe 3, mirror 2, raidz1 4, raidz2 6 ×3, raidz3 8,
	// draid2 8); the 4 gzip cases (gzip-1, gzip, gzip-9, 2.1.11's gzip).
	if ran < 30 {
		t.Errorf("only %d golden cases ran, want at least 30", ran)
	}
}

// exactCompression reports whether ddtsim reproduces compression v bit for
// bit (gzip-N in every build: the port of the Linux kernel's deflate; zstd
// is an approximation with a measured error in the pure-Go build, tested in
// its package, and exact with -tags libzstd).
func exactCompression(v string) bool {
	switch {
	case v == "off", v == "lz4", v == "lzjb", v == "zle", v == "on":
		return true
	case strings.HasPrefix(v, "gzip"):
		return gzip.Exact // the kernel's deflate, ported (compress/gzip)
	case strings.HasPrefix(v, "zstd"):
		return zstd.Exact // the libzstd build (-tags libzstd)
	}
	return false
}
