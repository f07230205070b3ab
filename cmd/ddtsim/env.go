package main

import (
	"io"
	"os"
	"runtime"

	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/saved"
)

// env is what the commands take from their process beyond their flags and
// streams. main's is nil: the process's own. The tests, which run the
// commands in their own process, give each command theirs (testEnv), so
// that a command does not change the test process's GOMAXPROCS, and a
// test's faults and hooks reach its own commands only: no package variable
// holds them, and tests may run in parallel.
type env struct {
	// setMaxProcs, when set, replaces runtime.GOMAXPROCS for capCPUs
	// (tests record the calls instead).
	setMaxProcs func(n int) int
	// faults, for tests: the walk's test seams of every scan and sweep
	// the command runs (source.Faults); nil outside tests.
	faults *source.Faults
	// done, for tests: runs after each run of records a scan accounts
	// (scan.Options.Done), to interrupt it at a chosen point; nil
	// outside tests.
	done func()
	// stdin, when set, is where "-" reads from instead of os.Stdin.
	stdin io.Reader
	// minMem, when set, replaces the smallest --mem accepted, bytes
	// (tests lower it to make tiny tables spill).
	minMem uint64
	// saveWriter, for tests: writes --save and its checkpoints
	// (scan.Options.SaveWriter: a full disk); nil outside tests.
	saveWriter *saved.Writer
	// caught, for tests: runs in runMain once the interrupt signals are
	// caught, before the flags are parsed (a test sends one there).
	caught func()
}

// maxProcs is runtime.GOMAXPROCS(n), or what replaces it in e (e may be
// nil).
func (e *env) maxProcs(n int) int {
	if e == nil || e.setMaxProcs == nil {
		return runtime.GOMAXPROCS(n)
	}
	return e.setMaxProcs(n)
}

// sourceFaults is e.faults; nil for a nil e.
func (e *env) sourceFaults() *source.Faults {
	if e == nil {
		return nil
	}
	return e.faults
}

// doneHook is e.done; nil for a nil e.
func (e *env) doneHook() func() {
	if e == nil {
		return nil
	}
	return e.done
}

// input is e.stdin, or the process's standard input for a nil e.
func (e *env) input() io.Reader {
	if e == nil || e.stdin == nil {
		return os.Stdin
	}
	return e.stdin
}

// memFloor is the smallest --mem accepted, bytes: defaultMinMem, or
// e.minMem when set.
func (e *env) memFloor() uint64 {
	if e == nil || e.minMem == 0 {
		return defaultMinMem
	}
	return e.minMem
}

// saveWriterSeam is e.saveWriter; nil for a nil e.
func (e *env) saveWriterSeam() *saved.Writer {
	if e == nil {
		return nil
	}
	return e.saveWriter
}
