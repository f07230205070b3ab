package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// interruptContext returns a context that the first SIGINT or SIGTERM
// cancels. A second one ends the process at once, by the signal's default
// action, after removing --mem's spill directories. code reports the exit
// status for the signal received: 130 for SIGINT, 143 for SIGTERM (128 +
// its number), or 0.
func interruptContext(parent context.Context) (ctx context.Context, code func() int, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	var got atomic.Int32
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			got.Store(int32(128 + sig.(syscall.Signal)))
			cancel()
		case <-ctx.Done():
			return
		}
		select {
		case sig := <-ch:
			exiting.Lock() // for good: main waits for the signal
			removeSpillDirs()
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
			// Still here: the signal was ignored when ddtsim started
			// (a background job of a script), and Reset ignores it
			// again.
			time.Sleep(100 * time.Millisecond)
			os.Exit(128 + int(sig.(syscall.Signal)))
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
	return ctx, code, func() { once.Do(func() { signal.Stop(ch); close(done) }); cancel() }
}

// exiting is taken by a second signal while it removes the spill
// directories and ends the process, and by main before it exits: the
// process then ends by the signal, not half-way through the removal with
// the status of a scan that lost its runs.
var exiting sync.Mutex
