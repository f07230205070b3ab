package histsql

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Query is the histogram query, the text of histogram.sql: ANSI SQL over
// the table or view ddtsim_entries, yielding one row per non-empty bucket,
// ordered by bucket, with the BIGINT columns bucket, blocks, lsize, psize,
// dsize, ref_blocks, ref_lsize, ref_psize, ref_dsize. It has no terminating
// semicolon and ends with a line of SQL, not a comment, so that it can be
// put inside COPY (...) or a subquery.
//
//go:embed histogram.sql
var Query string

// columns are the result's columns in the order of the query (and of a
// result without a header row).
var columns = [9]string{
	"bucket",
	"blocks", "lsize", "psize", "dsize",
	"ref_blocks", "ref_lsize", "ref_psize", "ref_dsize",
}

// maxResult bounds what ReadResult reads: 64 rows of 9 numbers take less
// than 15 KB, quoted and with a header.
const maxResult = 1 << 20

// ReadResult reads the result of Query as an engine prints it and returns
// its histogram:
//
//   - CSV (comma-separated, RFC 4180 quoting, as DuckDB's COPY ... (HEADER)
//     and Trino's --output-format CSV_HEADER or CSV write it) or
//     tab-separated (spark-sql, Trino TSV and TSV_HEADER): tab-separated when
//     the first line holds a tab;
//   - with a header row, columns are found by name (any order, any case;
//     other columns, such as the index column pandas adds, are ignored);
//     without one, the nine columns are in the query's order;
//   - LF or CRLF line ends, with or without a final one; a UTF-8 byte order
//     mark and empty lines are skipped, and spaces around values.
//
// An empty result (nothing, or a header only) is an empty histogram: the
// scans have no stored blocks. Rows may come in any order. Errors name the
// line and the column: a value that is not an integer, negative or beyond
// BIGINT, a bucket outside 0 to 63 or given twice, a missing column, a
// wrong number of fields, and rows that no histogram has (blocks 0, or
// referenced figures that the bucket's refcnts cannot give: a sign of
// columns in another order).
func ReadResult(r io.Reader) (*ddt.Histogram, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxResult+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxResult {
		return nil, fmt.Errorf("longer than %d bytes: not a histogram result (at most 64 rows)", maxResult)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))

	cr := csv.NewReader(bytes.NewReader(data))
	if bytes.IndexByte(firstLine(data), '\t') >= 0 {
		cr.Comma = '\t'
	}
	cr.FieldsPerRecord = -1 // counted below, for a clearer message

	h := new(ddt.Histogram)
	var (
		index   []int // index[c] is the field of columns[c]
		nfields int   // fields per record
		seen    [64]int
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return nil, err // a *csv.ParseError names the line
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		line, _ := cr.FieldPos(0)
		if index == nil {
			if isHeader(rec) {
				index, err = headerIndex(rec)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", line, err)
				}
				nfields = len(rec)
				continue
			}
			index = []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
			nfields = len(columns)
			if len(rec) != nfields {
				return nil, fmt.Errorf("line %d: %d fields and no header row: want the %d columns %s",
					line, len(rec), len(columns), strings.Join(columns[:], ", "))
			}
		}
		if len(rec) != nfields {
			return nil, fmt.Errorf("line %d: %d fields, want %d", line, len(rec), nfields)
		}
		var v [9]uint64
		for c, name := range columns {
			n, err := parseValue(rec[index[c]])
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", line, name, err)
			}
			v[c] = n
		}
		b := v[0]
		if b > 63 {
			return nil, fmt.Errorf("line %d: bucket %d: out of range 0 to 63", line, b)
		}
		if seen[b] != 0 {
			return nil, fmt.Errorf("line %d: bucket %d twice (also on line %d)", line, b, seen[b])
		}
		seen[b] = line
		bk := ddt.Bucket{
			Allocated:  ddt.Stat{Blocks: v[1], LSize: v[2], PSize: v[3], DSize: v[4]},
			Referenced: ddt.Stat{Blocks: v[5], LSize: v[6], PSize: v[7], DSize: v[8]},
		}
		if err := plausible(int(b), bk); err != nil {
			return nil, fmt.Errorf("line %d: bucket %d: %w", line, b, err)
		}
		h[b] = bk
	}
}

