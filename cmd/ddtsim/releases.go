package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/zio"
)

// writeReleases prints the release table that drives the model.
func writeReleases(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tCOVERS\tPSIZE\tEMBED\tDEDUP+EMBED\tZERO+DEDUP\tON\tDEFAULT\tZSTD\tMAX RECSIZE\tBYTES")
	yes := map[bool]string{true: "yes", false: "no"}
	for i, r := range zio.Releases {
		zstd := "no"
		if r.Zstd {
			zstd = "yes"
			if r.ZstdEarlyAbort {
				zstd = "early abort"
			}
		}
		zero := "stored"
		if r.ZeroHoleWithDedup {
			zero = "hole"
		}
		bytes := "512"
		if r.BytesSuffix {
			bytes = "512B"
		}
		def := ""
		if &zio.Releases[i] == zio.DefaultRelease {
			def = " (default)"
		}
		fmt.Fprintf(tw, "%s%s\t%s\tP%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, def, r.Covers(), r.Band, yes[r.Embed],
			yes[r.EmbedWithDedup], zero, r.OnMeans, r.DefaultCompression, zstd,
			report.Nicenum(uint64(r.MaxRecordSize), false), bytes)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range zio.Releases {
		fmt.Fprintf(w, "%s: %s\n", r.Name, r.Note)
	}
}
