package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source"
)

// startDdtsim runs this test binary as ddtsim (TestMain) on slow work:
// 48 MiB of text through gzip-9 on one worker (6 chunks), saved to save,
// and returns once the first chunk is done: the signal handlers are in
// place and the scan is under way, however slow the machine. The child's
// reads then wait for a signal (readyChild), so that the scan cannot end
// before the test's signal arrives, however fast the machine.
func startDdtsim(t *testing.T, save string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789 ")
	var b bytes.Buffer
	for i := 0; b.Len() < 48<<20; i++ {
		b.Write(line[:20+i%30])
		b.WriteByte(byte('a' + i%26))
	}
	if err := os.WriteFile(filepath.Join(dir, "text"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := selfCommand("-j", "1", "-o", "compression=gzip-9", "--save", save, dir)
	cmd.Env = append(os.Environ(), "DDTSIM_TEST_RUN_MAIN=1", "DDTSIM_TEST_READY_FD=3")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	ready, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer ready.Close()
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	// The child must take SIGHUP as in a login session, even when the
	// tests run under nohup (as .ci/run may: SIGHUP ignored, which exec
	// keeps and ddtsim then leaves alone, interruptSignals): a signal this
	// process catches is reset to its default action in the child.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		err = cmd.Wait()
		t.Fatalf("ddtsim did not start its scan: %v, stdout %q, stderr %q", err, out.String(), errs.String())
	}
	return cmd, &out, &errs
}

// The same SIGINT twice within microseconds (timeout(1) signals the process
// and its group) is one interrupt: the partial result is printed and saved
// (found by a new user: 2 runs in 12 lost everything). Two well apart end
// the process at once, and say so.
func TestDoubleSignal(t *testing.T) {
	unixOnly(t, "a signal cannot be sent to another process there (os.Process.Signal: Kill only)")
	if testing.Short() {
		t.Skip("runs ddtsim for a few seconds")
	}
	save := filepath.Join(t.TempDir(), "s.ddts")
	cmd, out, errs := startDdtsim(t, save)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(out.String(), "PARTIAL") {
		t.Errorf("echoed SIGINT: %v, stdout %q, stderr %q", err, out.String(), errs.String())
	}
	if fi, err := os.Stat(save); err != nil || fi.Size() == 0 {
		t.Errorf("echoed SIGINT: not saved: %v", err)
	}

	save2 := filepath.Join(t.TempDir(), "s2.ddts")
	cmd, out, errs = startDdtsim(t, save2)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(2 * signalEcho)
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	if ee == nil || !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(errs.String(), "second interrupt: ending now") {
		// It may have finished its partial report between the two.
		if !strings.Contains(out.String(), "PARTIAL") {
			t.Errorf("second SIGINT: %v, stdout %q, stderr %q", err, out.String(), errs.String())
		}
	}
}

// The interrupt logic itself: a signal echoed within signalEcho is the
// same interrupt; one later is a second interrupt, which ends the process.
// The clock is the test's: the first signal arrives at base, its echo 1 ms
// later, the next one 2 × signalEcho later, however late the goroutine
// runs.
func TestInterruptEcho(t *testing.T) {
	base := time.Unix(1_000_000_000, 0)
	var arrivals atomic.Int32
	now := func() time.Time {
		switch arrivals.Add(1) {
		case 1:
			return base
		case 2:
			return base.Add(time.Millisecond)
		}
		return base.Add(2 * signalEcho)
	}
	ch := make(chan os.Signal, 2)
	ended := make(chan os.Signal, 1)
	ctx, code, stop := interruptOn(context.Background(), ch, now, func(s os.Signal) { ended <- s })
	defer stop()
	ch <- syscall.SIGTERM
	ch <- syscall.SIGTERM // the echo: the process group's copy
	<-ctx.Done()
	if code() != 143 {
		t.Errorf("exit code %d, want 143", code())
	}
	ch <- syscall.SIGINT
	// The signals are taken in order: had the echo ended the process, end
	// would have had SIGTERM.
	if s := <-ended; s != syscall.SIGINT {
		t.Errorf("ended by %v (the echo), want the second interrupt, SIGINT", s)
	}
	if n := arrivals.Load(); n != 3 {
		t.Errorf("%d signals taken, want 3", n)
	}
}

// With standard output closed the Go runtime hands the process /dev/null,
// and a report printed there would be lost without a word (found by a new
// user: `ddtsim --json data >&-` exited 0). ddtsim refuses, exit 1, unless
// --save keeps the result; a shell's >/dev/null is a choice and is obeyed.
func TestClosedStdout(t *testing.T) {
	unixOnly(t, "the test closes the child's file descriptor 1 with sh (>&-), which has no Windows counterpart here")
	save := filepath.Join(t.TempDir(), "scan.ddts")
	for _, c := range []struct {
		redirect string
		args     []string
		code     int
		says     string
	}{
		{">&-", []string{"--json", sampleDir}, 1, "ddtsim: standard output is closed; nowhere to print the report\n"},
		{">&-", []string{"parse", "../../testdata/sample-zfs/lz4-128k-a12.zdb-S.txt"}, 1, "ddtsim: standard output is closed; nowhere to print the report\n"},
		{">&-", []string{"--save", save, sampleDir}, 0, "ddtsim: note: standard output is closed: the report is not printed, only saved\n"},
		{">/dev/null", []string{"--json", sampleDir}, 0, ""},
	} {
		prog, args := selfArgs(c.args...)
		cmd := exec.Command("sh", append([]string{"-c", `exec "$0" "$@" ` + c.redirect, prog}, args...)...)
		cmd.Env = append(os.Environ(), "DDTSIM_TEST_RUN_MAIN=1")
		var errs bytes.Buffer
		cmd.Stderr = &errs
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != c.code || errs.String() != c.says {
			t.Errorf("%s %v: exit %d (%v), stderr %q; want exit %d, %q", c.redirect, c.args, code, err, errs.String(), c.code, c.says)
		}
	}
	if _, err := os.Stat(save); err != nil {
		t.Errorf("the scan was not saved: %v", err)
	}
}

// A hangup (a lost SSH session) ends a scan as SIGTERM does: the partial
// result printed and saved, exit 129 (found by a new user: it lost all
// since the last checkpoint).
func TestHangupSavesPartial(t *testing.T) {
	unixOnly(t, "no SIGHUP, and a signal cannot be sent to another process there")
	if testing.Short() {
		t.Skip("runs ddtsim for a few seconds")
	}
	save := filepath.Join(t.TempDir(), "s.ddts")
	cmd, out, errs := startDdtsim(t, save)
	cmd.Process.Signal(syscall.SIGHUP)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 129 || !strings.Contains(out.String(), "PARTIAL") {
		t.Errorf("SIGHUP: %v, stdout %q, stderr %q", err, out.String(), errs.String())
	}
	if fi, err := os.Stat(save); err != nil || fi.Size() == 0 {
		t.Errorf("SIGHUP: not saved: %v", err)
	}
}

// readyChild sets up e, the environment of the test binary run as ddtsim
// by startDdtsim: once the scan has done its first chunk it says so on
// fd 3, and from then on its reads wait until the process has received
// an interrupt signal (a minute at most), then go on 5 ms apart, so that
// the scan is still under way when the test's signal is taken, however
// fast the machine. The waits end with the first signal, so a second one
// (TestDoubleSignal) meets a scan still under way.
func readyChild(e *env) {
	ready := os.NewFile(3, "ready")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, interruptSignals()...)
	signalled := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-time.After(time.Minute):
		}
		close(signalled)
	}()
	var once sync.Once
	var sent atomic.Bool
	e.done = func() {
		once.Do(func() { ready.Write([]byte{1}); ready.Close(); sent.Store(true) })
	}
	if e.faults == nil {
		e.faults = &source.Faults{}
	}
	prev := e.faults.Read
	e.faults.Read = func(path string, off uint64, n int) source.Fault {
		if sent.Load() {
			<-signalled
			return source.Fault{Delay: 5 * time.Millisecond}
		}
		if prev != nil {
			return prev(path, off, n)
		}
		return source.Fault{}
	}
}

// earlySignal sends the process SIGINT and waits until it is caught:
// the child of TestSignalBeforeTheScan, before its flags are parsed.
func earlySignal() {
	raise(syscall.SIGINT)
	ch := early.Load()
	for i := 0; ch != nil && len(*ch) == 0 && i < 1000; i++ {
		time.Sleep(time.Millisecond)
	}
}

// A Ctrl-C that comes before the scan has started (while the flags are
// parsed and the scan set up) interrupts it as soon as it starts: exit
// 130, a partial report. Found by a new user: in the first 30 to 80 ms
// it killed ddtsim with no output at all.
func TestSignalBeforeTheScan(t *testing.T) {
	unixOnly(t, "a signal cannot be sent to a process there")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := selfCommand("--json", dir)
	cmd.Env = append(os.Environ(), "DDTSIM_TEST_RUN_MAIN=1", "DDTSIM_TEST_EARLY_SIGNAL=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(out.String(), `"partial": true`) {
		t.Errorf("%v, stdout %q, stderr %q", err, out.String(), errs.String())
	}
}
