package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ddtsim/ddtsim/internal/escape"
	"github.com/ddtsim/ddtsim/report"
)

// What a scan writes besides standard output (--html FILE, --save FILE,
// --tmpdir DIR) is checked before the scan: it must not lie inside a path
// scanned (the scan would read its own output, or overwrite what it
// reads), and it must be writable now rather than after hours.

// maxLinks bounds the symlinks followed when resolving an output name
// (Linux's MAXSYMLINKS).
const maxLinks = 40

// linkTarget follows path while it is a symlink and returns the name the
// link chain ends at (which need not exist: a dangling link names the
// file that writing through it creates). A path that is not a symlink is
// returned as it is.
func linkTarget(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", &os.PathError{Op: "resolve", Path: path, Err: syscall.ELOOP}
}

// resolvePath returns path absolute, with every symlink resolved: those
// of the final name (see linkTarget), and those of the longest part of
// the path that exists (filepath.EvalSymlinks); the rest, not created
// yet, is appended as it is.
func resolvePath(path string) (string, error) {
	p, err := linkTarget(path)
	if err != nil {
		return "", err
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", err
	}
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// existingDir returns the device of the deepest existing directory that
// holds (or is) path, an absolute resolved path.
func existingDir(path string, isDir bool) (dev uint64, ok bool) {
	if !isDir {
		path = filepath.Dir(path)
	}
	for {
		var st syscall.Stat_t
		if syscall.Stat(path, &st) == nil {
			return uint64(st.Dev), true
		}
		parent := filepath.Dir(path)
		if parent == path {
			return 0, false
		}
		path = parent
	}
}

// within reports whether the absolute path p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// checkOutside refuses an output that lies inside one of the paths
// scanned, comparing resolved paths (symlinks in the output's name or in
// the paths named do not hide it). flag names the option in the message
// ("--html", "--save", "--tmpdir"); isDir says the output is a directory
// (--tmpdir). With oneFS (-x), an output on another file system than the
// path is not reached by the scan and is accepted.
func checkOutside(flag, name string, isDir bool, paths []string, oneFS bool) error {
	out, err := resolvePath(name)
	if err != nil {
		return fmt.Errorf("%s %s: %s", flag, escape.Path(name), reason(name, err))
	}
	for _, p := range paths {
		d, err := filepath.EvalSymlinks(p)
		if err != nil {
			d = p
		}
		if d, err = filepath.Abs(d); err != nil || !within(out, d) {
			continue
		}
		if oneFS {
			var st syscall.Stat_t
			dev, ok := existingDir(out, isDir)
			if ok && syscall.Stat(d, &st) == nil && uint64(st.Dev) != dev {
				continue // -x: the scan does not enter the output's file system
			}
		}
		what := "write it elsewhere"
		switch {
		case isDir:
			what = "the scan would read its own spill runs; choose a directory elsewhere"
		case flag == "--save":
			what = "save it elsewhere"
		}
		at := ""
		if abs, err := filepath.Abs(name); err != nil || abs != out {
			at = " (" + escape.Path(out) + ")" // through a symlink
		}
		return fmt.Errorf("%s %s%s lies inside %s, which is scanned: %s", flag, escape.Path(name), at, escape.Path(p), what)
	}
	return nil
}

// checkCreatable reports whether the file path can be written now: an
// existing file must open for writing (it is not changed), a new one must
// be creatable in its directory (a temporary file is created there and
// removed).
func checkCreatable(path string) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return errors.New("it is a directory")
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return err
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	target, err := linkTarget(path)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(target), ".ddtsim-check-*.tmp")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// startHTML checks --html before the scan: not inside the paths scanned,
// not the --save file, and writable. On error it has printed the reason
// and returns exitUsage.
func (s *scanCmd) startHTML(stderr io.Writer) int {
	if s.HTML == "" {
		return exitOK
	}
	if err := checkOutside("--html", s.HTML, false, s.Paths, s.OneFileSystem); err != nil {
		fmt.Fprintln(stderr, "ddtsim:", err)
		return exitUsage
	}
	if s.Save != "" {
		a, errA := resolvePath(s.HTML)
		b, errB := resolvePath(s.Save)
		if errA == nil && errB == nil && a == b {
			fmt.Fprintf(stderr, "ddtsim: --html %s and --save %s name the same file\n", escape.Path(s.HTML), escape.Path(s.Save))
			return exitUsage
		}
	}
	if err := checkCreatable(s.HTML); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fmt.Fprintf(stderr, "ddtsim: --html %s: cannot write there: %v\n", escape.Path(s.HTML), err)
		return exitUsage
	}
	return exitOK
}

// writeHTML writes the report's HTML page to path.
func writeHTML(path string, r *report.Scan) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = r.WriteHTML(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
