package analyzer

import (
	"context"
	"sync"
)

// DefaultFilesAhead is Options.FilesAhead when it is 0.
const DefaultFilesAhead = 4096

// window bounds how far the walk runs ahead of the oldest file it started
// that is not finished: a progress kept as a walk position (package saved's
// Tracker) must list every file finished after that position, and while
// one worker waits on a slow read (a hung NFS server) the others would
// finish an unbounded number of small files after it. With the window,
// the walk starts no file while max files it started, from the oldest
// not finished on, are not all finished: what the progress lists stays
// under max files whatever the tree and the reads.
type window struct {
	mu   sync.Mutex
	cond sync.Cond
	max  int
	ring []*file // started files in walk order, from the oldest not finished
	head int     // index in ring of the oldest
	n    int     // files in ring
}

func newWindow(max int) *window {
	w := &window{max: max, ring: make([]*file, max)}
	w.cond.L = &w.mu
	return w
}

// enter waits until fl may be started, then adds it; false when ctx was
// cancelled first.
func (w *window) enter(ctx context.Context, fl *file) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == w.max {
		stop := context.AfterFunc(ctx, func() {
			w.mu.Lock()
			w.cond.Broadcast()
			w.mu.Unlock()
		})
		defer stop()
		for w.n == w.max && ctx.Err() == nil {
			w.cond.Wait()
		}
		if w.n == w.max {
			return false
		}
	}
	w.ring[(w.head+w.n)%w.max] = fl
	w.n++
	return true
}

// leave marks fl, which enter added, finished (or abandoned), and moves
// the window past the files finished in order.
func (w *window) leave(fl *file) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fl.left = true
	moved := false
	for w.n > 0 && w.ring[w.head].left {
		w.ring[w.head] = nil
		w.head = (w.head + 1) % w.max
		w.n--
		moved = true
	}
	if moved {
		w.cond.Broadcast()
	}
}
