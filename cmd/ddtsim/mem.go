package main

import (
	"fmt"
	"math"
	"runtime"

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

// defaultMinMem is the smallest --mem accepted, bytes (env.memFloor).
const defaultMinMem uint64 = 1 << 20

// parseMem parses --mem: 0 without it. (--tmpdir is checked by
// scan.Options.Validate: with --mem, outside the paths scanned.)
func (s *scanCmd) parseMem() (int64, error) {
	if s.Mem == "" {
		return 0, nil
	}
	minMem := s.env.memFloor()
	n, err := model.ParseSize(s.Mem)
	if err != nil || n == 0 || n > math.MaxInt64 {
		return 0, &scan.OptionError{Option: "--mem", Value: s.Mem, Reason: fmt.Sprintf("invalid (accepted: the table's memory bound as a size, a whole number with an optional K, M, G, T, P or E suffix (powers of 1024; KiB or KB the same), at least %s, e.g. 512M, 4G, 1T)",
			nicenum.Format(minMem, false))}
	}
	if n < minMem {
		// Each spill writes a run; tiny bounds write thousands, which the
		// final merge may not be able to open at once.
		return 0, &scan.OptionError{Option: "--mem", Value: s.Mem, Reason: fmt.Sprintf("too small (accepted: at least %s, e.g. 512M, 4G, 1T; the table spills a run to disk each time it reaches the bound)",
			nicenum.Format(minMem, false))}
	}
	return int64(n), nil
}

// spillDirError words the failure to create the spill directory.
func (s *scanCmd) spillDirError(e *scan.SpillDirError) error {
	where := "--tmpdir " + s.TmpDir
	if s.TmpDir == "" {
		where = "--mem: " + e.Parent + " (" + tmpDirVar() + ", or --tmpdir DIR)"
	}
	return usagef("%s: cannot create the spill directory there: %v", where, e.Err)
}

// tmpDirVar names the environment variable the system's temporary
// directory comes from (os.TempDir): $TMPDIR on Unix, %TMP% on Windows.
func tmpDirVar() string {
	if runtime.GOOS == "windows" {
		return "%TMP%"
	}
	return "$TMPDIR"
}