// firstLine returns the first line that is not empty.
func firstLine(data []byte) []byte {
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		if len(bytes.TrimSpace(line)) > 0 {
			return line
		}
	}
	return nil
}

// isHeader tells whether the first record is a header row: it names one of
// the columns, or none of its fields is a number.
func isHeader(rec []string) bool {
	numbers := 0
	for _, f := range rec {
		if columnIndex(f) >= 0 {
			return true
		}
		if _, err := strconv.ParseInt(f, 10, 64); err == nil {
			numbers++
		}
	}
	return numbers == 0
}

func columnIndex(name string) int {
	for c, n := range columns {
		if strings.EqualFold(name, n) {
			return c
		}
	}
	return -1
}

// headerIndex maps each column to its field in a header row.
func headerIndex(rec []string) ([]int, error) {
	index := []int{-1, -1, -1, -1, -1, -1, -1, -1, -1}
	for i, f := range rec {
		c := columnIndex(f)
		if c < 0 {
			continue
		}
		if index[c] >= 0 {
			return nil, fmt.Errorf("column %s twice (fields %d and %d)", columns[c], index[c]+1, i+1)
		}
		index[c] = i
	}
	var missing []string
	for c, i := range index {
		if i < 0 {
			missing = append(missing, columns[c])
		}
	}
	if missing != nil {
		// Name the columns the input has, and those it needs (found by
		// a new user: it listed the needed ones as the input's).
		return nil, fmt.Errorf("header row without column %s (it has %s; a histogram needs %s)",
			strings.Join(missing, ", "), strings.Join(rec, ", "), strings.Join(columns[:], ", "))
	}
	return index, nil
}

// parseValue reads a non-negative BIGINT written in decimal.
func parseValue(s string) (uint64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("beyond BIGINT: %q", s)
	}
	if err != nil {
		return 0, fmt.Errorf("not an integer: %q", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative: %d", n)
	}
	return uint64(n), nil
}

// plausible checks what every row of the query satisfies: the bucket has
// blocks, each with 2^b to 2^(b+1)-1 references, and each referenced size
// is at least 2^b times the allocated one (per entry, ref_size >= refcnt *
// (ref_size / refcnt)).
func plausible(b int, bk ddt.Bucket) error {
	a, r := bk.Allocated, bk.Referenced
	if a.Blocks == 0 {
		return errors.New("blocks is 0: the query yields only buckets that have blocks")
	}
	lo := uint64(1) << b
	hi := lo<<1 - 1 // 2^64-1 for bucket 63
	loHi, loProd := bits.Mul64(a.Blocks, lo)
	hiHi, hiProd := bits.Mul64(a.Blocks, hi)
	if loHi != 0 || r.Blocks < loProd || (hiHi == 0 && r.Blocks > hiProd) {
		return fmt.Errorf("ref_blocks %d does not fit %d blocks of %d to %d references each (columns in another order?)",
			r.Blocks, a.Blocks, lo, hi)
	}
	for _, s := range [...]struct {
		name         string
		alloc, refer uint64
	}{{"lsize", a.LSize, r.LSize}, {"psize", a.PSize, r.PSize}, {"dsize", a.DSize, r.DSize}} {
		if p1, p0 := bits.Mul64(s.alloc, lo); p1 != 0 || s.refer < p0 {
			return fmt.Errorf("ref_%s %d is less than %d times %s %d (columns in another order?)",
				s.name, s.refer, lo, s.name, s.alloc)
		}
	}
	return nil
}
