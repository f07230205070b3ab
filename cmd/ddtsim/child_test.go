package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/source"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// faultChild prepares the test binary run as ddtsim (TestMain) as the
// parent test asks through the environment, and returns the env ddtsim
// runs in there (the process's own GOMAXPROCS, the faults asked):
//
//   - DDTSIM_TEST_NOFILE_SPARE=K: RLIMIT_NOFILE (soft and hard) such that
//     K file descriptors are free beyond those open now, measured here;
//     the limit of the test process itself is left alone.
//   - DDTSIM_TEST_HOLD=PATH, DDTSIM_TEST_HOLD_UNTIL=PATH2: the reads of
//     PATH wait until the walk is about to open PATH2 (source.Faults), so
//     that PATH stays open meanwhile.
func faultChild() (*env, error) {
	e := &env{}
	if hold := os.Getenv("DDTSIM_TEST_HOLD"); hold != "" {
		until := os.Getenv("DDTSIM_TEST_HOLD_UNTIL")
		reached := make(chan struct{})
		var once sync.Once
		e.faults = &source.Faults{
			BeforeOpen: func(path string) {
				if path == until {
					once.Do(func() { close(reached) })
				}
			},
			Read: func(path string, off uint64, n int) source.Fault {
				if path == hold {
					<-reached
				}
				return source.Fault{}
			},
		}
	}
	spare := os.Getenv("DDTSIM_TEST_NOFILE_SPARE")
	if spare == "" {
		return e, nil
	}
	k, err := strconv.Atoi(spare)
	if err != nil {
		return nil, err
	}
	return e, childFileLimit(k)
}

// selfArgs and selfCommand: testkit.SelfArgs, SelfCommand.
var selfArgs, selfCommand = testkit.SelfArgs, testkit.SelfCommand

// runChild runs this test binary as ddtsim with args and the environment
// env added, and returns its exit status, stdout and stderr. It ends the
// test if the child does not end within two minutes.
func runChild(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	prog, a := selfArgs(args...)
	return runProgram(t, fmt.Sprintf("ddtsim %q", args), env, prog, a...)
}

// runProgram runs prog with args, this test binary running as ddtsim
// (DDTSIM_TEST_RUN_MAIN=1) with env added, and returns its exit status,
// stdout and stderr; what names the run if it does not end within two
// minutes (the test then ends).
func runProgram(t *testing.T, what string, env []string, prog string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(append(os.Environ(), "DDTSIM_TEST_RUN_MAIN=1"), env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s did not end: stderr %q", what, errs.String())
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errs.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errs.String()
}

// figures is what a --json report says of the data scanned: the
// histogram, its total, and the counters, less those named.
func figures(t *testing.T, jsonOut string, without ...string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(jsonOut), &doc); err != nil {
		t.Fatalf("%v: %.300q", err, jsonOut)
	}
	c, _ := doc["counters"].(map[string]any)
	for _, k := range append(without, "peak_rss") {
		if _, ok := c[k]; !ok {
			t.Fatalf("no counter %s in %v", k, c)
		}
		delete(c, k)
	}
	return map[string]any{"histogram": doc["histogram"], "total": doc["total"], "counters": c}
}

func sameFigures(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}
