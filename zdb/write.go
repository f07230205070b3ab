package zdb

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// WriteHistogram writes the DDT histogram table as OpenZFS zpool_dump_ddt()
// prints it (lib/libzutil/zutil_pool.c): an empty line, four header lines,
// one row per bucket with allocated blocks, the Total row (when there are
// any blocks) and an empty line. Byte columns use the byte formatter
// (0.7.0+); bytesSuffix = false gives the 0.6.x plain numbers.
func WriteHistogram(w io.Writer, h *ddt.Histogram, bytesSuffix bool) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("\nbucket" + strings.Repeat(" ", 14) + "allocated" + strings.Repeat(" ", 23) +
		"referenced" + strings.Repeat(" ", 10) + "\n")
	bw.WriteString("______   ______________________________   ______________________________\n")
	bw.WriteString("refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n")
	bw.WriteString("------   ------   -----   -----   -----   ------   -----   -----   -----\n")
	for i := range h {
		if h[i].Allocated.Blocks == 0 {
			continue
		}
		writeRow(bw, nicenum.Format(uint64(1)<<i, false), h[i], bytesSuffix)
	}
	total := h.Total()
	if total.Allocated.Blocks != 0 {
		writeRow(bw, "Total", total, bytesSuffix)
	}
	bw.WriteString("\n")
	return bw.Flush()
}

func writeRow(w io.Writer, label string, b ddt.Bucket, bs bool) {
	a, r := b.Allocated, b.Referenced
	fmt.Fprintf(w, "%6s   %6s   %5s   %5s   %5s   %6s   %5s   %5s   %5s\n",
		label,
		nicenum.Format(a.Blocks, false), nicenum.Format(a.LSize, bs), nicenum.Format(a.PSize, bs), nicenum.Format(a.DSize, bs),
		nicenum.Format(r.Blocks, false), nicenum.Format(r.LSize, bs), nicenum.Format(r.PSize, bs), nicenum.Format(r.DSize, bs))
}

// WriteRatioLine writes zdb's ratio line followed by an empty line
// (cmd/zdb/zdb.c: dump_dedup_ratio()), or nothing when the total has no
// allocated blocks.
func WriteRatioLine(w io.Writer, total ddt.Bucket) error {
	r, ok := ddt.RatiosOf(total)
	if !ok {
		return nil
	}
	_, err := fmt.Fprintf(w, "dedup = %.2f, compress = %.2f, copies = %.2f, dedup * compress / copies = %.2f\n\n",
		r.Dedup, r.Compress, r.Copies, r.Combined)
	return err
}

// WriteSimulated writes exactly what `zdb -S` prints on stdout for a pool whose
// simulated DDT is h (cmd/zdb/zdb.c: dump_simulated_ddt()).
func WriteSimulated(w io.Writer, h *ddt.Histogram, bytesSuffix bool) error {
	if _, err := io.WriteString(w, "Simulated DDT histogram:\n"); err != nil {
		return err
	}
	if err := WriteHistogram(w, h, bytesSuffix); err != nil {
		return err
	}
	return WriteRatioLine(w, h.Total())
}
