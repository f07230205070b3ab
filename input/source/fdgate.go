package source

import (
	"sync"
	"syscall"
	"time"
)

// Out of descriptors. Under a low limit of open files (ulimit -n) the
// files the walk hands on (yielded, read by the scan's workers, closed by
// them) can take every descriptor left, and the walk's next open fails
// with EMFILE. That is not the file's fault: the walk then waits for one
// of the files it handed on to be closed and opens again, so that the
// result is complete, only slower. When none is open (nothing will come
// back), or none came back for fdWaitMax, the error stands and the file is
// a problem as before. Opening ahead is off under such limits
// (PlentyOfFiles).

// fdWaitMax bounds the wait for a descriptor with no file closed
// meanwhile (a file held open for ever by something else than the scan).
const fdWaitMax = 10 * time.Second

// handedOn counts the files of osReaders open (opened by the walk, closed
// by whoever reads them), and released is closed (and replaced) each time
// one closes.
var handedOn = struct {
	sync.Mutex
	open     int
	released chan struct{}
}{released: make(chan struct{})}

// handOn notes an osReader's descriptor open.
func handOn() {
	handedOn.Lock()
	handedOn.open++
	handedOn.Unlock()
}

// handBack notes an osReader's descriptor closed (or given to another
// owner), waking the opens waiting for one.
func handBack() {
	handedOn.Lock()
	handedOn.open--
	close(handedOn.released)
	handedOn.released = make(chan struct{})
	handedOn.Unlock()
}

// releaseSignal is the channel closed at the next handBack, and whether
// any file is open to be handed back.
func releaseSignal() (<-chan struct{}, bool) {
	handedOn.Lock()
	defer handedOn.Unlock()
	return handedOn.released, handedOn.open > 0
}

// retryOutOfFDs runs open, and while it fails for want of descriptors
// (EMFILE, ENFILE) with files handed on still open, waits for one of them
// to close and runs it again (see above).
func retryOutOfFDs(open func() (int, bool, error)) (int, bool, error) {
	waited := time.Duration(0)
	for {
		released, some := releaseSignal() // before the open: a close during it counts
		fd, noatime, err := open()
		if (err != syscall.EMFILE && err != syscall.ENFILE) || !some || waited >= fdWaitMax {
			return fd, noatime, err
		}
		start := time.Now()
		t := time.NewTimer(fdWaitMax - waited)
		select {
		case <-released:
			waited = 0
		case <-t.C:
			waited += time.Since(start)
		}
		t.Stop()
	}
}
