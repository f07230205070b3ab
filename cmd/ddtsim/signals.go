package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// interruptContext returns a context that the first SIGINT or SIGTERM
// cancels. After that signal the default action is restored, so a second
// one ends the process at once. code reports the exit status for the
// signal received: 130 for SIGINT, 143 for SIGTERM (128 + its number), or 0.
func interruptContext(parent context.Context) (ctx context.Context, code func() int, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	var got atomic.Int32
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			got.Store(int32(128 + sig.(syscall.Signal)))
			signal.Stop(ch)
			cancel()
		case <-ctx.Done():
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
	return ctx, code, func() { signal.Stop(ch); cancel() }
}
