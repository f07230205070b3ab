// Package testseam holds the test seams of package source, nil (or zero)
// outside tests. The tests of the packages that read through a source
// (analyzer, sweep, scan, source itself, and the command) set them to make
// a file vanish or change before it is opened, to make a read fail, come
// back short or slow, or to split files of a sharded scan into small
// chunks; nothing else may set them.
package testseam

import (
	"sync/atomic"
	"time"
)

var (
	// BeforeOpen, when set, runs before the walker opens path.
	BeforeOpen func(path string)
	// OpenFault, when set, runs before the walker opens path (after
	// BeforeOpen); a non-nil error is the open's (as EACCES is for a
	// mode-000 file, which root, running the tests, can always open).
	OpenFault func(path string) error
	// ReadFault, when set, runs before each read of a walked file at byte
	// offset off; a non-nil error replaces the read (as an EIO would).
	// It may also change the file.
	ReadFault func(path string, off uint64) error
	// Read, when set, runs before each read of a walked file (after
	// ReadFault, when that let the read go on): n bytes asked at byte
	// offset off. What it returns is what becomes of that read (see
	// Fault). It may also change the file, or wait. It is called from
	// several goroutines at once.
	Read func(path string, off uint64, n int) Fault
	// ShardSplitBytes > 0 replaces source.ShardSplitBytes (1 GiB), the
	// size beyond which a sharded walk splits a file into chunks, so that
	// tests split small files.
	ShardSplitBytes uint64
)

// Fault is what Read makes of one read. The zero Fault lets it be.
type Fault struct {
	// Delay: the read waits this long first (a slow disk, a network file
	// system); then it happens as the other fields say.
	Delay time.Duration
	// Err non-nil: the read fails with it, nothing read (an EIO).
	Err error
	// Short in [1, n): only the first Short bytes asked are read, and
	// the read returns them with a nil error, as a read(2) of a network
	// file system may (an io.ReaderAt breaking its contract). An error
	// reading those bytes (the end of the file) is returned as it is.
	// Short ≤ 0 or ≥ n: the whole read.
	Short int
}

// ShortReads sets Read so that every read returns only short(n) of the n
// bytes asked (Fault.Short), until restore is called; reads says how many
// reads went through it so far. For tests that check a scan of short reads
// equals a clean one (and that the seam was reached at all).
func ShortReads(short func(n int) int) (reads func() int64, restore func()) {
	var count atomic.Int64
	Read = func(path string, off uint64, n int) Fault {
		count.Add(1)
		return Fault{Short: short(n)}
	}
	return count.Load, func() { Read = nil }
}
