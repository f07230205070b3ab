package source

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"
)

// Sharding: one namespace scanned by Count independent runs (ddtsim scan
// --shard i/N, e.g. the pods of a Kubernetes Indexed Job over one NFS
// export), each walking the whole tree and reading only the files, or
// chunks of files, that fall in its share; their saved scans, merged, are
// the scan of the whole tree.
//
// A file's identity is (file system, inode), so that every name of a
// hard-linked inode lands in the same shard, which then skips the extra
// names exactly as a scan of the whole tree does. The file system is not
// named by st_dev, which differs between machines mounting the same
// export, but by where the walk first met it (fsIDs): the same on every
// machine that is given the same paths and mounts the tree the same way.
//
// Files larger than ShardChunkBytes(recordsize) are split into chunks of
// that many bytes (a whole number of records), each chunk assigned on its
// own, so that one large image does not keep one shard running long after
// the others. Chunk c of the file (fs, ino) belongs to shard ShardHash(fs,
// ino, c) mod Count; a file that is not split is its chunk 0.
//
// What is counted once per file (Counters.Files, LogicalBytes, HardLinks,
// RepeatedFiles, Devices, and the error of a file that cannot be opened)
// is counted by the owner of its chunk 0 only; what the walk counts
// (Dirs, Symlinks, Special, OtherFS, RepeatedDirs, ImageParts, and the
// problems of directories and of paths named) by shard 0 only, since
// every shard walks every directory. So the counters of the N shard scans
// add up to those of one scan of the whole tree.

// MaxShards bounds Shard.Count.
const MaxShards = 65536

// ShardSplitBytes is the size beyond which a sharded walk splits a file
// into chunks, bytes (see ShardChunkBytes).
const ShardSplitBytes = 1 << 30

// Shard is one share of a sharded scan: run Index of Count. The zero value,
// and any Count of 0 or 1, is no sharding: everything is taken.
type Shard struct {
	Index uint32 `json:"index"` // from 0; below Count
	Count uint32 `json:"count"` // the runs the namespace is split into, at most MaxShards
}

// ParseShard parses "i/N": shard i (from 0) of N, 0 ≤ i < N ≤ MaxShards.
// "0/1" is valid and means no sharding. Its errors start with the value.
func ParseShard(v string) (Shard, error) {
	is, ns, ok := strings.Cut(v, "/")
	if !ok {
		return Shard{}, fmt.Errorf("%s: not i/N (the index of this run, from 0, and the number of runs, e.g. 0/4)", v)
	}
	i, err := strconv.ParseUint(is, 10, 32)
	if err != nil {
		return Shard{}, fmt.Errorf("%s: the index %q is not a whole number (accepted: i/N, 0 ≤ i < N ≤ %d)", v, is, MaxShards)
	}
	n, err := strconv.ParseUint(ns, 10, 32)
	if err != nil {
		return Shard{}, fmt.Errorf("%s: the count %q is not a whole number (accepted: i/N, 0 ≤ i < N ≤ %d)", v, ns, MaxShards)
	}
	s := Shard{Index: uint32(i), Count: uint32(n)}
	if n == 0 {
		return Shard{}, fmt.Errorf("%s: the count must be at least 1", v)
	}
	if err := s.Check(); err != nil {
		return Shard{}, fmt.Errorf("%s: %w", v, err)
	}
	return s, nil
}

// Check validates s: Index below Count (0 when Count is 0), Count at most
// MaxShards.
func (s Shard) Check() error {
	switch {
	case s.Count > MaxShards:
		return fmt.Errorf("the count must be at most %d", MaxShards)
	case s.Count == 0 && s.Index != 0:
		return fmt.Errorf("index must be 0 when the count is 0")
	case s.Count == 1 && s.Index >= s.Count:
		return fmt.Errorf("index must be below the count (the one shard of 1 run is 0/1)")
	case s.Count > 0 && s.Index >= s.Count:
		// Found by a new user: "the shards of N runs are 0/N to 3/N"
		// mixed the letter and the count.
		return fmt.Errorf("index must be below the count (the shards of %d runs are 0/%d to %d/%d)", s.Count, s.Count, s.Count-1, s.Count)
	}
	return nil
}

// Sharded reports whether s takes only a share (Count > 1).
func (s Shard) Sharded() bool { return s.Count > 1 }

