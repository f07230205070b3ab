//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// childFileLimit sets RLIMIT_NOFILE (soft and hard) of the child such
// that k file descriptors are free beyond those open now (faultChild's
// DDTSIM_TEST_NOFILE_SPARE), counted in /proc/self/fd.
func childFileLimit(k int) error {
	// The descriptors open: those listed that are still open once the
	// listing's own is closed. Listing also starts the runtime's poller,
	// whose descriptors stay.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	var open []int
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			open = append(open, fd)
		}
	}
	// The lowest limit under which k descriptors are free.
	lim := 0
	for ; ; lim++ {
		below := 0
		for _, fd := range open {
			if fd < lim {
				below++
			}
		}
		if lim-below == k {
			break
		}
	}
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: uint64(lim), Max: uint64(lim)})
}

// Out of file descriptors (EMFILE), for real: ddtsim run with a limit of
// open files that leaves 3 free at its start (issue 29, item 8: under
// ulimit -n 12, 303 files were errors "too many open files"). The
// directory walked holds one (its files are opened relative to it), the
// files handed on to the workers (queued, read) the others; the walk's
// open of the next file meets EMFILE, waits for one of them to be closed,
// and opens it then: no problem, exit 0, the figures exactly those of a
// scan without the limit. -j 2, and the first file's reads held until
// the walk is about to open the fourth, so that the files queued take
// every descriptor left before any is closed.
//
// With one free descriptor and --mem, the run the table spills to cannot
// be created while the file is read: one warning naming the spill
// directory and the reason, the table stays in memory, the figures are
// those of a scan without --mem, and the spill directory is removed at the
// end (its runs are closed before: Result.Close). With none, the spill
// directory is still made and removed.
func TestOutOfFileDescriptors(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to measure the descriptors open")
	}
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		var names []string
		for i := range 40 {
			name := filepath.Join(dir, fmt.Sprintf("f%02d", i))
			testkit.Write(t, name, testkit.Rand(int64(i%7), 200<<10+i)) // some alike, up to their last bytes
			names = append(names, name)
		}
		code, out, errs := runChild(t, []string{"DDTSIM_TEST_NOFILE_SPARE=3",
			"DDTSIM_TEST_HOLD=" + names[0], "DDTSIM_TEST_HOLD_UNTIL=" + names[3]},
			"--json", "-j", "2", dir)
		if code != 0 || errs != "" {
			t.Errorf("exit %d, stderr\n%s\nwant exit 0, nothing on stderr", code, errs)
		}
		wcode, want, werrs := runT("--json", "-j", "2", dir)
		if wcode != 0 {
			t.Fatalf("without the limit: exit %d, %s", wcode, werrs)
		}
		sameFigures(t, "figures", figures(t, out), figures(t, want))
	})

	t.Run("spill", func(t *testing.T) {
		dir, tmp := t.TempDir(), t.TempDir()
		big := filepath.Join(dir, "big") // named: no directory held open
		testkit.Write(t, big, testkit.Rand(8, 24<<20))
		args := []string{"--json", "-j", "1", "-o", "recordsize=512"}
		code, out, errs := runChild(t, []string{"DDTSIM_TEST_NOFILE_SPARE=1"},
			append(args, "--mem", "1M", "--tmpdir", tmp, big)...)
		prefix := "ddtsim: --mem: writing spill run to " + tmp + "/ddtsim-spill-"
		rest, found := strings.CutPrefix(errs, prefix)
		_, reason, _ := strings.Cut(rest, ": ")
		if code != 0 || !found || strings.Count(errs, "\n") != 1 ||
			reason != "too many open files; the table stays in memory from now on (it may grow past the limit); nothing scanned is lost\n" {
			t.Errorf("exit %d, stderr %q; want exit 0 and one warning %q…: too many open files; the table stays in memory…", code, errs, prefix)
		}
		wcode, want, werrs := runT(append(args, big)...)
		if wcode != 0 {
			t.Fatalf("without --mem: exit %d, %s", wcode, werrs)
		}
		// The table's memory differs, and the compressor runs may (a
		// content spilled and met again is compressed again: none here,
		// no run was written).
		sameFigures(t, "figures", figures(t, out, "table_bytes"), figures(t, want, "table_bytes"))
		if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
			t.Errorf("%d entries left in --tmpdir (%v)", len(left), err)
		}
	})

	// Not one descriptor free: the directory named cannot be listed (a
	// problem, exit 3, an empty result); the spill directory is made
	// (mkdir needs no descriptor) and removed all the same.
	t.Run("none", func(t *testing.T) {
		dir, tmp := t.TempDir(), t.TempDir()
		testkit.Write(t, filepath.Join(dir, "a"), testkit.Rand(9, 300<<10))
		code, out, errs := runChild(t, []string{"DDTSIM_TEST_NOFILE_SPARE=0"}, "--json", "--mem", "1M", "--tmpdir", tmp, dir)
		want := "ddtsim: " + dir + ": open: too many open files\n" +
			"ddtsim: completed with 1 error (see above); the result leaves out what could not be read\n"
		if code != exitWithErrors || errs != want {
			t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, errs, exitWithErrors, want)
		}
		_, empty, _ := runT("--json", t.TempDir())
		sameFigures(t, "figures", figures(t, out, "dirs", "errors", "directory_zaps"), figures(t, empty, "dirs", "errors", "directory_zaps"))
		if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
			t.Errorf("%d entries left in --tmpdir (%v)", len(left), err)
		}
	})
}
