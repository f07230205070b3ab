package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// progress draws a progress line on stderr while a scan runs, only when
// stderr is a terminal, and keeps warnings off that line.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	live   bool // stderr is a terminal: the line is drawn
	quit   chan struct{}
	closed chan struct{}
}

// startProgress starts the progress line for p on stderr, redrawn four
// times a second.
func startProgress(p *analyzer.Progress, stderr io.Writer) *progress {
	pg := &progress{w: stderr}
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return pg
	}
	pg.live = true
	pg.quit = make(chan struct{})
	pg.closed = make(chan struct{})
	start := time.Now()
	go func() {
		defer close(pg.closed)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-pg.quit:
				return
			case <-t.C:
				line := progressLine(p.Files.Load(), p.BytesDone.Load(), p.BytesPending.Load(), p.Walked.Load(), time.Since(start))
				pg.mu.Lock()
				fmt.Fprint(pg.w, "\r\x1b[K"+line)
				pg.mu.Unlock()
			}
		}
	}()
	return pg
}

// progressLine says how far a scan is, in zdb's units: while the walk
// goes on, what it found so far and the rate; once it has listed every
// file, the share of the total done and the time left at the rate so far.
func progressLine(files, done, total int64, walked bool, elapsed time.Duration) string {
	rate := ""
	if s := elapsed.Seconds(); s >= 1 {
		rate = ", " + nicenum.Format(uint64(float64(done)/s), true) + "/s"
	}
	if !walked || total <= 0 {
		return fmt.Sprintf("scanning: %s of %s found so far (%s; the walk goes on)%s",
			nicenum.Format(uint64(done), true), nicenum.Format(uint64(total), true), english.Count(files, "file"), rate)
	}
	line := fmt.Sprintf("scanning: %s of %s (%.0f%%, %s)%s", nicenum.Format(uint64(done), true),
		nicenum.Format(uint64(total), true), 100*float64(done)/float64(total), english.Count(files, "file"), rate)
	if done > 0 && done < total && elapsed >= time.Second {
		left := time.Duration(float64(elapsed) * float64(total-done) / float64(done)).Round(time.Second)
		line += ", about " + left.String() + " left"
	}
	return line
}

// println prints a warning line on stderr, clearing the progress line
// first so the two do not mix.
func (pg *progress) println(line string) {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.live {
		fmt.Fprint(pg.w, "\r\x1b[K")
	}
	fmt.Fprintln(pg.w, line)
}

// stop removes the progress line.
func (pg *progress) stop() {
	if !pg.live {
		return
	}
	close(pg.quit)
	<-pg.closed
	pg.mu.Lock()
	fmt.Fprint(pg.w, "\r\x1b[K")
	pg.mu.Unlock()
}
