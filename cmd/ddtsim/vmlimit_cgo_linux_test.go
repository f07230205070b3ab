//go:build linux && cgo

package main

import (
	"fmt"
	"os"
	"testing"
)

// runUnderVMLimit runs this test binary as ddtsim with args under
// ulimit -v kib (RLIMIT_AS, set by sh before it execs the binary, so that
// the limit holds from the process's start) and returns its exit status,
// stdout and stderr.
func runUnderVMLimit(t *testing.T, kib string, args ...string) (int, string, string) {
	t.Helper()
	sh := append([]string{"-c", `ulimit -v "$1" && shift && exec "$0" "$@"`, os.Args[0], kib}, args...)
	return runProgram(t, fmt.Sprintf("ddtsim %q under ulimit -v %s", args, kib), nil, "sh", sh...)
}

// TestVirtualMemoryLimit: under ulimit -v 1500000 (issue 29, item 7) a
// scan and a sweep run (they died with SIGABRT: runtime/cgo:
// pthread_create failed, glibc's 64 MiB arena and 8 MiB stack per thread
// beside the Go runtime's reservations) and print what they print without
// the limit; under a limit too low for the Go runtime to start, one line
// names the limit and what to do, exit 1, instead of the runtime's fatal
// error and stack dump.
func TestVirtualMemoryLimit(t *testing.T) {
	t.Parallel()
	code, out, errs := runUnderVMLimit(t, "1500000", "--json", "-o", "compression=zstd", sampleDir)
	if code != 0 || errs != "" {
		t.Fatalf("scan under ulimit -v 1500000: exit %d, stderr %.600s", code, errs)
	}
	_, want, _ := runT("--json", "-o", "compression=zstd", sampleDir)
	sameFigures(t, "under ulimit -v 1500000", figures(t, out, "table_bytes"), figures(t, want, "table_bytes"))

	code, out, errs = runUnderVMLimit(t, "1500000", "sweep", "-o", "recordsize=16K,1M", "-o", "compression=lz4,gzip", sampleDir)
	_, want, _ = runT("sweep", "-o", "recordsize=16K,1M", "-o", "compression=lz4,gzip", sampleDir)
	if code != 0 || errs != "" || out != want {
		t.Errorf("sweep under ulimit -v 1500000: exit %d, stderr %.600s, stdout\n%s\nwant\n%s", code, errs, out, want)
	}

	code, out, errs = runUnderVMLimit(t, "500000", sampleDir)
	wantErr := "ddtsim: the virtual memory limit (ulimit -v) is 500000 KiB: too low to start; ddtsim's Go runtime reserves about 1 GiB of address space at start (little of it is used): raise the limit to at least 1572864 KiB (1.5 GiB), or lift it\n"
	if code != exitFailed || out != "" || errs != wantErr {
		t.Errorf("under ulimit -v 500000: exit %d, stdout %q, stderr %.600q; want exit %d, stderr %q", code, out, errs, exitFailed, wantErr)
	}
}
