package scan

import (
	"fmt"
	"strings"

	"github.com/ddtsim/ddtsim/compare"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zdb"
)

// Compare sets the result (and rep, its Report) beside what real zdb
// printed for the same files (actual, parsed from source: a file name or
// the zdb command run), and the space rep predicts (rep.Space) beside the
// zfs list and zpool list tables actual holds, and returns the comparison
// with its notes: the
// paths the scan could not read, the DDT size when actual has one, and
// what the parser could not use of actual. opts gives the tolerances; the
// model's description, the bytes suffix and the release span are the
// result's own. It fails with compare.ErrUnusable when actual holds
// nothing to compare with.
func (res *Result) Compare(rep *report.Report, actual *zdb.Parsed, source string, opts compare.Options) (*compare.Comparison, error) {
	rel := res.Policy.Release
	opts.BytesSuffix = rel.BytesSuffix
	opts.Model = fmt.Sprintf("OpenZFS %s model, %s, compression=%s, copies=%s, dedup=%s, %s, ashift %d, sparse=%s",
		rep.Release, rep.BlockSizeProperty(), rep.Properties["compression"], rep.Properties["copies"],
		rep.Properties["dedup"], rep.Pool.Vdev, rep.Pool.Ashift, rep.Sparse)
	opts.Source = source
	opts.ReleaseFrom = fmt.Sprintf("%d.%d", rel.First[0], rel.First[1])
	opts.ReleaseTo = fmt.Sprintf("%d.%d", rel.Last[0], rel.Last[1])
	opts.Space = rep.Space
	opts.Dedup = rep.Properties["dedup"]
	cmp, err := compare.Compare(res.Analysis.Histogram, actual, opts)
	if err != nil {
		return nil, err
	}
	if note := rep.ApproximateNote(); note != "" {
		// Found by a new user: a build without cgo compared its zstd
		// model with a pool's table and blamed the ashift.
		cmp.Notes = append(cmp.Notes, "approximate: "+note)
		if cmp.Outcome != compare.Equal {
			cmp.Causes = append([]string{"zstd is approximated in this build (built without cgo): the default build's exact zstd may agree"}, cmp.Causes...)
		}
	}
	if n := res.Analysis.Counters.Errors; n > 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("the scan could not read %s (see the messages above); the prediction leaves them out", english.Count(n, "path")))
	}
	if d := rep.DDT; d != nil {
		cmp.CompareDDTSize(d.Entries, d.OnDisk, d.InCore, actual)
	}
	shown, more := 0, 0
	for _, d := range actual.Diags {
		if d.Severity == zdb.SevNote {
			continue
		}
		if d.Severity == zdb.SevWarning && strings.HasPrefix(d.Msg, zdb.NotUnderstood) {
			if shown == zdb.MaxNotUnderstoodShown {
				more++
				continue
			}
			shown++
		}
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: %s", source, d))
	}
	if more > 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: ... and %d more lines not understood (ddtsim parse --json lists them all)", source, more))
	}
	if actual.DiagsLeftOut > 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: %s", source, actual.LeftOutText()))
	}
	cmp.Predicted = rep
	return cmp, nil
}
