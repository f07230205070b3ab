package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"syscall"
	"testing"
)

// openOne walks path, a regular file, with faults, and returns it open.
func openOne(t *testing.T, path string, faults *Faults) *File {
	t.Helper()
	var f *File
	(&Walker{Paths: []string{path}, Faults: faults}).Walk(context.Background(), func(y *File) { f = y }, func(p string, err error) { t.Errorf("%s: %v", p, err) })
	if f == nil {
		t.Fatalf("%s not yielded", path)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The read seam: each read of a walked file asks Faults.Read with its
// path, offset and length; Short makes the reader return that many bytes
// with no error, Err fails it, ReadFault comes first. File.ReadAt reads
// the rest of a short read: its caller gets every byte asked.
func TestReadSeam(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	data := randBytes(1, 10000)
	writeFile(t, path, data)
	faults := &Faults{}
	f := openOne(t, path, faults)
	type call struct {
		off uint64
		n   int
	}
	var calls []call
	faults.Read = func(p string, off uint64, n int) Fault {
		if p != path {
			t.Errorf("seam called for %s", p)
		}
		calls = append(calls, call{off, n})
		switch {
		case off == 9000:
			return Fault{Err: syscall.EIO}
		case n > 1:
			return Fault{Short: n / 2}
		}
		return Fault{}
	}

	buf := make([]byte, 1000)
	if n, err := f.Reader.ReadAt(buf, 100); n != 500 || err != nil || !bytes.Equal(buf[:n], data[100:600]) {
		t.Errorf("the reader's short read: %d bytes, %v", n, err)
	}
	calls = nil
	if n, err := f.ReadAt(buf, 100); n != 1000 || err != nil || !bytes.Equal(buf, data[100:1100]) {
		t.Errorf("File.ReadAt: %d bytes, %v; want the 1000 asked", n, err)
	}
	// Half of what is left each time, then the last byte.
	var want []call
	for off, n := uint64(100), 1000; n > 0; {
		want = append(want, call{off, n})
		got := max(n/2, 1)
		off, n = off+uint64(got), n-got
	}
	if len(calls) != len(want) {
		t.Errorf("reads %v, want %v", calls, want)
	} else {
		for i := range want {
			if calls[i] != want[i] {
				t.Errorf("read %d: %v, want %v", i, calls[i], want[i])
			}
		}
	}
	// A short read, then its rest fails: the bytes read and the error.
	if n, err := f.ReadAt(buf, 8500); n != 500 || !errors.Is(err, syscall.EIO) {
		t.Errorf("read across the failing offset: %d bytes, %v; want 500 and EIO", n, err)
	}
	// A short read, then the end.
	if n, err := f.ReadAt(buf[:600], 9500); n != 500 || err != io.EOF || !bytes.Equal(buf[:n], data[9500:]) {
		t.Errorf("read past the end: %d bytes, %v; want 500 and EOF", n, err)
	}
	if n, err := f.ReadAt(buf, 9000); n != 0 || !errors.Is(err, syscall.EIO) {
		t.Errorf("read failing: %d bytes, %v", n, err)
	}
	faults.ReadFault = func(string, uint64) error { return syscall.ENXIO }
	if _, err := f.ReadAt(buf, 0); !errors.Is(err, syscall.ENXIO) {
		t.Errorf("with ReadFault: %v", err)
	}
}

// stuck reads nothing, with no error, past its first byte.
type stuck struct{ reads int }

func (s *stuck) ReadAt(p []byte, off int64) (int, error) {
	s.reads++
	if off == 0 && len(p) > 0 {
		p[0] = 'x'
		return 1, nil
	}
	return 0, nil
}
func (*stuck) Changed() error { return nil }
func (*stuck) Close() error   { return nil }

// A reader that stops returning bytes without an error does not hang
// File.ReadAt: after maxEmptyReads reads it fails with io.ErrNoProgress.
func TestReadAtNoProgress(t *testing.T) {
	t.Parallel()
	r := &stuck{}
	f := &File{Reader: r}
	n, err := f.ReadAt(make([]byte, 10), 0)
	if n != 1 || !errors.Is(err, io.ErrNoProgress) || r.reads != 1+maxEmptyReads {
		t.Errorf("%d bytes, %v, %d reads", n, err, r.reads)
	}
}
