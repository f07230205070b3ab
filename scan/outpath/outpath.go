// Package outpath resolves the names of the files ddtsim writes (--save,
// --html, --tmpdir) so that they can be checked before a scan: where a
// chain of symlinks leads, whether the output lies inside a path scanned,
// whether it can be written now.
package outpath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symlinks followed when resolving an output name
// (Linux's MAXSYMLINKS).
const maxLinks = 40

// LinkTarget follows path while it is a symlink and returns the name the
// link chain ends at (which need not exist: a dangling link names the
// file that writing through it creates). A path that is not a symlink is
// returned as it is.
func LinkTarget(path string) (string, error) {
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

// Resolve returns path absolute, with every symlink resolved: those
// of the final name (see LinkTarget), and those of the longest part of
// the path that exists (filepath.EvalSymlinks); the rest, not created
// yet, is appended as it is.
func Resolve(path string) (string, error) {
	p, err := LinkTarget(path)
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

// ExistingDir returns the device of the deepest existing directory that
// holds (or is) path, an absolute resolved path.
func ExistingDir(path string, isDir bool) (dev uint64, ok bool) {
	if !isDir {
		path = filepath.Dir(path)
	}
	for {
		if dev, ok := devOf(path); ok {
			return dev, true
		}
		parent := filepath.Dir(path)
		if parent == path {
			return 0, false
		}
		path = parent
	}
}

// Within reports whether the absolute path p is dir or lies below it.
func Within(p, dir string) bool {
	sep := string(filepath.Separator)
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, sep)+sep)
}

// CheckCreatable reports whether the file path can be written now: an
// existing file must open for writing (it is not changed), a new one must
// be creatable in its directory (a temporary file is created there and
// removed).
func CheckCreatable(path string) error {
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
	target, err := LinkTarget(path)
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

// Inside resolves the output name (a directory if isDir) and returns the
// first of the paths scanned that holds it, comparing resolved paths
// (symlinks in the output's name or in the paths named do not hide it),
// or "" when none does. With oneFS (find -xdev), an output on another file
// system than the path is not reached by the walk and not inside it. out
// is the resolved name; err is Resolve's.
func Inside(name string, isDir bool, paths []string, oneFS bool) (out, inside string, err error) {
	if out, err = Resolve(name); err != nil {
		return "", "", err
	}
	for _, p := range paths {
		d, err := filepath.EvalSymlinks(p)
		if err != nil {
			d = p
		}
		if d, err = filepath.Abs(d); err != nil || !Within(out, d) {
			continue
		}
		if oneFS {
			dev, ok := ExistingDir(out, isDir)
			if dd, ok2 := devOf(d); ok && ok2 && dd != dev {
				continue // -x: the walk does not enter the output's file system
			}
		}
		return out, p, nil
	}
	return out, "", nil
}
