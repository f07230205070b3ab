package main

import (
	"runtime"
	"sync/atomic"
	"testing"
)

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
