package vdisk

import (
	"fmt"
	"os"
)

// File is an image file as a reader parses it: the open file, its path
// (named in errors) and its size in bytes when it was opened. The VHD
// and VHDX readers embed it; its methods check and read the file's
// structures with errors that name the file and the offset at fault.
type File struct {
	F        *os.File
	Path     string
	FileSize int64
}

// ErrAt returns the *FormatError of the structure at byte off of the
// file (-1: none applies), its reason formatted as by fmt.Sprintf.
func (f *File) ErrAt(off int64, format string, args ...any) error {
	return &FormatError{File: f.Path, Off: off, Reason: fmt.Sprintf(format, args...)}
}

// ReadStruct reads len(p) bytes of the structure named what at off: a
// short read is a *FormatError saying it lies past the end of the file
// (ReadStruct).
func (f *File) ReadStruct(p []byte, off int64, what string) error {
	return ReadStruct(f.F, f.Path, f.FileSize, p, off, what)
}

// ReadData reads guest data at off, checked at Open to lie in the file
// (ReadFull).
func (f *File) ReadData(q []byte, off int64) error { return ReadFull(f.F, f.Path, q, off) }
