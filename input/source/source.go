package source

import (
	"context"
	"errors"
	"io"
	"os"
	"sort"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/text/escape"
)

// Source yields the files a prediction covers.
type Source interface {
	// Walk calls yield for every file, one at a time, from the calling
	// goroutine, and returns what it counted. Each File passed to yield
	// is open: the consumer must Close it (typically after reading it,
	// possibly from another goroutine, once yield has returned). Problems
	// with single paths go to warn (nil discards them), each call one
	// path not read, or not read fully; they do not stop the walk. Walk
	// returns early when ctx is cancelled.
	Walk(ctx context.Context, yield func(*File), warn func(path string, err error)) Counters
}

// File is one file a Source yields: a regular file or a block device.
type File struct {
	Path string // as the walk reached it (under the path named)
	Arg  int    // index of the path named under which it was found
	Dev  uint64 // st_dev of the file
	Ino  uint64 // st_ino of the file
	Size uint64 // bytes, when opened (a block device: its size)
	// Mtime is the modification time when opened, nanoseconds since the
	// epoch.
	Mtime int64
	// Regular is true for a regular file, false for a block device.
	Regular bool
	// LooksSparse: st_blocks × 512 < st_size, so holes are likely and
	// cp --sparse=auto would copy it sparse. Always false for a device.
	LooksSparse bool
	// Data are the extents of the file holding data, sorted, disjoint,
	// within [0, Size); nil means all data (nothing mapped), empty all
	// hole. Only files that look sparse are mapped.
	Data []Extent
	// Reader reads the file's bytes.
	Reader Reader

	// The file's share in a sharded walk (Walker.Shard); zero values
	// otherwise: the whole file.
	//
	// FS names the file's file system alike on every machine that mounts
	// the tree the same way (see Shard); (FS, Ino) is the file's identity.
	FS string
	// Shard is the walk's shard.
	Shard Shard
	// Chunk > 0: the file is split into chunks of Chunk bytes (chunk c is
	// bytes [c·Chunk, (c+1)·Chunk), a whole number of records, the last
	// one shorter), of which this shard takes those Takes says. 0: the
	// file is one chunk, this shard's (a walk yields only files it
	// takes some of).
	Chunk uint64
	// Uncounted: another shard, the owner of the file's chunk 0, counts
	// the file (Counters.Files, LogicalBytes; a scan's progress); this
	// one reads its chunks only.
	Uncounted bool

	// cache drops what reading the file brought into the page cache
	// (Walker.KeepCache, cache.go); nil: nothing to do.
	cache pageCacher
}

// Takes reports whether the walk that yielded f takes chunk c of it
// (File.Chunk): always outside a sharded walk.
func (f *File) Takes(c uint64) bool { return f.Shard.Owns(f.FS, f.Ino, c) }

// takesAny reports whether the walk takes any chunk of f.
func (f *File) takesAny() bool {
	return f.Shard.ownsAny(f.FS, f.Ino, 0, chunks(f.Size, f.Chunk))
}

// Extent is a range of a file holding data, [Off, End) in bytes (the
// same type as a guest disk's allocated range).
type Extent = vdisk.Extent

// Reader is how the bytes of a File are read. ReadAt may be called from
// several goroutines at once.
type Reader interface {
	io.ReaderAt
	// Changed reports a file that is no longer what it was when opened
	// (size or modification time) with an error wrapping ErrChanged that
	// says how; nil when unchanged or when the source cannot tell.
	Changed() error
	io.Closer
}

// ReadAt reads len(p) bytes at byte offset off, as io.ReaderAt: fewer
// only with an error saying why (io.EOF at the file's end).
//
// A Reader's read that returns fewer bytes with no error (a network file
// system's read(2) may; io.ReaderAt forbids it, but not every reader
// keeps to that) is followed by reads of the rest. The consumers take a
// short read for the file's end: found by TestShortReads, a file read in
// halves was counted as shrinking at its first record, its figures lost
// (the analyzer's and the sweep's alike). A reader that keeps returning
// nothing and no error fails with io.ErrNoProgress.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.Reader.ReadAt(p, off)
	for empty := 0; n < len(p) && err == nil; {
		var m int
		m, err = f.Reader.ReadAt(p[n:], off+int64(n))
		n += m
		if m > 0 {
			empty = 0
		} else if empty++; empty == maxEmptyReads && err == nil {
			err = io.ErrNoProgress
		}
	}
	if f.cache != nil {
		f.cache.read(uint64(off), n)
	}
	return n, err
}

// Prefetch asks the system to start reading bytes [off, off+n) of f into
// the page cache and returns without waiting (posix_fadvise(2)
// POSIX_FADV_WILLNEED, where the platform has it: Linux, FreeBSD;
// nothing elsewhere). A consumer that reads scattered records and knows
// them ahead (--read: Walker.RandomReads) asks for each before it is
// read, so that the disk has many reads at once instead of one a worker
// (scripts/bench-read.sh). It does nothing for a file not opened or read
// through a virtual disk image. What it brings in is dropped with the
// rest of what reading f brought in (Walker.KeepCache).
func (f *File) Prefetch(off, n uint64) {
	if r, ok := f.Reader.(*osReader); ok && r.fd >= 0 && n > 0 {
		fadvise(r.faults, r.fd, off, n, fadvWillneed)
	}
}

