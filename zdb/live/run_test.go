package live

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

func TestCheckPoolName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"tank", "rpool", "my pool", "a.b:c-d_e", "T1"} {
		if err := CheckPoolName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-e", "1tank", "tank/fs", "tank@snap", "tank\n", "tänk", strings.Repeat("a", 256), "/dev/sda"} {
		if err := CheckPoolName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts RunOptions
		want []string
	}{
		{RunOptions{}, []string{"-S", "tank"}},
		{RunOptions{Dir: "/dev"}, []string{"-S", "tank"}},
		{RunOptions{Exported: true}, []string{"-e", "-S", "tank"}},
		{RunOptions{Exported: true, Dir: "/dev/disk/by-id"}, []string{"-e", "-p", "/dev/disk/by-id", "-S", "tank"}},
	} {
		if got := Args("tank", tc.opts); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.opts, got, tc.want)
		}
	}
}

// Run with the fake zdb of cmd/ddtsim's tests (testdata/fakezdb): what it
// printed, and each failure as its typed error. (cmd/ddtsim's
// TestComparePoolFailures checks the messages the command line makes of
// them.)
func TestRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake zdb is a shell script")
	}
	fake, err := filepath.Abs(filepath.Join("..", "..", "testdata", "fakezdb", "zdb"))
	if err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "zdb-S.txt")
	if err := os.WriteFile(text, []byte(testkit.WorkedZdbS), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKEZDB_OUTPUT", text)
	t.Setenv("FAKEZDB_ARGS", "")
	run := func(mode string, opts RunOptions) (Output, error) {
		t.Setenv("FAKEZDB_MODE", mode)
		opts.Path = fake
		return Run(context.Background(), "tank", opts)
	}

	out, err := run("ok", RunOptions{})
	if err != nil || string(out.Stdout) != testkit.WorkedZdbS || out.Stderr != "" {
		t.Errorf("ok: %v, stdout %q, stderr %q", err, out.Stdout, out.Stderr)
	}
	_, err = run("denied", RunOptions{})
	var exit *ExitError
	if !errors.As(err, &exit) || !exit.PermissionDenied() || exit.NoSuchPool() ||
		err.Error() != "zdb failed (exit status 1): zdb: can't open 'tank': Permission denied" {
		t.Errorf("denied: %v", err)
	}
	_, err = run("nopool", RunOptions{})
	if !errors.As(err, &exit) || exit.PermissionDenied() || !exit.NoSuchPool() {
		t.Errorf("nopool: %v", err)
	}
	_, err = run("fail", RunOptions{})
	if !errors.As(err, &exit) || err.Error() != "zdb failed (exit status 3) without a message" {
		t.Errorf("fail: %v", err)
	}
	out, err = run("huge", RunOptions{})
	if !errors.Is(err, ErrOutputTooLong) || len(out.Stdout) != MaxStdout {
		t.Errorf("huge: %v, %d bytes kept", err, len(out.Stdout))
	}
	start := time.Now()
	_, err = run("slow", RunOptions{Timeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) || time.Since(start) > 10*time.Second {
		t.Errorf("slow: %v after %s", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t.Setenv("FAKEZDB_MODE", "slow")
	if _, err := Run(ctx, "tank", RunOptions{Path: fake}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := Run(context.Background(), "-rf", RunOptions{Path: fake}); err == nil || !strings.Contains(err.Error(), "begins with a letter") {
		t.Errorf("bad pool name: %v", err)
	}
	// In the background: the output as Run's; failed runs the moment
	// zdb fails; Cancel stops a run.
	t.Setenv("FAKEZDB_MODE", "ok")
	if out, err := Start(context.Background(), "tank", RunOptions{Path: fake}, func() { t.Error("failed called on success") }).Wait(); err != nil || string(out.Stdout) != testkit.WorkedZdbS {
		t.Errorf("Start ok: %v, %q", err, out.Stdout)
	}
	t.Setenv("FAKEZDB_MODE", "denied")
	failed := make(chan bool, 1)
	if _, err := Start(context.Background(), "tank", RunOptions{Path: fake}, func() { failed <- true }).Wait(); !errors.As(err, &exit) || len(failed) != 1 {
		t.Errorf("Start denied: %v, failed called %d times", err, len(failed))
	}
	t.Setenv("FAKEZDB_MODE", "slow")
	job := Start(context.Background(), "tank", RunOptions{Path: fake}, nil)
	job.Cancel()
	if _, err := job.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Start cancelled: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Run(context.Background(), "tank", RunOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("no zdb on PATH: %v", err)
	}
}
