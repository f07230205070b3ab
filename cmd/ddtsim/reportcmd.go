package main

import (
	"fmt"
	"os"

	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/saved/histsql"
	"github.com/ddtsim/ddtsim/text/escape"
)

// report --histogram FILE SCAN...: the report of saved scans whose table
// an SQL engine reduced (histsql's query over their Parquet files).
type reportCmd struct {
	Histogram    string `name:"histogram" required:"" placeholder:"FILE" help:"The result of the histogram query (histsql/histogram.sql, or ddtsim sql) as the engine wrote it: CSV or tab-separated, with or without a header; - for standard input."`
	OutputFlags  `embed:"" set:"bytes_help=In the text summary, give the exact byte count beside every size; JSON and CSV always hold exact bytes."`
	CSV          bool `name:"csv" help:"Print the histogram and summary as CSV." xor:"format"`
	SavedRAMFlag `embed:""`
	Scans        []string `arg:"" name:"scan" help:"The saved scans (directories written by --save DIR) the query read: their manifests give the model, the paths and the counters."`
}

// sqlCmd prints the histogram query.
type sqlCmd struct{}

func (sqlCmd) Run(std *streams) error {
	_, err := fmt.Fprintln(std.stdout, histsql.Query)
	return err
}

// Run reads the engine's result and the scans' manifests and prints the
// report; exit statuses as merge's.
func (r *reportCmd) Run(std *streams) error {
	ram, err := parseRAM(r.RAM)
	if err != nil {
		return usage(err)
	}
	in := os.Stdin
	name := "standard input"
	if r.Histogram != "-" {
		f, err := os.Open(r.Histogram)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, escape.Path(r.Histogram)
	}
	h, err := histsql.ReadResult(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	mg, err := saved.MergeHistogram(r.Scans, h)
	if err != nil {
		return err
	}
	return printMerged(mg, format{zdb: r.Zdb, json: r.JSON, csv: r.CSV, bytes: r.Bytes}, ram, std.stdout, std.stderr)
}
