package main

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNegativeJobsOneError: -j -1 (and --jobs -1, -j -5) is refused once,
// saying what is accepted, for every command with -j; not with kong's
// suggestion of --jobs="-1" that is then refused in turn (issue 29, item
// 11). A path after -- named like a number is left alone.
func TestNegativeJobsOneError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-j", "-1", dir},
		{"--jobs", "-1", dir},
		{"-j", "-5", dir},
		{"sweep", "-j", "-1", dir},
		{"merge", "-j", "-1", dir},
		{"resume", "-j", "-1", dir},
	} {
		code, out, errs := runT(args...)
		want := "ddtsim: --jobs " + args[len(args)-2] + ": invalid (accepted: 0 for one per CPU, or 1 to 256)\n"
		if code != exitUsage || errs != want || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", args, code, out, errs, exitUsage, want)
		}
	}
	if got := negativeJobs([]string{"-j", "2", "--", "-j", "-1"}); strings.Join(got, " ") != "-j 2 -- -j -1" {
		t.Errorf("negativeJobs rewrote %q", got)
	}
}

// TestJobsCapCPUs: -j N also caps the CPUs (GOMAXPROCS) when N is below
// them, for scan, sweep and compare; -j 0 and an N at or above them leave
// it. (Issue: -j 1 kept both cores busy, the walk and the opens ahead
// beside the worker.)
func TestJobsCapCPUs(t *testing.T) {
	t.Parallel()
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("one CPU: nothing to cap")
	}
	for _, c := range []struct {
		args []string
		want int64
	}{
		{[]string{"--zdb", "-j", "1", sampleDir}, 1},
		{[]string{"--zdb", sampleDir}, 0},
		{[]string{"--zdb", "-j", itoa(procs), sampleDir}, 0},
		{[]string{"--zdb", "-j", itoa(procs + 3), sampleDir}, 0},
		{[]string{"sweep", "-j", "1", "-o", "compression=off,lz4", sampleDir}, 1},
	} {
		// The last GOMAXPROCS the command asked for, 0 for none.
		var maxProcsSet atomic.Int64
		e := &env{setMaxProcs: func(n int) int {
			if n > 0 {
				maxProcsSet.Store(int64(n))
			}
			return runtime.GOMAXPROCS(0)
		}}
		code, _, errs := runWith(e, c.args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, code, errs)
		}
		if got := maxProcsSet.Load(); got != c.want {
			t.Errorf("%q: GOMAXPROCS set to %d, want %d (0: left)", c.args, got, c.want)
		}
	}
	if runtime.GOMAXPROCS(0) != procs {
		t.Errorf("the test process's GOMAXPROCS changed: %d, was %d", runtime.GOMAXPROCS(0), procs)
	}
}
