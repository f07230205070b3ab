package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
)

// TestSaveLocked: a saved scan is locked while a process writes it (issue
// 29, item 5). While this test process holds the lock, ddtsim --save DIR
// and ddtsim resume DIR are refused with one message naming its PID, and
// DIR is left as it was; once released, the save goes through and
// removes its lock file. Then for real: a ddtsim child saving to DIR
// (its reads held, so it stays in its scan) makes a second writer be
// refused with the child's PID; killed with SIGKILL, it leaves the lock
// free (the kernel releases flock), and resume DIR says that no
// checkpoint was written and what to do (item 10), naming the child,
// rather than a bare stat error; a new --save DIR then succeeds.
func TestSaveLocked(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	file := filepath.Join(src, "f")
	testkit.Write(t, file, testkit.Rand(3, 300<<10))
	dir := filepath.Join(t.TempDir(), "scan")
	refused := func(pid int) string {
		return fmt.Sprintf("ddtsim: %s: another ddtsim process (PID %d) is saving a scan there: wait for it to end, or save elsewhere\n", dir, pid)
	}

	t.Run("held here", func(t *testing.T) {
		if code, _, errs := runT("--save", dir, src); code != 0 {
			t.Fatalf("first save: exit %d: %s", code, errs)
		}
		before, err := saved.ReadHeader(dir)
		if err != nil {
			t.Fatal(err)
		}
		lock, err := saved.TakeLock(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"--save", dir, src}, {"resume", dir}} {
			code, out, errs := runT(args...)
			if code != exitFailed || out != "" || errs != refused(os.Getpid()) {
				t.Errorf("%q while locked: exit %d, stdout %.60q, stderr %q; want exit %d, stderr %q", args, code, out, errs, exitFailed, refused(os.Getpid()))
			}
		}
		if after, err := saved.ReadHeader(dir); err != nil || !after.Created.Equal(before.Created) {
			t.Errorf("the refused runs changed %s (%v)", dir, err)
		}
		if err := lock.Unlock(); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runT("--save", dir, src); code != 0 {
			t.Fatalf("save once unlocked: exit %d: %s", code, errs)
		}
		if _, err := os.Lstat(saved.LockName(dir)); err == nil {
			t.Errorf("lock file %s left after the save", saved.LockName(dir))
		}
	})

	t.Run("child killed", func(t *testing.T) {
		dir := dir + "-child"
		cmd, _, errs := ddtsimProc("--save", dir, file)
		cmd.Env = append(cmd.Env, "DDTSIM_TEST_HOLD="+file, "DDTSIM_TEST_HOLD_UNTIL="+filepath.Join(src, "never"))
		dieWithParent(cmd) // its reads wait for ever
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		ended := make(chan struct{})
		go func() { cmd.Wait(); close(ended) }()
		defer func() { cmd.Process.Kill(); <-ended }()
		// Wait for the child's lock (it takes it before it scans; its
		// reads are held, so it stays in the scan until killed).
		for {
			if p, held := saved.LockHolder(dir); held && p == pid {
				break
			}
			select {
			case <-ended:
				t.Fatalf("the child ended: %s", errs)
			case <-time.After(5 * time.Millisecond):
			}
		}
		refusedChild := fmt.Sprintf("ddtsim: %s: another ddtsim process (PID %d) is saving a scan there: wait for it to end, or save elsewhere\n", dir, pid)
		code, _, e := runT("--save", dir, src)
		if code != exitFailed || e != refusedChild {
			t.Errorf("second writer: exit %d, stderr %q; want exit %d, stderr %q", code, e, exitFailed, refusedChild)
		}
		code, _, e = runT("resume", dir)
		wantRunning := fmt.Sprintf("ddtsim: %s: no checkpoint written yet: the scan saving there (PID %d) is still running; it saves at its first checkpoint (--checkpoint, every 5m by default), when interrupted (Ctrl-C, SIGTERM) and at its end\n", dir, pid)
		if code != exitFailed || e != wantRunning {
			t.Errorf("resume while it runs: exit %d, stderr %q; want exit %d, stderr %q", code, e, exitFailed, wantRunning)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-ended
		if _, held := saved.LockHolder(dir); held {
			t.Fatalf("the lock is still held after the writer was killed")
		}
		code, _, e = runT("resume", dir)
		want := fmt.Sprintf("ddtsim: %s: no checkpoint was written: the scan saving there (PID %d) was stopped before its first checkpoint (--checkpoint, every 5m by default) and saved nothing; run the scan again with --save %s\n", dir, pid, dir)
		if code != exitFailed || e != want {
			t.Errorf("resume after the kill: exit %d, stderr %q; want exit %d, stderr %q", code, e, exitFailed, want)
		}
		if code, _, e := runT("--save", dir, src); code != 0 {
			t.Errorf("save after the kill: exit %d: %s", code, e)
		}
	})

	t.Run("never saved", func(t *testing.T) {
		dir := dir + "-none"
		code, _, e := runT("resume", dir)
		want := fmt.Sprintf("ddtsim: %s: no saved scan there (no such file or directory): a scan killed before its first checkpoint (--checkpoint, every 5m by default) saves nothing; run it again with --save %s, or check the name\n", dir, dir)
		if code != exitFailed || e != want {
			t.Errorf("resume of nothing: exit %d, stderr %q; want exit %d, stderr %q", code, e, exitFailed, want)
		}
	})
}

