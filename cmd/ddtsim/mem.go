package main

import (
	"errors"
	"fmt"
	"io"
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
// returns 0 and "" without --mem. On error it has printed the reason and
// returns the exit status.
func (s *scanCmd) startSpill(stderr io.Writer) (mem int64, dir string, code int) {
	if s.Mem == "" {
		if s.TmpDir != "" {
			fmt.Fprintln(stderr, "ddtsim: --tmpdir is where --mem spills the table: it needs --mem SIZE")
			return 0, "", exitUsage
		}
		return 0, "", exitOK
	}
	n, err := model.ParseSize(s.Mem)
	if err != nil || n == 0 || n > math.MaxInt64 {
		fmt.Fprintf(stderr, "ddtsim: --mem %s: invalid (accepted: the table's memory bound as a size, a whole number with an optional K, M, G, T suffix, at least %s, e.g. 512M, 4G, 1T)\n",
			s.Mem, zdb.Nicenum(minMem, false))
		return 0, "", exitUsage
	}
	if n < minMem {
		// Each spill writes a run; tiny bounds write thousands, which the
		// final merge may not be able to open at once.
		fmt.Fprintf(stderr, "ddtsim: --mem %s: too small (accepted: at least %s, e.g. 512M, 4G, 1T; the table spills a run to disk each time it reaches the bound)\n",
			s.Mem, zdb.Nicenum(minMem, false))
		return 0, "", exitUsage
	}
	parent, where := s.TmpDir, "--tmpdir "+s.TmpDir
	if parent == "" {
		parent = os.TempDir()
		where = "--mem: " + parent + " ($TMPDIR, or --tmpdir DIR)"
	}
	// Spill runs among the files scanned would be read as data.
	flag := "--tmpdir"
	if s.TmpDir == "" {
		flag = "--mem: $TMPDIR"
	}
	// An explicit --tmpdir among the paths scanned is refused; the default
	// one ($TMPDIR, e.g. /tmp under a scanned /) is used and left out of
	// the walk (predict passes the spill directory as a SkipDir).
	if s.TmpDir != "" {
		if err := checkOutside(flag, parent, true, s.Paths, s.OneFileSystem); err != nil {
			fmt.Fprintln(stderr, "ddtsim:", err)
			return 0, "", exitUsage
		}
	}
	dir, err = os.MkdirTemp(parent, "ddtsim-spill-")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fmt.Fprintf(stderr, "ddtsim: %s: cannot create the spill directory there: %v\n", where, err)
		return 0, "", exitUsage
	}
	spillDirs.Store(dir, true)
	return int64(n), dir, exitOK
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
