package main

// The flags several commands share, defined once and embedded (kong's
// embed:""). Where a command words a flag's help its own way, the help is
// a variable the embedding sets (kong's set:"NAME=TEXT").

// OutputFlags choose the report's format where a command prints a scan's
// report: the zdb -S text alone, or JSON (without either, the text). The
// embedding sets the help of --bytes (bytes_help): which of its formats
// it affects (found by a new user: merge's spoke of an HTML page, which
// merge cannot write).
type OutputFlags struct {
	Zdb  bool `help:"Print only the zdb -S text, byte for byte." xor:"format"`
	JSON bool `name:"json" help:"Print everything as JSON (exact integers)." xor:"format"`
	// Bytes adds exact byte counts to the text summary (report.Report.Bytes).
	Bytes bool `name:"bytes" help:"${bytes_help}"`
}

// bytesIgnored refuses --bytes where no text summary (or HTML page: html)
// is printed, as other flags that would be ignored are (found by a new
// user: --bytes --zdb and --bytes --json ran as if it were not given).
func (o OutputFlags) bytesIgnored(csv, html bool) error {
	if !o.Bytes || html {
		return nil
	}
	switch {
	case o.Zdb:
		return usagef("--bytes has no place in --zdb output (zdb -S prints its own units); use it with the text or --html")
	case o.JSON:
		return usagef("--bytes has no place with --json: JSON always holds exact bytes")
	case csv:
		return usagef("--bytes has no place with --csv: CSV always holds exact bytes")
	}
	return nil
}

// WorkFlags are how a scan works: its workers, the table's memory bound
// and where the table spills beyond it. The embedding sets the help of
// --mem and --tmpdir (mem_help, tmpdir_help).
type WorkFlags struct {
	Jobs   int    `short:"j" default:"0" help:"Worker goroutines, and at most as many CPUs busy at once (0: one per CPU; -j 1: one core, gentle on a busy host); fewer workers run at large recordsizes, so that the records in flight stay within 256 MiB (each worker holds the record it reads, and with gzip or zstd its compressed copy): 8 at recordsize=16M."`
	Mem    string `name:"mem" placeholder:"SIZE" help:"${mem_help}"`
	TmpDir string `name:"tmpdir" placeholder:"DIR" help:"${tmpdir_help}"`
}

// SavedRAMFlag is --ram where the report is of saved scans (merge,
// report): the memory of the machine that would hold their data.
type SavedRAMFlag struct {
	RAM string `name:"ram" placeholder:"SIZE" help:"The memory of the machine that would hold the merged data's pool: say whether its dedup table would stay in the ARC, as for scan."`
}

// negativeJobs joins "-j N" and "--jobs N" with a negative N into
// "--jobs=N", so that the command refuses the value once, saying what is
// accepted (scan.CheckJobs). Kong reads a lone "-1" as a short flag and
// would suggest --jobs="-1", only for it to be refused in turn. Arguments
// after "--" are paths and left alone.
func negativeJobs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "-j" || a == "--jobs") && i+1 < len(args) && isNegativeInt(args[i+1]) {
			out = append(out, "--jobs="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// isNegativeInt reports whether s is "-" followed by decimal digits.
func isNegativeInt(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
