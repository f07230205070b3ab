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
	Columns []string // upper case, as printed: NAME, USED, LUSED, ALLOC, ...
	Rows    [][]string
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
				t = &ListTable{Columns: f}
			}
			continue
		}
		if f[0] == "NAME" {
			continue // another command's header
		}
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
