package vdisk

// lseek's whences for the data and the holes of a file, as illumos's
// <sys/unistd.h> numbers them (x/sys/unix does not have them there).
const (
	seekData = 3
	seekHole = 4
)
