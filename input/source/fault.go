package source

import (
	"io"
	"time"
)

// Faults are the test seams of a walk (Walker.Faults), for tests only:
// they make a file vanish or change before it is opened, fail to open, a
// read fail, come back short with no error or wait, the files of a
// sharded scan split into small chunks, the page cache policy's advice
// seen and cachestat(2) missing. Outside tests a walk has none (nil) and
// its readers read straight through. Each walk has its own, so that tests
// that set them may run in parallel. The funcs may be called from several
// goroutines at once.
type Faults struct {
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
	// Fault). It may also change the file, or wait.
	Read func(path string, off uint64, n int) Fault
	// ShardSplitBytes > 0 replaces ShardSplitBytes (1 GiB), the size
	// beyond which a sharded scan splits a file into chunks, in
	// Faults.ShardChunkBytes, so that tests split small files.
	ShardSplitBytes uint64
	// Fadvise, when set, sees every posix_fadvise(2) call of the page
	// cache policy (cache.go) before it is made: the descriptor, the
	// advice (unix.FADV_*) and the range (n 0: to the end of the file).
	Fadvise func(fd, advice int, off, n uint64)
	// NoCachestat makes cachestat(2) missing, as before Linux 6.5: the
	// page cache policy then asks mincore(2) what a file has cached.
	NoCachestat bool
}

// Fault is what Faults.Read makes of one read. The zero Fault lets it be.
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

// ShardChunkBytes is the package's ShardChunkBytes with f.ShardSplitBytes,
// when > 0, in place of ShardSplitBytes. f may be nil (no faults).
func (f *Faults) ShardChunkBytes(recordSize uint32) uint64 {
	if f != nil && f.ShardSplitBytes > 0 {
		return chunkBytes(recordSize, f.ShardSplitBytes)
	}
	return ShardChunkBytes(recordSize)
}

// reads reports whether f makes anything of the reads (ReadFault, Read).
func (f *Faults) reads() bool { return f != nil && (f.ReadFault != nil || f.Read != nil) }

// read is a read of len(p) bytes at off from r, the file at path, as the
// seams of reading make it.
func (f *Faults) read(path string, r io.ReaderAt, p []byte, off int64) (int, error) {
	if f.ReadFault != nil {
		if err := f.ReadFault(path, uint64(off)); err != nil {
			return 0, err
		}
	}
	if f.Read != nil {
		ft := f.Read(path, uint64(off), len(p))
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

// beforeOpen runs the seams of opening path (BeforeOpen, OpenFault); f
// may be nil.
func (f *Faults) beforeOpen(path string) error {
	if f == nil {
		return nil
	}
	if f.BeforeOpen != nil {
		f.BeforeOpen(path)
	}
	if f.OpenFault != nil {
		return f.OpenFault(path)
	}
	return nil
}
