package zdb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/ddtsim/ddtsim/text/escape"
)

// ReadFile reads the file name ("-": stdin, os.Stdin when nil, called "standard input" in
// messages) and parses it (Parse). Its errors name the file once: "FILE:
// binary data, not zdb or zpool output" for one that is not text
// (ErrBinary), "FILE: is a directory", "FILE: read: ..." when reading
// fails, and os.Open's *PathError when it cannot be opened.
func ReadFile(name string, stdin io.Reader) (*Parsed, error) {
	var r io.Reader = stdin
	if r == nil {
		r = os.Stdin
	}
	var f *os.File
	if name != "-" {
		var err error
		if f, err = os.Open(name); err != nil {
			return nil, err // *PathError: it names the file
		}
		defer f.Close()
		r = f
	}
	p, err := Parse(r)
	if err != nil {
		shown := escape.Path(name)
		if name == "-" {
			shown = "standard input"
		}
		if errors.Is(err, ErrBinary) {
			return nil, fmt.Errorf("%s: %w", shown, err)
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // "read FILE: ...": the file is named already
		}
		// Reading a directory fails with EISDIR on Unix, with "Incorrect
		// function" on Windows: its stat tells either way.
		if st, serr := statOf(f); errors.Is(err, syscall.EISDIR) || serr == nil && st.IsDir() {
			return nil, fmt.Errorf("%s: is a directory", shown)
		}
		return nil, fmt.Errorf("%s: read: %w", shown, err)
	}
	return p, nil
}

// statOf is f's Stat, or an error for standard input (f nil).
func statOf(f *os.File) (fs.FileInfo, error) {
	if f == nil {
		return nil, fs.ErrInvalid
	}
	return f.Stat()
}