// String is "i/N", as ParseShard takes it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// CountsWalk reports whether s counts what the walk counts (directories,
// symlinks, special files, …) and its problems: shard 0, or no sharding.
func (s Shard) CountsWalk() bool { return s.Index == 0 }

// Owns reports whether s takes chunk chunk of the file with inode ino on
// the file system named fs (see fsIDs): always, when not sharded.
func (s Shard) Owns(fs string, ino, chunk uint64) bool {
	return !s.Sharded() || ShardHash(fs, ino, chunk)%uint64(s.Count) == uint64(s.Index)
}

// ownsAny reports whether s takes any of the chunks [first, end) of the
// file (fs, ino).
func (s Shard) ownsAny(fs string, ino, first, end uint64) bool {
	for c := first; c < end; c++ {
		if s.Owns(fs, ino, c) {
			return true
		}
	}
	return false
}

// ShardHash is what assigns chunk chunk of the file with inode ino on the
// file system named fs to a shard: shard = ShardHash mod Count. It is the
// first 8 bytes, read big-endian, of the BLAKE3-256 digest of ino (8
// bytes, big-endian), chunk (8 bytes, big-endian) and the bytes of fs, in
// this order: fixed, the same on every machine and in every run.
func ShardHash(fs string, ino, chunk uint64) uint64 {
	b := make([]byte, 16, 16+len(fs))
	binary.BigEndian.PutUint64(b, ino)
	binary.BigEndian.PutUint64(b[8:], chunk)
	sum := blake3.Sum256(append(b, fs...))
	return binary.BigEndian.Uint64(sum[:8])
}

// ShardChunkBytes is the chunk size of a sharded walk for records of
// recordSize bytes (the recordsize, or a volume's volblocksize): the
// largest whole number of records, at least one, within ShardSplitBytes
// (1 GiB: 8192 records of 128K, 64 of 16M). A file larger than it is split
// into chunks of that size.
func ShardChunkBytes(recordSize uint32) uint64 { return chunkBytes(recordSize, ShardSplitBytes) }

// chunkBytes is the largest whole number of records of recordSize bytes,
// at least one, within split bytes.
func chunkBytes(recordSize uint32, split uint64) uint64 {
	rs := max(uint64(recordSize), 1)
	return max(split/rs, 1) * rs
}

// chunks is how many chunks a file of size bytes is cut into with chunk
// size cb (0: never split): 1 unless it is larger than cb.
func chunks(size, cb uint64) uint64 {
	if cb == 0 || size <= cb {
		return 1
	}
	return (size + cb - 1) / cb
}

// fsIDs names the file systems (st_dev) a walk meets so that another
// machine, where the same tree has other device numbers, names them
// alike: a file system is named by where the walk first met it, "A:REL",
// A the index of the path named under which it was met and REL the path
// of the directory (or of the file named) there, relative to that path
// named ("0:." for the first path named, "0:mnt/b" for a file system
// mounted at mnt/b below it). The walk is deterministic (the paths named in
// order, directories in order of name, depth first), so that every run of
// a sharded scan given the same paths on a tree mounted the same way names
// every file system alike.
type fsIDs map[uint64]string

// of returns the name of the file system dev, met at path below arg, the
// path named with index argIndex; the first meeting names it.
func (m fsIDs) of(dev uint64, argIndex int, arg, path string) string {
	if id, ok := m[dev]; ok {
		return id
	}
	rel, err := filepath.Rel(arg, path)
	if err != nil {
		rel = path
	}
	id := strconv.Itoa(argIndex) + ":" + filepath.ToSlash(rel)
	m[dev] = id
	return id
}

// CountedElsewhereError is a problem a shard of a sharded walk meets and
// says, but that another shard counts (Counters, the scan's problems), so
// that merged shard scans count it once: a directory that cannot be
// listed, or a path named that is missing, which every shard meets and
// shard 0 counts; a split file that cannot be opened, which its chunk 0's
// owner counts.
type CountedElsewhereError struct {
	Err error
	By  Shard // the shard that counts it
}

// Error is the problem and the shard that counts it: "… (shard 0/4
// counts it)".
func (e *CountedElsewhereError) Error() string {
	return fmt.Sprintf("%v (shard %s counts it)", e.Err, e.By)
}

// Unwrap returns the problem.
func (e *CountedElsewhereError) Unwrap() error { return e.Err }
