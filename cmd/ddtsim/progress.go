package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ddtsim/ddtsim/analyzer"
)

// startProgress shows a progress bar on stderr while a scan runs, only when
// stderr is a terminal. The returned function stops it.
func startProgress(p *analyzer.Progress, stderr io.Writer) (stop func()) {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(f),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription("scanning"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				bar.ChangeMax64(max(p.BytesPending.Load(), 1))
				bar.Set64(p.BytesDone.Load())
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
		bar.Finish()
		bar.Clear()
	}
}
