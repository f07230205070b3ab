// Package testseam holds the test seams of package source, nil outside
// tests. The tests of the packages that read through a source (analyzer,
// sweep, source itself) set them to make a file vanish or change before it
// is opened, or to make a read fail; nothing else may set them.
package testseam

var (
	// BeforeOpen, when set, runs before the walker opens path.
	BeforeOpen func(path string)
	// ReadFault, when set, runs before each read of a walked file at byte
	// offset off; a non-nil error replaces the read (as an EIO would).
	// It may also change the file.
	ReadFault func(path string, off uint64) error
)
