package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ddtsim/ddtsim/scan"
)

// interruptContext returns a context that the first SIGINT, SIGTERM or
// SIGHUP cancels. A second one (more than signalEcho later) ends the
// process at once, by the signal's default action, after removing --mem's
// spill directories. code reports the exit status for the signal
// received: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP (128 + its
// number), or 0.
func interruptContext(parent context.Context) (ctx context.Context, code func() int, stop func()) {
	ch := early.Swap(nil)
	if ch == nil {
		c := make(chan os.Signal, 2)
		signal.Notify(c, interruptSignals()...)
		ch = &c
	}
	ctx, code, stopOn := interruptOn(parent, *ch, time.Now, endBySignal)
	return ctx, code, func() { signal.Stop(*ch); stopOn() }
}

// early holds the channel catchEarly gave Notify, until interruptContext
// (or releaseEarly) takes it: nil in the tests' own process.
var early atomic.Pointer[chan os.Signal]

// catchEarly catches the interrupt signals from the start of the process,
// holding one that comes before interruptContext for it.
func catchEarly() {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, interruptSignals()...)
	early.Store(&ch)
}

// releaseEarly gives the interrupt signals back their default action, for
// the commands that take no partial result; a signal caught before ends
// the process by that action now.
func releaseEarly() {
	ch := early.Swap(nil)
	if ch == nil {
		return
	}
	signal.Stop(*ch)
	select {
	case sig := <-*ch:
		dieBy(sig)
	default:
	}
}

// interruptSignals are the signals that end a scan early with its partial
// result printed and saved: SIGINT, SIGTERM, and SIGHUP (a lost SSH
// session: found by a new user, a hangup lost all since the last
// checkpoint) unless it was ignored when ddtsim started (nohup): Notify
// would undo that.
func interruptSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// interruptOn is interruptContext on the signals that arrive on ch, timed
// by now; a second interrupt calls end (which does not return in ddtsim).
func interruptOn(parent context.Context, ch <-chan os.Signal, now func() time.Time, end func(os.Signal)) (ctx context.Context, code func() int, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	var got atomic.Int32
	done := make(chan struct{})
	go func() {
		var first time.Time
		select {
		case sig := <-ch:
			got.Store(int32(128 + sig.(syscall.Signal)))
			first = now()
			cancel()
		case <-ctx.Done():
			return
		}
	second:
		select {
		case sig := <-ch:
			if now().Sub(first) < signalEcho {
				// The same signal sent to the process and its group
				// (timeout(1), a shell's kill 0) is not a second
				// Ctrl-C: the partial result is still printed and saved.
				goto second
			}
			end(sig)
		case <-done:
		}
	}()
	code = func() int {
		if c := got.Load(); c != 0 {
			return int(c)
		}
		if ctx.Err() != nil {
			return exitInterrupt
		}
		return 0
	}
	var once sync.Once
	return ctx, code, func() { once.Do(func() { close(done) }); cancel() }
}

// endBySignal ends the process on a second interrupt: by the signal's
// default action, after removing --mem's spill directories.
func endBySignal(sig os.Signal) {
	exiting.Lock() // for good: main waits for the signal
	os.Stderr.WriteString("ddtsim: second interrupt: ending now, without the partial result or its --save\n")
	scan.RemoveSpillDirs()
	dieBy(sig)
}

// dieBy ends the process by sig's default action, or with status 128 + its
// number where that action does not end it.
func dieBy(sig os.Signal) {
	signal.Reset(interruptSignals()...)
	raise(sig.(syscall.Signal))
	// Still here: the signal was ignored when ddtsim started (a
	// background job of a script), and Reset ignores it again.
	time.Sleep(100 * time.Millisecond)
	os.Exit(128 + int(sig.(syscall.Signal)))
}

// signalEcho is how soon after the first signal another one is taken for
// the same event (a signal to the process group reaches the process twice
// within microseconds), not for a second Ctrl-C.
const signalEcho = 500 * time.Millisecond

// exiting is taken by a second signal while it removes the spill
// directories and ends the process, and by main before it exits: the
// process then ends by the signal, not half-way through the removal with
// the status of a scan that lost its runs.
var exiting sync.Mutex
