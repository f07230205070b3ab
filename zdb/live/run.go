// Package live runs `zdb -S` on a live pool, read-only, and returns what it
// printed or a typed error (ErrNotFound, ErrTimeout, ErrOutputTooLong,
// *ExitError); CheckPoolName refuses what OpenZFS would not take for a pool
// name (module/zcommon/zfs_namecheck.c) before anything runs. What zdb
// printed is read by package zdb.
package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Executable is the name LookPath (and Run without RunOptions.Path) looks
// up on PATH.
const Executable = "zdb"

// RunOptions say how Run runs zdb -S.
type RunOptions struct {
	// Path is the zdb executable; "" looks Executable up on PATH.
	Path string
	// Exported: the pool is not imported; zdb -e reads it from its disks,
	// from the devices in Dir when Dir is set (zdb -e -p DIR).
	Exported bool
	Dir      string
	// Timeout stops zdb after this long; 0: no limit.
	Timeout time.Duration
}

// Output is what zdb printed.
type Output struct {
	Stdout []byte // at most MaxStdout bytes
	Stderr string // at most MaxStderr bytes
}

// Output limits: zdb -S prints a few dozen lines.
const (
	MaxStdout = 16 << 20
	MaxStderr = 64 << 10
)

// Errors of LookPath and Run.
var (
	// ErrNotFound: there is no zdb on PATH.
	ErrNotFound = errors.New("zdb not found on PATH")
	// ErrTimeout: zdb ran longer than RunOptions.Timeout and was stopped.
	ErrTimeout = errors.New("did not finish in time and was stopped")
	// ErrOutputTooLong: zdb printed more than MaxStdout bytes, which is no
	// zdb -S output.
	ErrOutputTooLong = fmt.Errorf("printed more than %d MiB: this is not zdb -S output", MaxStdout>>20)
)

// ExitError is Run's error when zdb ran and exited with a status other
// than 0 (or was killed by a signal).
type ExitError struct {
	Status string // as os.ProcessState says it: "exit status 1", "signal: killed"
	Stderr string // what zdb printed on stderr
}

// Error says "zdb failed (STATUS): " and zdb's message (its last 2000
// bytes), or "without a message".
func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 2000 {
		msg = "..." + msg[len(msg)-2000:]
	}
	s := "zdb failed (" + e.Status + ")"
	if msg != "" {
		return s + ": " + msg
	}
	return s + " without a message"
}

// PermissionDenied reports whether zdb's message says it was not allowed
// to open the pool (zdb needs root).
func (e *ExitError) PermissionDenied() bool {
	lower := strings.ToLower(e.Stderr)
	return strings.Contains(lower, "permission denied") || strings.Contains(lower, "operation not permitted") ||
		strings.Contains(lower, "eacces") || strings.Contains(lower, "eperm")
}

// NoSuchPool reports whether zdb's message says the pool (or a device of
// it) was not found: a pool that is not imported is read with
// RunOptions.Exported.
func (e *ExitError) NoSuchPool() bool {
	lower := strings.ToLower(e.Stderr)
	return strings.Contains(lower, "no such file or directory") || strings.Contains(lower, "no such pool")
}

// CheckPoolName accepts what OpenZFS accepts as a pool name
// (module/zcommon/zfs_namecheck.c: pool_namecheck()): a letter first, then
// letters, digits, '_', '-', '.', ':' and spaces, fewer than 256
// characters. Anything else (a dataset path, an option) is refused before
// zdb runs.
func CheckPoolName(name string) error {
	switch {
	case name == "":
		return errors.New("empty pool name")
	case len(name) >= 256:
		return errors.New("pool names are shorter than 256 characters")
	case strings.ContainsAny(name, "/@#"):
		return errors.New("a pool name, not a dataset or snapshot, is expected")
	case !isLetter(name[0]):
		return errors.New("a pool name begins with a letter")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && !strings.ContainsRune("_-.: ", rune(c)) {
			return fmt.Errorf("character %q is not allowed in a pool name", c)
		}
	}
	return nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Args is zdb's argument vector for a zdb -S of pool: -S POOL, with -e
// [-p DIR] first for an exported pool.
func Args(pool string, opts RunOptions) []string {
	var args []string
	if opts.Exported {
		args = append(args, "-e")
		if opts.Dir != "" {
			args = append(args, "-p", opts.Dir)
		}
	}
	return append(args, "-S", pool)
}

// LookPath finds zdb on PATH; its error wraps ErrNotFound.
func LookPath() (string, error) {
	path, err := exec.LookPath(Executable)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return path, nil
}

// Run runs zdb -S on pool (read-only): with the arguments Args gives, no
// shell, stdin closed, in the C locale (so %.2f prints a decimal point),
// stopping it after opts.Timeout or when ctx is done. It returns what zdb
// printed, also on error (as far as it got). Its errors: a pool name
// CheckPoolName refuses, ErrNotFound, ErrTimeout, ErrOutputTooLong,
// *ExitError, ctx's error, or that zdb could not be started.
func Run(ctx context.Context, pool string, opts RunOptions) (Output, error) {
	if err := CheckPoolName(pool); err != nil {
		return Output{}, fmt.Errorf("pool %q: %w", pool, err)
	}
	path := opts.Path
	if path == "" {
		var err error
		if path, err = LookPath(); err != nil {
			return Output{}, err
		}
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path, Args(pool, opts)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Stdin = nil
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = MaxStdout, MaxStderr
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// After zdb is killed, do not wait for children that hold its pipes.
	cmd.WaitDelay = 3 * time.Second
	err := cmd.Run()
	out := Output{Stdout: stdout.Bytes(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil && stdout.cut:
		return out, ErrOutputTooLong
	case err == nil:
		return out, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return out, fmt.Errorf("%w (after %s)", ErrTimeout, opts.Timeout)
	case ctx.Err() != nil:
		return out, ctx.Err()
	case errors.As(err, &exitErr):
		return out, &ExitError{Status: exitErr.String(), Stderr: out.Stderr}
	}
	return out, fmt.Errorf("could not run %s: %w", path, err)
}

// limitedBuffer keeps the first max bytes written to it and drops the
// rest. (It has no ReadFrom, so io.Copy goes through Write.)
type limitedBuffer struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.cut = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *limitedBuffer) Bytes() []byte  { return b.buf.Bytes() }
func (b *limitedBuffer) String() string { return b.buf.String() }

// Job is a zdb run going on in the background (Start), typically beside
// the scan whose prediction its output is compared with.
type Job struct {
	cancel context.CancelFunc
	done   chan struct{}
	out    Output
	err    error
}

// Start runs zdb -S on pool (Run) in the background. failed, when not
// nil, is called as soon as the run fails, so that work waiting for its
// output can stop early.
func Start(ctx context.Context, pool string, opts RunOptions, failed func()) *Job {
	ctx, cancel := context.WithCancel(ctx)
	j := &Job{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.out, j.err = Run(ctx, pool, opts)
		if j.err != nil && failed != nil {
			failed()
		}
	}()
	return j
}

// Cancel stops the run (Wait then returns ctx's error).
func (j *Job) Cancel() { j.cancel() }

// Wait waits for the run to end and returns what Run returned.
func (j *Job) Wait() (Output, error) {
	<-j.done
	j.cancel()
	return j.out, j.err
}