// TestSaveFullDiskMessage: when the disk is full at the end of a scan
// with --save, every line of the message starts with "ddtsim: " (the
// partitions' errors come joined, one per line, from the partitions
// written at once), and the last says what DIR holds: the previous save,
// kept, or nothing (issue 29, item 10).
func TestSaveFullDiskMessage(t *testing.T) {
	t.Parallel()
	joined := errors.Join(errors.New("write a/part-00.parquet: no space left on device"), errors.New("write a/part-01.parquet: no space left on device"))
	if got, want := prefixLines("saving the scan in a: "+joined.Error()),
		"ddtsim: saving the scan in a: write a/part-00.parquet: no space left on device\nddtsim: write a/part-01.parquet: no space left on device\n"; got != want {
		t.Errorf("prefixLines gave %q, want %q", got, want)
	}
	src := t.TempDir()
	testkit.Write(t, filepath.Join(src, "f"), testkit.Rand(5, 600<<10))
	full := testEnv()
	full.saveWriter = &saved.Writer{CreateFault: func(string) error { return syscall.ENOSPC }}

	dir := filepath.Join(t.TempDir(), "scan")
	if code, _, errs := runT("--save", dir, src); code != 0 {
		t.Fatalf("first save: exit %d: %s", code, errs)
	}
	before, err := saved.ReadHeader(dir)
	if err != nil {
		t.Fatal(err)
	}
	check := func(dir, last string) {
		t.Helper()
		code, out, errs := runWith(full, "-o", "recordsize=4K", "--save", dir, src)
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if code != exitFailed || out == "" || len(lines) < 2 {
			t.Fatalf("exit %d, stdout %d bytes, stderr %q; want exit %d, the report, and the errors", code, len(out), errs, exitFailed)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "ddtsim: ") {
				t.Errorf("line without the ddtsim: prefix: %q", l)
			}
		}
		if !strings.HasPrefix(lines[0], "ddtsim: saving the scan in "+dir+": ") || !strings.HasSuffix(lines[0], ": no space left on device") {
			t.Errorf("first line %q", lines[0])
		}
		if got := lines[len(lines)-1]; got != last {
			t.Errorf("last line %q, want %q", got, last)
		}
	}
	check(dir, fmt.Sprintf("ddtsim: the previous save in %s is kept: the complete scan saved there %s", dir, before.Created.Format(time.RFC3339)))
	if after, err := saved.ReadHeader(dir); err != nil || !after.Created.Equal(before.Created) || after.Model.RecordSize != before.Model.RecordSize {
		t.Errorf("%s changed by the failed save (%v)", dir, err)
	}
	fresh := filepath.Join(t.TempDir(), "new")
	check(fresh, "ddtsim: nothing is saved in "+fresh+": it is as it was before the scan")
}
