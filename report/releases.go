package report

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// WriteReleases writes the release table that drives the model
// (zio.Releases) as text: one row per release, what differs.
func WriteReleases(w io.Writer) error {
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
			nicenum.Format(uint64(r.MaxRecordSize), false), bytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range zio.Releases {
		if _, err := fmt.Fprintf(w, "%s: %s\n", r.Name, r.Note); err != nil {
			return err
		}
	}
	return nil
}

// releaseJSON is one row of the release table in `--release list --json`.
type releaseJSON struct {
	Name               string `json:"name"`
	Covers             string `json:"covers"`
	Default            bool   `json:"default"`
	PsizeBand          string `json:"psize_band"`
	Embed              bool   `json:"embed"`
	EmbedWithDedup     bool   `json:"embed_with_dedup"`
	ZeroHoleWithDedup  bool   `json:"zero_hole_with_dedup"`
	On                 string `json:"on_means"`
	DefaultCompression string `json:"default_compression"`
	LZ4                bool   `json:"lz4"`
	Zstd               bool   `json:"zstd"`
	ZstdEarlyAbort     bool   `json:"zstd_early_abort"`
	MaxRecordSize      uint32 `json:"max_recordsize"`
	BytesSuffix        bool   `json:"bytes_suffix"`
	Note               string `json:"note"`
}

// WriteReleasesJSON writes the release table as JSON: one object per
// release, with the same columns as WriteReleases.
func WriteReleasesJSON(w io.Writer) error {
	var rows []releaseJSON
	for i, r := range zio.Releases {
		rows = append(rows, releaseJSON{Name: r.Name, Covers: r.Covers(), Default: &zio.Releases[i] == zio.DefaultRelease,
			PsizeBand: fmt.Sprintf("P%d", r.Band), Embed: r.Embed, EmbedWithDedup: r.EmbedWithDedup,
			ZeroHoleWithDedup: r.ZeroHoleWithDedup, On: r.OnMeans.String(), DefaultCompression: r.DefaultCompression.String(),
			LZ4: !r.NoLZ4, Zstd: r.Zstd, ZstdEarlyAbort: r.ZstdEarlyAbort, MaxRecordSize: r.MaxRecordSize,
			BytesSuffix: r.BytesSuffix, Note: r.Note})
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(rows)
}
