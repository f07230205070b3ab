package zdb

import (
	"strings"

	"github.com/ddtsim/ddtsim/zfslist"
)

// MaxListRows is how many rows of one zfs list or zpool list table Parse
// keeps; it counts the others (ListTable.RowsLeftOut).
const MaxListRows = 1000

// listHeader starts a list table at the current line when fields are a
// zfs list or zpool list header, and reports whether they were.
func (ps *parser) listHeader(fields []string) bool {
	if fields[0] != "NAME" || len(fields) < 2 {
		return false
	}
	k := zfslist.Kind(fields[1:])
	if k == "" {
		return false
	}
	ps.endTable()
	ps.endList()
	ps.inStatus = false
	ps.list = &zfslist.Table{Kind: k, Line: ps.n, Columns: fields, Rows: [][]string{}}
	return true
}

// listRow reads the line (raw, split into fields) as a row of the current
// list table, and reports whether it was one: as many fields as columns,
// or, under zpool list -v, an indented vdev row with its last columns
// empty.
func (ps *parser) listRow(raw string, fields []string) bool {
	t := ps.list
	n := len(t.Columns)
	fields = zfslist.JoinTail(fields, t.Columns)
	switch {
	case len(fields) == 0 || len(fields) > n || fields[0] == "NAME":
		return false
	case cmdRe.MatchString(strings.Join(fields, " ")) || promptRe.MatchString(strings.Join(fields, " ")):
		return false // the next command
	case len(fields) < n && (t.Kind != zfslist.Zpool || raw[0] != ' ' && raw[0] != '\t'):
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

// List returns the first table of the kind (zfslist.Zfs, zfslist.Zpool) in the
// text, nil when there is none.
func (p *Parsed) List(kind string) *zfslist.Table {
	for _, t := range p.Lists {
		if t.Kind == kind {
			return t
		}
	}
	return nil
}