// maxEmptyReads is how many reads in a row may return nothing and no
// error before File.ReadAt gives up (as bufio does).
const maxEmptyReads = 100

// Opened reports whether f was opened: false for a file Walker.Opens
// said is not to be read, whose Reader reads nothing.
func (f *File) Opened() bool {
	_, no := f.Reader.(unopenedReader)
	return !no
}

// unopenedReader is the Reader of a file the walk did not open
// (Walker.Opens): every read fails, saying so. It points to its File, for
// the path: a pointer, so that making it a Reader allocates nothing.
type unopenedReader struct{ f *File }

func (r unopenedReader) ReadAt(p []byte, off int64) (int, error) {
	return 0, &os.PathError{Op: "read", Path: r.f.Path, Err: errors.New("not opened: the walk was told nothing of it would be read")}
}

func (unopenedReader) Changed() error { return nil }

func (unopenedReader) Close() error { return nil }

// Changed is f.Reader.Changed: an error wrapping ErrChanged when the file
// changed since it was opened. Call it once all its reading is done.
func (f *File) Changed() error { return f.Reader.Changed() }

// Close closes the file, first dropping from the page cache what reading
// it brought in (Walker.KeepCache).
func (f *File) Close() error {
	if f.cache != nil {
		f.cache.close()
	}
	return f.Reader.Close()
}

// HasData reports whether bytes [off, end) of f intersect a data extent.
func (f *File) HasData(off, end uint64) bool {
	if f.Data == nil {
		return true
	}
	i := sort.Search(len(f.Data), func(i int) bool { return f.Data[i].End > off })
	return i < len(f.Data) && f.Data[i].Off < end
}

// NextData returns the offset of the first data byte of f at or after off,
// or f.Size when there is none.
func (f *File) NextData(off uint64) uint64 {
	if f.Data == nil {
		return min(off, f.Size)
	}
	i := sort.Search(len(f.Data), func(i int) bool { return f.Data[i].End > off })
	if i == len(f.Data) {
		return f.Size
	}
	return max(off, f.Data[i].Off)
}

// Counters describe what a walk saw. Sizes are bytes. A sharded walk
// (Walker.Shard) counts a file only in the shard that owns its chunk 0, and
// what the walk itself meets (directories, symlinks, special files, other
// file systems, repeated directories, image parts) in shard 0 only: the
// shards' counters add up to the whole walk's.
type Counters struct {
	Files         uint64 // regular files and block devices yielded, and regular files that could not be opened (not those gone)
	Dirs          uint64 // directories walked
	Symlinks      uint64 // symlinks skipped (not followed)
	Special       uint64 // devices, sockets, FIFOs skipped
	HardLinks     uint64 // extra names of an inode already yielded, skipped
	Devices       uint64 // block devices named explicitly, yielded
	OtherFS       uint64 // directories on another file system, skipped (OneFileSystem)
	RepeatedDirs  uint64 // directories reached again (repeated paths, bind mounts, symlink loops), skipped
	RepeatedFiles uint64 // files reached again (a path named twice), skipped
	ImageParts    uint64 // files read as parts of an image (VMDK extents, qcow2 data files; Walker.GuestParts), not on their own
	LogicalBytes  uint64 // sum of the sizes of Files
	// Unreadable counts, of Files, the regular files that could not be
	// opened (permissions, I/O), or with Walker.Guest not read as the
	// images they are: counted, never yielded; UnreadableBytes their
	// sizes, of LogicalBytes.
	Unreadable, UnreadableBytes uint64
}

// ErrChanged is wrapped by the errors about files that changed while they
// were read (Reader.Changed; a consumer's short read may wrap it too).
var ErrChanged = errors.New("changed while it was read")

// SkippedError is the warning about a path named explicitly that is
// neither a directory, a regular file nor a block device (a FIFO, a
// socket, a character device): it is skipped.
type SkippedError struct {
	Kind string // what it is, with an article: "a FIFO"
}

// Error says what was skipped and why: "skipped: a FIFO is not a regular
// file or a block device".
func (e *SkippedError) Error() string {
	return "skipped: " + e.Kind + " is not a regular file or a block device"
}

// Problem is one path a scan could not read (Kind "error") or that
// changed while it was read (Kind "changed"), as reports list it and
// saved scans keep it.
type Problem struct {
	Path string `json:"path"` // the path, escaped for printing (escape.Path)
	// PathBase64 is the path's own bytes (escape.Base64) when Path had to
	// escape them; empty otherwise.
	PathBase64 string `json:"path_base64,omitempty"`
	Kind       string `json:"kind"`
	Reason     string `json:"reason"` // the error, without the path
}

// NewProblem is the Problem of path (as the file system names it): its
// escaped form, and its bytes beside when escaping changed them.
func NewProblem(path, kind, reason string) Problem {
	pb := Problem{Path: escape.Path(path), Kind: kind, Reason: reason}
	if pb.Path != path {
		pb.PathBase64 = escape.Base64(path)
	}
	return pb
}
