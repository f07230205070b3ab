// Package testseam holds the test seams of package source, nil (or zero)
// outside tests. The tests of the packages that read through a source
// (analyzer, sweep, scan, source itself) set them to make a file vanish or
// change before it is opened, to make a read fail, or to split files of a
// sharded scan into small chunks; nothing else may set them.
package testseam

var (
	// BeforeOpen, when set, runs before the walker opens path.
	BeforeOpen func(path string)
	// ReadFault, when set, runs before each read of a walked file at byte
	// offset off; a non-nil error replaces the read (as an EIO would).
	// It may also change the file.
	ReadFault func(path string, off uint64) error
	// ShardSplitBytes > 0 replaces source.ShardSplitBytes (1 GiB), the
	// size beyond which a sharded walk splits a file into chunks, so that
	// tests split small files.
	ShardSplitBytes uint64
)
