package report

import (
	"bufio"
	"encoding/csv"
	"io"
	"math"
	"strconv"

	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/space"
)

// WriteCSV writes the report as CSV (RFC 4180, comma, LF), one table per
// view, separated by one empty line (awk -v RS= 'NR==2' picks the second):
//
//  1. the histogram: header refcnt,allocated_blocks,…,referenced_dsize;
//     one row per non-empty bucket (refcnt = the bucket's lowest refcnt,
//     as zdb labels it), then the row "Total"; with --read a last column
//     estimate, true on every row (the rows are the estimated histogram);
//  2. the summary: header field,value; one row per figure (model,
//     partial and, for a partial result, a partial_why row per reason,
//     counters (share_bytes, hole_bytes among them; with --read also
//     holes_read and hole_bytes_read, those of the records read), raw capacity, saved_bytes: scanned_bytes minus the
//     allocated DSIZE, saved_net_bytes: that less one copy of the
//     metadata (the text's saved line), ratios); a sampled scan adds sample_n,
//     sample_sampled, sample_reliable, unsampled and each estimate with
//     its 95% interval (sample_dedup, sample_dedup_low,
//     sample_dedup_high, ...; entries and allocated_dsize rounded to
//     whole numbers, the ratios decimals), and names the counters of the sample
//     stored_sampled, embedded_sampled and unique_blocks_sampled; the DDT
//     size (ddt_format, ddt_entries, ddt_unique, ddt_duplicate,
//     ddt_on_disk, ddt_in_core, ddt_log_in_core, ddt_rule_of_thumb) and
//     with --ram the ARC verdict (arc_ram, arc_max, arc_meta_limit,
//     arc_limit, arc_share, arc_verdict); the decision line (decision,
//     decision_worth_it (with --read also decision_undecided: the
//     95% range straddles the rule), decision_holes_saves, decision_embedded_saves,
//     decision_compression_saves, decision_dedup_saves); what zfs list -p and zpool list -p will
//     show once the files are copied into a new pool's root dataset
//     (package space; the JSON's "space"), without dedup: zfs_used,
//     zfs_usedds, zfs_usedchild, zfs_logicalused, zfs_logicalreferenced,
//     zfs_compressratio, zpool_alloc, zpool_dedupratio; and with dedup,
//     the same names ending in _dedup (zfs_used_dedup, …,
//     zpool_dedupratio_dedup), whatever the dedup property says; then the
//     copy's metadata, one copy of each block, that zdb -S leaves out
//     (metadata_blocks allocated, metadata_embedded, metadata_lsize, metadata_psize,
//     metadata_asize; metadata_indirect_asize and
//     metadata_directories_asize of it). The ratios are cut to two
//     decimals, as zfs prints them; no such rows when nothing could be
//     estimated;
//  3. with a breakdown: header group,files,…; one row per group, then the
//     row "(total)", the column sums.
//
// Sizes are bytes and counts are exact integers, as in the JSON. No field
// holds a line break (paths are escaped by escape.Path), so the empty line
// always separates tables.
func (s *Report) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	stat := func(st ddt.Stat) []string { return []string{u(st.Blocks), u(st.LSize), u(st.PSize), u(st.DSize)} }
	statHeader := func(prefix string) []string {
		return []string{prefix + "_blocks", prefix + "_lsize", prefix + "_psize", prefix + "_dsize"}
	}

	// 1. histogram; an estimated one says so on every row (a program
	// that reads only this table would otherwise take it for zdb's).
	var mark []string
	if s.Read != nil {
		mark = []string{"true"}
	}
	header := append(append([]string{"refcnt"}, statHeader("allocated")...), statHeader("referenced")...)
	if mark != nil {
		header = append(header, "estimate")
	}
	cw.Write(header)
	bucket := func(label string, b ddt.Bucket) {
		cw.Write(append(append(append([]string{label}, stat(b.Allocated)...), stat(b.Referenced)...), mark...))
	}
	for _, r := range s.Histogram {
		bucket(u(r.RefcntMin), r.Bucket)
	}
	bucket("Total", s.Total)
	cw.Flush()
	bw.WriteString("\n")

	// 2. summary
	cw.Write([]string{"field", "value"})
	kv := func(k, v string) { cw.Write([]string{k, v}) }
	c := s.Counters
	kv("release", s.Release)
	kv("release_rules", s.Rules)
	for _, p := range []string{"recordsize", "volblocksize", "compression", "copies", "dedup"} {
		if v, ok := s.Properties[p]; ok {
			kv(p, v)
		}
	}
	kv("vdev", s.Pool.Vdev)
	kv("ashift", strconv.Itoa(s.Pool.Ashift))
	kv("sparse", s.Sparse)
	kv("guest", strconv.FormatBool(s.Guest))
	kv("partial", strconv.FormatBool(s.Partial))
	for _, why := range s.PartialWhy {
		kv("partial_why", why)
	}
	if s.Zstd != "" {
		kv("zstd", s.Zstd)
	}
	if f := s.WalkFinished; f != nil {
		kv("walk_finished", strconv.FormatBool(*f))
	}
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	// A sampled scan: its figures are estimates. The counters of what the
	// table holds (stored, embedded, unique_blocks) count the sample only,
	// and are named so.
	sampled := ""
	if e := s.Sample; e != nil {
		sampled = "_sampled"
		kv("sample_n", u(e.N))
		kv("sample_sampled", u(e.Sampled))
		kv("sample_reliable", strconv.FormatBool(e.Reliable))
		kv("unsampled", u(c.Unsampled))
		if e.Sampled > 0 {
			for _, iv := range []struct {
				k     string
				v     ddt.Interval
				ratio bool
			}{{"entries", e.Entries, false}, {"dedup", e.Dedup, true}, {"compress", e.Compress, true}, {"combined", e.Combined, true}, {"allocated_dsize", e.Allocated, false}} {
				// Ratios are decimals; a count of entries or of bytes is
				// a whole number, as every other count in the CSV.
				f := func(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
				if iv.ratio {
					f = func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
				}
				kv("sample_"+iv.k, f(iv.v.Value))
				kv("sample_"+iv.k+"_low", f(iv.v.Low))
				kv("sample_"+iv.k+"_high", f(iv.v.High))
			}
		}
	}
	if s.Read != nil {
		sampled = "_sampled"
		s.readCSV(kv)
	}
	for _, f := range []struct {
		k string
		v uint64
	}{
		{"files", c.Files}, {"dirs", c.Dirs}, {"logical_bytes", c.LogicalBytes}, {"share_bytes", c.ShareBytes},
		{"unreadable_files", c.Unreadable}, {"unreadable_bytes", c.UnreadableBytes}, {"scanned_bytes", c.ScannedBytes}, {"read_bytes", c.ReadBytes},
		{"records", c.Records}, {"stored" + sampled, c.Stored}, {"embedded" + sampled, c.Embedded}, {"holes", c.Holes}, {"hole_bytes", c.HoleBytes},
		{"zero_blocks", c.ZeroBlocks}, {"unique_blocks" + sampled, c.UniqueBlocks}, {"symlinks", c.Symlinks},
		{"special", c.Special}, {"hard_links", c.HardLinks}, {"image_parts", c.ImageParts}, {"errors", c.Errors}, {"changed", c.Changed},
	} {
		kv(f.k, u(f.v))
	}
	if s.Read != nil {
		kv("holes_read", u(c.ReadHoles))
		kv("hole_bytes_read", u(c.ReadHoleBytes))
	}
	if !s.NothingSampled() && !s.NothingRead() {
		kv("raw_referenced", u(s.Raw.Referenced))
		kv("raw_allocated", u(s.Raw.Allocated))
	}
	if saved, of, ok := s.Saved(); ok {
		kv("saved_bytes", strconv.FormatInt(saved, 10)) // over scanned_bytes
		// Less one copy of the metadata: the text's saved line (found by
		// a new user, who took saved_bytes for it).
		if net, _, _ := s.SavedNet(); s.Space != nil {
			kv("saved_net_bytes", strconv.FormatInt(net, 10))
		}
		if e := s.Sample; e != nil && e.Sampled > 0 {
			kv("saved_bytes_low", strconv.FormatFloat(float64(of)-e.Allocated.High, 'f', 0, 64))
			kv("saved_bytes_high", strconv.FormatFloat(float64(of)-e.Allocated.Low, 'f', 0, 64))
		}
	}
	if r := s.Ratios; r != nil {
		kv("dedup_ratio", ff(r.Dedup))
		kv("compress_ratio", ff(r.Compress))
		kv("copies_ratio", ff(r.Copies))
		kv("combined_ratio", ff(r.Combined))
	}
	if d := s.DDT; d != nil {
		kv("ddt_format", d.Format)
		kv("ddt_entries", u(d.Entries))
		kv("ddt_unique", u(d.Unique))
		kv("ddt_duplicate", u(d.Duplicate))
		kv("ddt_on_disk", u(d.OnDisk))
		kv("ddt_in_core", u(d.InCore))
		kv("ddt_log_in_core", u(d.LogInCore))
		kv("ddt_rule_of_thumb", u(d.RuleOfThumb))
		if a := d.ARC; a != nil {
			kv("arc_ram", u(a.RAM))
			kv("arc_max", u(a.ARCMax))
			kv("arc_meta_limit", u(a.MetaLimit))
			kv("arc_limit", u(a.Limit))
			kv("arc_share", ff(a.Share))
			kv("arc_verdict", a.Verdict)
		}
	}

	if d := s.Decision; d != nil {
		kv("decision", d.Text)
		kv("decision_worth_it", strconv.FormatBool(d.WorthIt))
		if d.Undecided != nil {
			kv("decision_undecided", strconv.FormatBool(*d.Undecided))
		}
		kv("decision_holes_saves", strconv.FormatInt(d.HolesSaves, 10))
		kv("decision_embedded_saves", strconv.FormatInt(d.EmbeddedSaves, 10))
		kv("decision_compression_saves", strconv.FormatInt(d.CompressionSaves, 10))
		kv("decision_dedup_saves", strconv.FormatInt(d.DedupSaves, 10))
	}
	if off, on := s.SpaceByDedup(); off != nil || on != nil {
		for _, f := range []struct {
			suffix string
			f      *space.Figures
		}{{"", off}, {"_dedup", on}} {
			if f.f == nil {
				continue
			}
			kv("zfs_used"+f.suffix, u(f.f.Used))
			kv("zfs_usedds"+f.suffix, u(f.f.UsedDS))
			kv("zfs_usedchild"+f.suffix, u(f.f.UsedChild))
			kv("zfs_logicalused"+f.suffix, u(f.f.LUsed))
			kv("zfs_logicalreferenced"+f.suffix, u(f.f.LRefer))
			kv("zfs_compressratio"+f.suffix, ff(f.f.CompressRatio))
			kv("zpool_alloc"+f.suffix, u(f.f.Alloc))
			kv("zpool_dedupratio"+f.suffix, ff(f.f.Dedup))
		}
		m := s.Space.Metadata // the same with dedup or without: metadata is never deduplicated
		kv("metadata_blocks", u(m.Count))
		kv("metadata_embedded", u(m.Embedded))
		kv("metadata_lsize", u(m.LSize))
		kv("metadata_psize", u(m.PSize))
		kv("metadata_asize", u(m.ASize))
		kv("metadata_indirect_asize", u(s.Space.Indirect.ASize))
		kv("metadata_directories_asize", u(s.Space.Directories.ASize))
	}

	// 3. breakdown
	if b := s.Breakdown; b != nil {
		kv("breakdown_by", b.By)
		kv("zero_holes", u(b.Zeros.Holes))
		kv("zero_hole_lsize", u(b.Zeros.HoleLSize))
		kv("zero_hole_bytes", u(b.Zeros.HoleBytes))
		kv("zero_blocks_referenced_dsize", u(b.Zeros.Referenced.DSize))
		kv("zero_blocks_allocated_dsize", u(b.Zeros.Allocated.DSize))
		kv("zero_saved", u(b.Zeros.Saved))
		cw.Flush()
		bw.WriteString("\n")
		h := []string{"group", "files", "logical_bytes", "records", "holes", "hole_lsize", "zero_blocks", "embedded"}
		for _, p := range []string{"referenced", "allocated", "unique", "shared"} {
			h = append(h, statHeader(p)...)
		}
		cw.Write(h)
		for _, g := range append(b.Groups[:len(b.Groups):len(b.Groups)], b.Sum) {
			row := []string{g.Name, u(g.Files), u(g.LogicalBytes), u(g.Records), u(g.Holes), u(g.HoleLSize), u(g.ZeroBlocks), u(g.Embedded)}
			for _, st := range []ddt.Stat{g.Referenced, g.Allocated, g.Unique, g.Shared} {
				row = append(row, stat(st)...)
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// SpaceByDedup returns what zfs list and zpool list will show (Space)
// without dedup and with it, whichever the scan's policy has; nil for
// one not predicted (Space.Other nil), both nil without a prediction or
// when nothing could be estimated (NothingSampled).
func (s *Report) SpaceByDedup() (off, on *space.Figures) {
	sp := s.Space
	if sp == nil || s.NothingSampled() {
		return nil, nil
	}
	// The dedup property as given: on, verify, sha256,verify, ... are on.
	off, on = &sp.Figures, sp.Other
	if d := s.Properties["dedup"]; d != "" && d != "off" {
		off, on = on, off
	}
	return off, on
}
