package zdb

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ListTable is what `zfs list` or `zpool list` printed: a header line of
// column names (any columns, in any order: -o), then a row per dataset or
// vdev (zpool list -v indents the vdevs under their pool).
type ListTable struct {
	// Kind is ListZfs or ListZpool, told by the columns (ListKind); ""
	// when they tell neither.
	Kind    string     `json:"kind"`
	Line    int        `json:"line"`    // the header's line in the text (1-based)
	Columns []string   `json:"columns"` // upper case, as printed: NAME, USED, LUSED, ALLOC, ...
	Rows    [][]string `json:"rows"`
	// RowLines are the rows' lines in the text (Parse sets them; nil from
	// ParseList).
	RowLines []int `json:"row_lines,omitempty"`
	// RowsLeftOut counts the rows past the first MaxListRows (Parse).
	RowsLeftOut int `json:"rows_left_out,omitempty"`
}

// Kinds of ListTable.
const (
	ListZfs   = "zfs list"
	ListZpool = "zpool list"
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

// ListKind tells zfs list (ListZfs) from zpool list (ListZpool) columns
// (a header's fields after NAME): the kind most of the known columns
// belong to, "" when none is known or they tie (zpool status's NAME
// STATE READ WRITE CKSUM is neither).
func ListKind(columns []string) string {
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
		return ListZfs
	case zpool > zfs:
		return ListZpool
	}
	return ""
}

// ErrNotList: the text has no zfs list / zpool list header (a NAME column
// first).
var ErrNotList = errors.New("not zfs list or zpool list output: no header line starting with NAME")

// ParseList reads zfs list or zpool list output (with -p: exact integers;
// without: sizes as zfs_nicenum prints them, see ParseValue), as
// people paste it: lines before the header (a prompt, the command) are
// skipped, and so are blank lines. -H output has no header and is refused:
// its columns cannot be told apart.
func ParseList(text string) (*ListTable, error) {
	var t *ListTable
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if t == nil {
			if f[0] == "NAME" && len(f) > 1 {
				t = &ListTable{Kind: ListKind(f[1:]), Line: i + 1, Columns: f}
			}
			continue
		}
		if f[0] == "NAME" {
			continue // another command's header
		}
		f = joinTail(f, t.Columns)
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
func (t *ListTable) cell(name, col string) (string, bool) {
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
// (ParseValue); ok is false when there is none or it is not a size.
func (t *ListTable) Size(name, col string) (v Value, ok bool) {
	s, ok := t.cell(name, col)
	if !ok {
		return Value{}, false
	}
	v, err := ParseValue(s)
	return v, err == nil
}

// Ratio returns the ratio in column col (RATIO, REFRATIO, DEDUP) of the
// row named name ("" is the first row), as printed ("1.28" or "1.28x").
func (t *ListTable) Ratio(name, col string) (float64, bool) {
	s, ok := t.cell(name, col)
	if !ok {
		return 0, false
	}
	r, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
	return r, err == nil
}

// MaxListRows is how many rows of one zfs list or zpool list table Parse
// keeps; it counts the others (ListTable.RowsLeftOut).
const MaxListRows = 1000

// listHeader starts a list table at the current line when fields are a
// zfs list or zpool list header, and reports whether they were.
func (ps *parser) listHeader(fields []string) bool {
	if fields[0] != "NAME" || len(fields) < 2 {
		return false
	}
	k := ListKind(fields[1:])
	if k == "" {
		return false
	}
	ps.endTable()
	ps.endList()
	ps.inStatus = false
	ps.list = &ListTable{Kind: k, Line: ps.n, Columns: fields, Rows: [][]string{}}
	return true
}

// listRow reads the line (raw, split into fields) as a row of the current
// list table, and reports whether it was one: as many fields as columns,
// or, under zpool list -v, an indented vdev row with its last columns
// empty.
func (ps *parser) listRow(raw string, fields []string) bool {
	t := ps.list
	n := len(t.Columns)
	fields = joinTail(fields, t.Columns)
	switch {
	case len(fields) == 0 || len(fields) > n || fields[0] == "NAME":
		return false
	case cmdRe.MatchString(strings.Join(fields, " ")) || promptRe.MatchString(strings.Join(fields, " ")):
		return false // the next command
	case len(fields) < n && (t.Kind != ListZpool || raw[0] != ' ' && raw[0] != '\t'):
		return false
	}
	if len(t.Rows) == MaxListRows {
		t.RowsLeftOut++
		return true
	}
	row := make([]string, n)
	copy(row, fields)
	for i := len(fields); i < n; i++ {
		row[i] = "-"
	}
	t.Rows = append(t.Rows, row)
	t.RowLines = append(t.RowLines, ps.n)
	return true
}

// joinTail joins the fields beyond the columns into the last column when
// that one is free text that may hold spaces (MOUNTPOINT, ALTROOT: found
// by a new user, "/mnt/my tank" made the row unreadable).
func joinTail(fields, cols []string) []string {
	n := len(cols)
	if len(fields) <= n || n < 2 || cols[n-1] != "MOUNTPOINT" && cols[n-1] != "ALTROOT" {
		return fields
	}
	return append(fields[:n-1:n-1], strings.Join(fields[n-1:], " "))
}

// endList ends the current list table, if any.
func (ps *parser) endList() {
	t := ps.list
	if t == nil {
		return
	}
	ps.list = nil
	if len(t.Rows) == 0 {
		ps.p.Diags = append(ps.p.Diags, Diag{t.Line, SevWarning, t.Kind + " header without rows (cut short?)"})
		return
	}
	ps.p.Lists = append(ps.p.Lists, t)
}

// List returns the first table of the kind (ListZfs, ListZpool) in the
// text, nil when there is none.
func (p *Parsed) List(kind string) *ListTable {
	for _, t := range p.Lists {
		if t.Kind == kind {
			return t
		}
	}
	return nil
}
