package main

import (
	"bytes"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"

	"golang.org/x/sys/unix"
)

// fitVMLimit sets the Go runtime's soft memory limit (debug.SetMemoryLimit)
// under a limit of virtual memory (RLIMIT_AS, ulimit -v), so that the
// collector works harder before the heap runs into it rather than the
// process dying out of memory: the Go memory in use now plus three
// quarters of the address space left (the limit less VmSize, which counts
// the runtime's reservations). GOMEMLIMIT, when set, decides instead. The
// C side (vmlimit_cgo_linux.go) has already made threads cheaper, or
// refused a limit too low to start. It returns the limit set (0: none).
func fitVMLimit() int64 {
	var rl unix.Rlimit
	if os.Getenv("GOMEMLIMIT") != "" || unix.Getrlimit(unix.RLIMIT_AS, &rl) != nil || rl.Cur == unix.RLIM_INFINITY {
		return 0
	}
	used := vmSize()
	if used <= 0 || uint64(used) >= rl.Cur {
		return 0
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	limit := int64(s[0].Value.Uint64()) + (int64(rl.Cur)-used)/4*3
	debug.SetMemoryLimit(limit)
	return limit
}

// vmSize is the process's virtual memory size (VmSize in
// /proc/self/status), bytes; 0 when unknown.
func vmSize() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("\nVmSize:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(" kB"))), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}
