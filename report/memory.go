package report

import (
	"fmt"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/text/english"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// memoryLine is the text of the summary's line on memory: the table's own bytes at its
// peak, the process's peak RSS when known, and how often the table was
// spilled to disk (--mem). It is empty when nothing is known (a saved
// scan of an older ddtsim).
func memoryLine(c analyzer.Counters) string {
	if c.TableBytes == 0 && c.PeakRSS == 0 {
		return ""
	}
	line := fmt.Sprintf("table %s at its peak", nicenum.IEC(c.TableBytes))
	if c.PeakRSS > 0 {
		line += fmt.Sprintf(", process %s peak RSS", nicenum.IEC(c.PeakRSS))
	}
	if c.SpillRuns > 0 {
		line += fmt.Sprintf("; spilled to disk in %s (--mem)", english.Count(c.SpillRuns, "run"))
	}
	return line
}
