package main

import (
	"errors"
	"math"
	"os"
	"sync"

	"github.com/ddtsim/ddtsim/zdb"

	"github.com/ddtsim/ddtsim/model"
)

// --mem SIZE and --tmpdir DIR: the table's memory bound and where it
// spills (see ddt.Table.Spill). The spill directory is created before the
// scan, so that an unusable one is an error at once rather than after
// hours; it is removed when the command ends, also when interrupted: a
// first Ctrl-C ends the scan normally, a second one ends the process at
// once after removing it (signals.go).

// minMem is the smallest --mem accepted, bytes (tests lower it to make
// tiny tables spill).
var minMem uint64 = 1 << 20

// spillDirs holds the spill directories in use, for removeSpillDirs.
var spillDirs sync.Map

// startSpill parses --mem and --tmpdir and creates the spill directory. It
// returns 0 and "" without --mem.
func (s *scanCmd) startSpill() (mem int64, dir string, err error) {
	if s.Mem == "" {
		if s.TmpDir != "" {
			return 0, "", usagef("--tmpdir is where --mem spills the table: it needs --mem SIZE")
		}
		return 0, "", nil
	}
	n, err := model.ParseSize(s.Mem)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return 0, "", usagef("--mem %s: invalid (accepted: the table's memory bound as a size, a whole number with an optional K, M, G, T suffix, at least %s, e.g. 512M, 4G, 1T)",
			s.Mem, zdb.Nicenum(minMem, false))
	}
	if n < minMem {
		// Each spill writes a run; tiny bounds write thousands, which the
		// final merge may not be able to open at once.
		return 0, "", usagef("--mem %s: too small (accepted: at least %s, e.g. 512M, 4G, 1T; the table spills a run to disk each time it reaches the bound)",
			s.Mem, zdb.Nicenum(minMem, false))
	}
	parent, where := s.TmpDir, "--tmpdir "+s.TmpDir
	if parent == "" {
		parent = os.TempDir()
		where = "--mem: " + parent + " ($TMPDIR, or --tmpdir DIR)"
	}
	// Spill runs among the files scanned would be read as data: an
	// explicit --tmpdir among the paths scanned is refused; the default
	// one ($TMPDIR, e.g. /tmp under a scanned /) is used and left out of
	// the walk (the scan skips its spill directory).
	if s.TmpDir != "" {
		if err := checkOutside("--tmpdir", parent, true, s.Paths, s.OneFileSystem); err != nil {
			return 0, "", err
		}
	}
	dir, err = os.MkdirTemp(parent, "ddtsim-spill-")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return 0, "", usagef("%s: cannot create the spill directory there: %v", where, err)
	}
	spillDirs.Store(dir, true)
	return int64(n), dir, nil
}

// removeSpillDir removes a spill directory and the runs in it.
func removeSpillDir(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
		spillDirs.Delete(dir)
	}
}

// removeSpillDirs removes every spill directory in use (before a second
// signal ends the process).
func removeSpillDirs() {
	spillDirs.Range(func(k, _ any) bool {
		os.RemoveAll(k.(string))
		return true
	})
}
