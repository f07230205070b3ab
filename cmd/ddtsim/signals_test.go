package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startDdtsim runs this test binary as ddtsim (TestMain) on slow work:
// 48 MiB of text through gzip-9 on one worker, saved to save.
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
	cmd := exec.Command(os.Args[0], "-j", "1", "-o", "compression=gzip-9", "--save", save, dir)
	cmd.Env = append(os.Environ(), "DDTSIM_TEST_RUN_MAIN=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	return cmd, &out, &errs
}

// The same SIGINT twice within microseconds (timeout(1) signals the process
// and its group) is one interrupt: the partial result is printed and saved
// (found by a new user: 2 runs in 12 lost everything). Two well apart end
// the process at once, and say so.
func TestDoubleSignal(t *testing.T) {
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
func TestInterruptEcho(t *testing.T) {
	ch := make(chan os.Signal, 2)
	ended := make(chan os.Signal, 1)
	ctx, code, stop := interruptOn(context.Background(), ch, func(s os.Signal) { ended <- s })
	defer stop()
	ch <- syscall.SIGTERM
	ch <- syscall.SIGTERM // the echo: the process group's copy
	<-ctx.Done()
	select {
	case <-ended:
		t.Fatal("an echoed signal ended the process")
	case <-time.After(signalEcho / 2):
	}
	if code() != 143 {
		t.Errorf("exit code %d, want 143", code())
	}
	time.Sleep(signalEcho)
	ch <- syscall.SIGINT
	select {
	case s := <-ended:
		if s != syscall.SIGINT {
			t.Errorf("ended by %v", s)
		}
	case <-time.After(5 * time.Second):
		t.Error("a second interrupt did not end the process")
	}
}

// With standard output closed the Go runtime hands the process /dev/null,
// and a report printed there would be lost without a word (found by a new
// user: `ddtsim --json data >&-` exited 0). ddtsim refuses, exit 1, unless
// --save keeps the result; a shell's >/dev/null is a choice and is obeyed.
func TestClosedStdout(t *testing.T) {
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
		cmd := exec.Command("sh", append([]string{"-c", `exec "$0" "$@" ` + c.redirect, os.Args[0]}, c.args...)...)
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
