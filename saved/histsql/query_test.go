package histsql

import (
	"fmt"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ladder is the bucket ladder of histogram.sql as it is generated: bucket
// b for refcnt < 2^(b+1), b = 0 … 61, else 62 (a BIGINT is below 2^63).
func ladder() string {
	var sb strings.Builder
	for b := range 62 {
		fmt.Fprintf(&sb, "      WHEN ref_blocks < %19d THEN %2d  -- 2^%d\n", uint64(1)<<(b+1), b, b+1)
	}
	sb.WriteString("      ELSE 62\n")
	return sb.String()
}

// TestLadder checks that the query holds the generated ladder, and that
// the ladder, read back from the query, gives floor(log2(refcnt)) at every
// power of two and next to it.
func TestLadder(t *testing.T) {
	t.Parallel()
	if !strings.Contains(Query, "    CAST(CASE\n"+ladder()+"    END AS BIGINT) AS bucket,\n") {
		t.Errorf("histogram.sql does not hold the generated ladder:\n%s", ladder())
	}
	re := regexp.MustCompile(`(?m)^\s*WHEN ref_blocks < +(\d+) THEN +(\d+)`)
	type step struct{ below, bucket uint64 }
	var steps []step
	for _, m := range re.FindAllStringSubmatch(Query, -1) {
		below, _ := strconv.ParseUint(m[1], 10, 64)
		bucket, _ := strconv.ParseUint(m[2], 10, 64)
		steps = append(steps, step{below, bucket})
	}
	eval := func(refcnt uint64) uint64 {
		for _, s := range steps {
			if refcnt < s.below {
				return s.bucket
			}
		}
		return 62 // ELSE
	}
	for e := range 63 {
		p := uint64(1) << e
		for _, r := range []uint64{p - 1, p, p + 1, p<<1 - 1} {
			if r == 0 || r >= 1<<63 {
				continue
			}
			if got, want := eval(r), uint64(bits.Len64(r)-1); got != want {
				t.Errorf("refcnt %d: bucket %d, want %d", r, got, want)
			}
		}
	}
}

// divExpr is the exact integer division of histogram.sql, a / b.
func divExpr(a, b string) string {
	return fmt.Sprintf("CAST(FLOOR((%s - MOD(%s, %s)) / %s + 0.25) AS BIGINT)", a, a, b, b)
}

func TestQueryDivides(t *testing.T) {
	t.Parallel()
	for _, col := range []string{"lsize", "psize", "dsize"} {
		if want := divExpr("ref_"+col, "ref_blocks") + " AS " + col; !strings.Contains(Query, want) {
			t.Errorf("histogram.sql does not compute %s as %s", col, want)
		}
	}
}

// stripComments removes the -- comments of SQL text (the query has no
// string literals).
func stripComments(sql string) string {
	return regexp.MustCompile(`--[^\n]*`).ReplaceAllString(sql, "")
}

// TestQueryPortable refuses what is not ANSI SQL, or would not run on one
// of DuckDB, Spark SQL and Trino, and what would keep the text from being
// put inside COPY (...).
func TestQueryPortable(t *testing.T) {
	t.Parallel()
	code := stripComments(Query)
	// Not even in comments: some command line clients (spark-sql has
	// been one) split statements at semicolons and track quotes without
	// reading comments; and docs/saved-scans.md puts the text inside a shell's
	// double quotes, where $, `, \ and ! (history) are special.
	for _, bad := range []string{"'", "\"", "`", ";", "$", "\\", "!"} {
		if strings.Contains(Query, bad) {
			t.Errorf("histogram.sql has %s", bad)
		}
	}
	for _, bad := range []string{
		"//",         // DuckDB's integer division
		"::",         // PostgreSQL and DuckDB casts
		"log", "ln(", // log2, log, ln: engine-specific or inexact
		"qualify",       // DuckDB, Snowflake
		"read_parquet",  // the view over the files is the engine's own
		"parquet",       // the same
		"%",             // modulo operator: MOD() is ANSI
		"div",           // DIV: MySQL, Spark
		"try_", "safe_", // engine-specific error handling
		"hugeint", "int128", "decimal", "double",
		"limit", "top ", "offset",
		"ilike", "regexp", "||",
		"ifnull", "nvl", "iff(", "if(",
	} {
		if strings.Contains(strings.ToLower(code), bad) {
			t.Errorf("histogram.sql has %q outside comments", bad)
		}
	}
	for _, fn := range regexp.MustCompile(`(?i)\b([a-z_][a-z0-9_]*)\s*\(`).FindAllStringSubmatch(code, -1) {
		switch strings.ToUpper(fn[1]) {
		case "CAST", "SUM", "COUNT", "MOD", "FLOOR", "AS", "IN":
		default:
			t.Errorf("histogram.sql calls %s(): not one of CAST, SUM, COUNT, MOD, FLOOR", fn[1])
		}
	}
	lines := strings.Split(strings.TrimRight(Query, "\n"), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "ORDER BY bucket" {
		t.Errorf("last line %q, want ORDER BY bucket (a comment there would swallow a closing parenthesis)", last)
	}
	if !strings.HasSuffix(Query, "\n") || strings.HasSuffix(Query, "\n\n") {
		t.Error("histogram.sql should end with one newline")
	}
	for i, l := range lines {
		if strings.TrimRight(l, " \t") != l || strings.Contains(l, "\t") || strings.Contains(l, "\r") {
			t.Errorf("line %d: tab, CR or trailing space", i+1)
		}
		if len(l) > 100 {
			t.Errorf("line %d: %d characters", i+1, len(l))
		}
	}
	if !strings.Contains(code, "FROM ddtsim_entries") {
		t.Error("histogram.sql does not read ddtsim_entries")
	}
}
