// Package zfslist reads what `zfs list` and `zpool list` print (with or
// without -p, any -o columns, as people paste it): the dataset and pool
// space figures that ddtsim's space prediction is compared with. Kind
// tells the two commands apart by their columns (zfs_prop.c,
// zpool_prop.c); sizes are read as nicenum.Values, the interval of bytes
// that print as the text.
package zfslist

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
)

// Table is what `zfs list` or `zpool list` printed: a header line of
// column names (any columns, in any order: -o), then a row per dataset or
// vdev (zpool list -v indents the vdevs under their pool).
type Table struct {
	// Kind is Zfs or Zpool, told by the columns (Kind); ""
	// when they tell neither.
	Kind    string     `json:"kind"`
	Line    int        `json:"line"`    // the header's line in the text (1-based)
	Columns []string   `json:"columns"` // upper case, as printed: NAME, USED, LUSED, ALLOC, ...
	Rows    [][]string `json:"rows"`
	// RowLines are the rows' lines in the text (Parse sets them; nil from
	// Parse).
	RowLines []int `json:"row_lines,omitempty"`
	// RowsLeftOut counts the rows past the first MaxListRows (Parse).
	RowsLeftOut int `json:"rows_left_out,omitempty"`
}

// Kinds of Table.
const (
	Zfs   = "zfs list"
	Zpool = "zpool list"
)

// zfs list and zpool list column headers (zfs_prop.c, zpool_prop.c: the
// properties' column names) that tell the two apart: only zpool list
// prints these …
var zpoolColumns = map[string]bool{
	"SIZE": true, "ALLOC": true, "FREE": true, "CKPOINT": true, "EXPANDSZ": true, "FRAG": true, "CAP": true,
	"DEDUP": true, "HEALTH": true, "ALTROOT": true, "BCLONE_USED": true, "BCLONE_SAVED": true, "BCLONE_RATIO": true,
	"DEDUP_SAVED": true, "DEDUP_USED": true, "GUID": true, "LOAD_GUID": true,
}

// … and only zfs list these.
var zfsColumns = map[string]bool{
	"USED": true, "AVAIL": true, "REFER": true, "MOUNTPOINT": true, "USEDSNAP": true, "USEDDS": true,
	"USEDREFRESERV": true, "USEDCHILD": true, "LUSED": true, "LREFER": true, "RATIO": true, "REFRATIO": true,
	"TYPE": true, "COMPRESS": true, "RECSIZE": true, "QUOTA": true, "RESERV": true,
	"VOLSIZE": true, "VOLBLOCK": true, "WRITTEN": true, "ORIGIN": true, "CREATION": true,
}

// Kind tells zfs list (Zfs) from zpool list (Zpool) columns
// (a header's fields after NAME): the kind most of the known columns
// belong to, "" when none is known or they tie (zpool status's NAME
// STATE READ WRITE CKSUM is neither).
func Kind(columns []string) string {
	zfs, zpool := 0, 0
	for _, c := range columns {
		if zfsColumns[c] {
			zfs++
		}
		if zpoolColumns[c] {
			zpool++
		}
	}
	switch {
	case zfs > zpool:
		return Zfs
	case zpool > zfs:
		return Zpool
	}
	return ""
}

// ErrNotList: the text has no zfs list / zpool list header (a NAME column
// first).
var ErrNotList = errors.New("not zfs list or zpool list output: no header line starting with NAME")

// Parse reads zfs list or zpool list output (with -p: exact integers;
// without: sizes as zfs_nicenum prints them, see nicenum.Parse), as
// people paste it: lines before the header (a prompt, the command) are
// skipped, and so are blank lines. -H output has no header and is refused:
// its columns cannot be told apart.
func Parse(text string) (*Table, error) {
	var t *Table
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if t == nil {
			if f[0] == "NAME" && len(f) > 1 {
				t = &Table{Kind: Kind(f[1:]), Line: i + 1, Columns: f}
			}
			continue
		}
		if f[0] == "NAME" {
			continue // another command's header
		}
		f = JoinTail(f, t.Columns)
		if len(f) > len(t.Columns) {
			return nil, fmt.Errorf("line %d: %d fields under %d columns: %q", i+1, len(f), len(t.Columns), line)
		}
		// zpool list -v leaves the last columns of vdev rows empty.
		for len(f) < len(t.Columns) {
			f = append(f, "-")
		}
		t.Rows = append(t.Rows, f)
	}
	if t == nil {
		return nil, ErrNotList
	}
	return t, nil
}

// cell returns the text in column col of the row named name ("" is the
// first row), and whether there is one ("-" is none).
func (t *Table) cell(name, col string) (string, bool) {
	c := slices.Index(t.Columns, col)
	if c < 0 {
		return "", false
	}
	for _, r := range t.Rows {
		if name == "" || r[0] == name {
			return r[c], r[c] != "-"
		}
	}
	return "", false
}

// Size returns the size in column col of the row named name ("" is the
// first row): exact with -p, else the interval of bytes that print so
// (nicenum.Parse); ok is false when there is none or it is not a size.
func (t *Table) Size(name, col string) (v nicenum.Value, ok bool) {
	s, ok := t.cell(name, col)
	if !ok {
		return nicenum.Value{}, false
	}
	v, err := nicenum.Parse(s)
	return v, err == nil
}

// Ratio returns the ratio in column col (RATIO, REFRATIO, DEDUP) of the
// row named name ("" is the first row), as printed ("1.28" or "1.28x").
func (t *Table) Ratio(name, col string) (float64, bool) {
	s, ok := t.cell(name, col)
	if !ok {
		return 0, false
	}
	r, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
	return r, err == nil
}

// JoinTail joins the fields beyond the columns into the last column when
// that one is free text that may hold spaces (MOUNTPOINT, ALTROOT: found
// by a new user, "/mnt/my tank" made the row unreadable).
func JoinTail(fields, cols []string) []string {
	n := len(cols)
	if len(fields) <= n || n < 2 || cols[n-1] != "MOUNTPOINT" && cols[n-1] != "ALTROOT" {
		return fields
	}
	return append(fields[:n-1:n-1], strings.Join(fields[n-1:], " "))
}
