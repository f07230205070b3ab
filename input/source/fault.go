package source

import (
	"io"
	"time"

	"github.com/ddtsim/ddtsim/internal/testseam"
)

// The test seams of the readers (testseam.ReadFault, testseam.Read): a
// read may be made to fail, to come back short with no error, or to wait.
// Outside tests both are nil and the readers read straight through.

// faults reports whether a test seam of reading is set.
func faults() bool { return testseam.ReadFault != nil || testseam.Read != nil }

// faultyRead is a read of len(p) bytes at off from r, the file of stamp
// s, as the test seams make it.
func (s *stamp) faultyRead(r io.ReaderAt, p []byte, off int64) (int, error) {
	if f := testseam.ReadFault; f != nil {
		if err := f(s.path, uint64(off)); err != nil {
			return 0, err
		}
	}
	if f := testseam.Read; f != nil {
		ft := f(s.path, uint64(off), len(p))
		if ft.Delay > 0 {
			time.Sleep(ft.Delay)
		}
		if ft.Err != nil {
			return 0, ft.Err
		}
		if ft.Short > 0 && ft.Short < len(p) {
			n, err := r.ReadAt(p[:ft.Short], off)
			if err == io.EOF && n == ft.Short {
				// All the bytes asked of the underlying reader came:
				// a short read says nothing of the end.
				err = nil
			}
			return n, err
		}
	}
	return r.ReadAt(p, off)
}
