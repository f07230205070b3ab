package main

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/scan/outpath"
	"github.com/ddtsim/ddtsim/text/escape"
)

// What a scan writes besides standard output (--html FILE, --save DIR,
// --tmpdir DIR) is checked before the scan: it must not lie inside a path
// scanned (the scan would read its own output, or overwrite what it
// reads), and it must be writable now rather than after hours. --save is
// checked by scan.OpenSaver, --tmpdir by scan.Options.Validate, --html
// here (with scan.CheckOutside).

// htmlStdout is the --html name that means standard output, as "-" is
// standard input for parse and report --histogram.
const htmlStdout = "-"

// startHTML checks --html before the scan: not inside the paths scanned,
// not the --save file, and writable. --html - (htmlStdout) writes the page
// to standard output in place of the report: refused beside --zdb, --json
// and --csv, whose report would go there too.
func (s *scanCmd) startHTML() error {
	if s.HTML == "" {
		return nil
	}
	if s.HTML == htmlStdout {
		for _, f := range []struct {
			set  bool
			name string
		}{{s.Zdb, "--zdb"}, {s.JSON, "--json"}, {s.CSV, "--csv"}} {
			if f.set {
				return usagef("--html - and %s would both write to standard output: give one of them, or --html a file name", f.name)
			}
		}
		return nil
	}
	if err := scan.CheckOutside("--html", s.HTML, false, s.Paths, s.OneFileSystem); err != nil {
		return err
	}
	if s.Save != "" {
		a, errA := outpath.Resolve(s.HTML)
		b, errB := outpath.Resolve(s.Save)
		if errA == nil && errB == nil && a == b {
			return usagef("--html %s and --save %s name the same file", escape.Path(s.HTML), escape.Path(s.Save))
		}
	}
	if err := checkHTMLReplaceable(s.HTML); err != nil {
		return err
	}
	if err := outpath.CheckCreatable(s.HTML); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return usagef("--html %s: cannot write there: %v", escape.Path(s.HTML), err)
	}
	return nil
}

// checkHTMLReplaceable refuses to replace an existing file (or the target
// of a symlink) that is not empty and not an HTML report of ddtsim's.
func checkHTMLReplaceable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // missing (created), or unreadable: CheckCreatable says
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || report.IsHTMLReport(f) {
		return nil
	}
	return usagef("--html %s: it exists and is not a ddtsim HTML report: refusing to overwrite it (remove it first, or write elsewhere)", escape.Path(path))
}

// writeHTML writes the report's HTML page to path.
func writeHTML(path string, r *report.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = writeHTMLTo(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeHTMLTo writes the report's HTML page to w (--html -: stdout).
func writeHTMLTo(w io.Writer, r *report.Report) error {
	bw := bufio.NewWriter(w)
	if err := r.WriteHTML(bw); err != nil {
		return err
	}
	return bw.Flush()
}
