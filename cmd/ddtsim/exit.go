package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
)

// Exit statuses.
const (
	exitOK         = 0
	exitFailed     = 1 // the scan could not run
	exitUsage      = 2 // bad flags or property values
	exitWithErrors = 3 // completed, but some paths could not be read
	exitIncomplete = 4 // merged (merge, report), but shards are missing or scans were interrupted
	exitInterrupt  = 130

	// ddtsim compare (and parse: 2 when nothing of a DDT was read).
	exitCompareEqual    = 0 // equal within display precision (and the ratio tolerance)
	exitCompareDiffer   = 1 // different
	exitCompareUnusable = 2 // the actual text cannot be compared
)

// usageError is a flag or value that cannot be used: exit 2.
type usageError struct{ error }

// usage marks err as a usage error.
func usage(err error) error { return usageError{err} }

// usagef is usage(fmt.Errorf(format, a...)).
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// statusError ends a command that has done what it could with a given
// exit status and, when msg is not empty, a last line on stderr: a scan
// that completed with errors (3), an interrupted one (130, 143), a save
// that failed after the report was printed (1, msg said already).
type statusError struct {
	code int
	msg  string
}

func (e statusError) Error() string { return e.msg }

// exitCode maps what a command returned to the exit status, printing its
// message on stderr: the one place where errors become statuses.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var (
		st   statusError
		ue   usageError
		sue  *scan.UsageError
		oe   *scan.OptionError
		me   *saved.ModelError
		she  *saved.ShardError
		hge  *saved.HistogramError
		code = exitFailed
	)
	switch {
	case errors.As(err, &st):
		code = st.code
	case errors.As(err, &ue), errors.As(err, &sue), errors.As(err, &oe), errors.As(err, &me), errors.As(err, &she), errors.As(err, &hge):
		code = exitUsage
	case errors.Is(err, saved.ErrSameScan), errors.Is(err, compare.ErrUnusable):
		code = exitUsage // exitCompareUnusable too
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprint(stderr, prefixLines(msg))
	}
	return code
}

// prefixLines is msg with "ddtsim: " before each of its lines (errors
// joined with errors.Join take several), and a newline after the last.
func prefixLines(msg string) string {
	return "ddtsim: " + strings.ReplaceAll(strings.TrimSuffix(msg, "\n"), "\n", "\nddtsim: ") + "\n"
}

// compareExit is the exit status of a comparison's outcome.
func compareExit(o compare.Outcome) int {
	switch o {
	case compare.Equal:
		return exitCompareEqual
	case compare.Different:
		return exitCompareDiffer
	}
	return exitCompareUnusable // compare.CannotTell
}
