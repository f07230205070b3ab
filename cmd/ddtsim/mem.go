package main

import (
	"math"

	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// --mem SIZE and --tmpdir DIR: the table's memory bound and where it
// spills (see ddt.Table.Spill). The scan creates the spill directory
// before it reads anything, so that an unusable one is an error at once
// rather than after hours; it is removed when the command ends, also when
// interrupted: a first Ctrl-C ends the scan normally, a second one ends
// the process at once after removing it (signals.go).

// minMem is the smallest --mem accepted, bytes (tests lower it to make
// tiny tables spill).
var minMem uint64 = 1 << 20

// parseMem parses --mem and checks --tmpdir: 0 without --mem.
func (s *scanCmd) parseMem() (int64, error) {
	if s.Mem == "" {
		if s.TmpDir != "" {
			return 0, usagef("--tmpdir is where --mem spills the table: it needs --mem SIZE")
		}
		return 0, nil
	}
	n, err := model.ParseSize(s.Mem)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return 0, usagef("--mem %s: invalid (accepted: the table's memory bound as a size, a whole number with an optional K, M, G, T suffix, at least %s, e.g. 512M, 4G, 1T)",
			s.Mem, nicenum.Format(minMem, false))
	}
	if n < minMem {
		// Each spill writes a run; tiny bounds write thousands, which the
		// final merge may not be able to open at once.
		return 0, usagef("--mem %s: too small (accepted: at least %s, e.g. 512M, 4G, 1T; the table spills a run to disk each time it reaches the bound)",
			s.Mem, nicenum.Format(minMem, false))
	}
	// Spill runs among the files scanned would be read as data: an
	// explicit --tmpdir among the paths scanned is refused; the default
	// one ($TMPDIR, e.g. /tmp under a scanned /) is used and left out of
	// the walk (the scan skips its spill directory).
	if s.TmpDir != "" {
		if err := checkOutside("--tmpdir", s.TmpDir, true, s.Paths, s.OneFileSystem); err != nil {
			return 0, err
		}
	}
	return int64(n), nil
}

// spillDirError words the failure to create the spill directory.
func (s *scanCmd) spillDirError(e *scan.SpillDirError) error {
	where := "--tmpdir " + s.TmpDir
	if s.TmpDir == "" {
		where = "--mem: " + e.Parent + " ($TMPDIR, or --tmpdir DIR)"
	}
	return usagef("%s: cannot create the spill directory there: %v", where, e.Err)
}
