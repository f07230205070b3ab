package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ddtsim/ddtsim/analyzer"
)

// progress draws a progress line on stderr while a scan runs, only when
// stderr is a terminal, and keeps warnings off that line.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	bar    *progressbar.ProgressBar // nil: no terminal
	quit   chan struct{}
	closed chan struct{}
}

// startProgress starts the progress line for p on stderr. The total is not
// known while the walk goes on, so the line shows bytes and files done and
// the rate, not a percentage that would move backwards.
func startProgress(p *analyzer.Progress, stderr io.Writer) *progress {
	pg := &progress{w: stderr}
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return pg
	}
	pg.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(f),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription("scanning"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionClearOnFinish(),
	)
	pg.quit = make(chan struct{})
	pg.closed = make(chan struct{})
	go func() {
		defer close(pg.closed)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-pg.quit:
				return
			case <-t.C:
				pg.mu.Lock()
				pg.bar.Describe(fmt.Sprintf("scanning: %d files, %s found so far", p.Files.Load(),
					humanBytes(p.BytesPending.Load())))
				pg.bar.Set64(p.BytesDone.Load())
				pg.mu.Unlock()
			}
		}
	}()
	return pg
}

// println prints a warning line on stderr, clearing the progress line
// first so the two do not mix.
func (pg *progress) println(line string) {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.bar != nil {
		pg.bar.Clear()
	}
	fmt.Fprintln(pg.w, line)
}

// stop removes the progress line.
func (pg *progress) stop() {
	if pg.bar == nil {
		return
	}
	close(pg.quit)
	<-pg.closed
	pg.mu.Lock()
	pg.bar.Finish()
	pg.bar.Clear()
	pg.mu.Unlock()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
