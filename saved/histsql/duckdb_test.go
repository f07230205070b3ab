//go:build duckdb

// The query on a real engine: DuckDB, through its Go driver (cgo, with the
// DuckDB library linked in; the first build downloads it). Run with
//
//	go test -tags duckdb ./histsql/

package histsql

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/ddt"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
)

// writeScan writes rows as a scan directory of the contract: part-00.parquet
// … part-15.parquet, partition p holding the keys whose first byte >> 4 is
// p, sorted by key (a partition without keys is a file without rows), and
// a _manifest.json (a placeholder here: the query does not read it). It
// returns how many partitions are empty.
func writeScan(t testing.TB, dir string, rows []entryRow) (empty int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var parts [16][]entryRow
	for _, r := range rows {
		parts[r.Key[0]>>4] = append(parts[r.Key[0]>>4], r)
	}
	for p, part := range parts {
		slices.SortFunc(part, func(a, b entryRow) int { return bytes.Compare(a.Key[:], b.Key[:]) })
		for i := 1; i < len(part); i++ {
			if part[i-1].Key == part[i].Key {
				t.Fatalf("fixture: key %x twice in one scan", part[i].Key)
			}
		}
		if len(part) == 0 {
			empty++
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", p)))
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[entryRow](f)
		if _, err := w.Write(part); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "_manifest.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return empty
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// openDuckDB opens an in-memory DuckDB database and one connection to it,
// closed at the end of the test.
func openDuckDB(t testing.TB) *sql.Conn {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// runDuckDB runs the query on DuckDB over the Parquet files that the globs
// name (each a path or a DuckDB glob, such as dir/*/part-*.parquet) and
// returns the histogram of its rows. It checks on the way that the files
// read as the contract's columns, that the result has the query's columns,
// all BIGINT, one row per non-empty bucket in increasing order, and that
// the same result written by COPY (...) TO a CSV file with a header, as
// docs/saved-scans.md says, reads back through ReadResult to the same histogram.
func runDuckDB(t testing.TB, parquetGlobs []string) *ddt.Histogram {
	t.Helper()
	ctx := context.Background()
	conn := openDuckDB(t)
	var list []string
	for _, g := range parquetGlobs {
		list = append(list, sqlString(g))
	}
	// The engine-specific line: the view over the files.
	if _, err := conn.ExecContext(ctx, "CREATE VIEW ddtsim_entries AS SELECT * FROM read_parquet(["+strings.Join(list, ", ")+"])"); err != nil {
		t.Fatalf("CREATE VIEW: %v", err)
	}

	// The files as DuckDB reads them.
	rows, err := conn.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE ddtsim_entries)")
	if err != nil {
		t.Fatal(err)
	}
	var schema []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		schema = append(schema, name+" "+typ)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"key BLOB", "refcnt BIGINT", "lsize BIGINT", "psize BIGINT", "dsize BIGINT"}; !slices.Equal(schema, want) {
		t.Errorf("ddtsim_entries: columns %q, want %q", schema, want)
	}

	// The query.
	rows, err = conn.QueryContext(ctx, Query)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range types {
		got = append(got, ct.Name()+" "+ct.DatabaseTypeName())
	}
	var want []string
	for _, c := range columns {
		want = append(want, c+" BIGINT")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("result columns %q, want %q", got, want)
	}
	h := new(ddt.Histogram)
	last := int64(-1)
	for rows.Next() {
		var v [9]int64
		if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]); err != nil {
			t.Fatal(err)
		}
		if v[0] <= last || v[0] > 63 {
			t.Fatalf("bucket %d after bucket %d", v[0], last)
		}
		last = v[0]
		var u [9]uint64
		for i, x := range v {
			if x < 0 {
				t.Fatalf("bucket %d: %s %d", v[0], columns[i], x)
			}
			u[i] = uint64(x)
		}
		if u[1] == 0 {
			t.Errorf("bucket %d: a row without blocks", v[0])
		}
		h[v[0]] = ddt.Bucket{
			Allocated:  ddt.Stat{Blocks: u[1], LSize: u[2], PSize: u[3], DSize: u[4]},
			Referenced: ddt.Stat{Blocks: u[5], LSize: u[6], PSize: u[7], DSize: u[8]},
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("query: %v", err)
	}

	// The same through a CSV file, as docs/saved-scans.md runs it.
	out := filepath.Join(t.TempDir(), "r.csv")
	if _, err := conn.ExecContext(ctx, "COPY ("+Query+") TO "+sqlString(out)+" (HEADER)"); err != nil {
		t.Fatalf("COPY: %v", err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fromCSV, err := ReadResult(f)
	if err != nil {
		text, _ := os.ReadFile(out)
		t.Fatalf("ReadResult of DuckDB's CSV: %v\n%s", err, text)
	}
	if d := cmp.Diff(h, fromCSV); d != "" {
		t.Errorf("the CSV result differs from the rows: (-rows +csv)\n%s", d)
	}
	return h
}

// TestDuckDB runs the query on every fixture and compares it, field by
// field, with the histogram of the keys merged in Go.
func TestDuckDB(t *testing.T) {
	t.Parallel()
	empty, full := 0, 0
	for _, fx := range fixtures() {
		t.Run(strings.ReplaceAll(fx.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			var globs []string
			for i, scan := range fx.scans {
				d := filepath.Join(dir, fmt.Sprintf("host%d", i))
				e := writeScan(t, d, scan)
				empty += e
				full += 16 - e
				globs = append(globs, filepath.Join(d, "part-*.parquet"))
			}
			if len(fx.scans) > 1 {
				// One glob over all scan directories, as docs/saved-scans.md has it.
				globs = []string{filepath.Join(dir, "*", "part-*.parquet")}
			}
			want := native(t, fx.scans)
			got := runDuckDB(t, globs)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("DuckDB differs from the native histogram: (-native +duckdb)\n%s", d)
			}
		})
	}
	if empty == 0 || full == 0 {
		t.Errorf("%d empty and %d non-empty partitions written: want both", empty, full)
	}
}

// TestDuckDBDivision checks the query's integer division on DuckDB, where
// a BIGINT / BIGINT is a DOUBLE: exact for every dividend up to 2^53, and
// beyond that, up to 2^63 - 1, while the quotient is below 2^49.
func TestDuckDBDivision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := openDuckDB(t)
	var typ string
	var naive int64
	if err := conn.QueryRowContext(ctx, "SELECT typeof(CAST(7 AS BIGINT) / CAST(2 AS BIGINT)), CAST(CAST(7 AS BIGINT) / CAST(2 AS BIGINT) AS BIGINT)").Scan(&typ, &naive); err != nil {
		t.Fatal(err)
	}
	if typ != "DOUBLE" || naive != 4 {
		t.Logf("DuckDB: BIGINT / BIGINT is a %s, 7 / 2 cast to BIGINT is %d (the division being checked is meant for a DOUBLE /)", typ, naive)
	}

	type pair struct{ a, b int64 }
	var pairs []pair
	r := rand.New(rand.NewPCG(5, 6))
	// b from 1 up to max, spread over the magnitudes.
	divisor := func(max int64) int64 {
		if max <= 1 {
			return 1
		}
		return 1 + r.Int64N(min(max, int64(1)<<r.IntN(63)))
	}
	const two53 = int64(1) << 53
	// Up to 2^53, every divisor; quotients of 2^52 and more among them, which
	// x + 0.5 would round up when odd.
	for _, a := range []int64{0, 1, 2, 3, 1<<52 - 1, 1 << 52, 1<<52 + 1, 1<<52 + 3, two53 - 3, two53 - 1, two53} {
		for range 50 {
			pairs = append(pairs, pair{a, divisor(max(a, 1))})
		}
		pairs = append(pairs, pair{a, 1}, pair{a, 2}, pair{a, 3}, pair{a, 7}, pair{a, max(a, 1)})
	}
	for range 3000 { // up to 2^53
		a := r.Int64N(two53 + 1)
		pairs = append(pairs, pair{a, divisor(max(a, 1))})
	}
	for range 3000 { // beyond 2^53, quotient below 2^49
		a := two53 + r.Int64N(1<<63-1-two53)
		lo := a>>49 + 1 // a / lo < 2^49
		pairs = append(pairs, pair{a, lo + r.Int64N(min(a-lo+1, int64(1)<<r.IntN(63)))})
	}
	for _, b := range []int64{1<<14 + 1, 1<<14 + 3, 1<<20 - 1, 131071, 393216} {
		a := int64(1<<63 - 1)
		pairs = append(pairs, pair{a, b}, pair{a - 1, b}, pair{a - b, b}, pair{a / b * b, b}, pair{a/b*b - 1, b})
	}
	if _, err := conn.ExecContext(ctx, "CREATE TABLE d (a BIGINT, b BIGINT)"); err != nil {
		t.Fatal(err)
	}
	for chunk := range slices.Chunk(pairs, 1000) {
		var values []string
		for _, p := range chunk {
			values = append(values, fmt.Sprintf("(%d, %d)", p.a, p.b))
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO d VALUES "+strings.Join(values, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT a, b, "+divExpr("a", "b")+" FROM d")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, bad := 0, 0
	for rows.Next() {
		var a, b, q int64
		if err := rows.Scan(&a, &b, &q); err != nil {
			t.Fatal(err)
		}
		n++
		if a > two53 && a/b >= 1<<49 {
			t.Fatalf("pair %d, %d: outside the bound checked", a, b)
		}
		if q != a/b {
			bad++
			if bad <= 10 {
				t.Errorf("%d / %d: %d, want %d", a, b, q, a/b)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(pairs) || bad != 0 {
		t.Errorf("%d of %d divisions (of %d pairs) wrong", bad, n, len(pairs))
	}
}
