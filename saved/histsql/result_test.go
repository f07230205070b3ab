package histsql

import (
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/google/go-cmp/cmp"
)

// resultFormat is one way an engine prints the query's result.
type resultFormat struct {
	name   string
	tab    bool  // tab-separated, else comma
	header bool  // a header row
	quote  bool  // every field in double quotes (Trino CSV)
	crlf   bool  // CRLF line ends
	noEnd  bool  // no line end after the last line
	order  []int // with a header: the columns' order (nil: the query's)
	upper  bool  // header names in upper case
}

var resultFormats = []resultFormat{
	{name: "DuckDB COPY (HEADER)", header: true},
	{name: "Trino CSV_HEADER", header: true, quote: true},
	{name: "Trino CSV", quote: true},
	{name: "CSV without header"},
	{name: "spark-sql TSV", tab: true},
	{name: "Trino TSV_HEADER", tab: true, header: true},
	{name: "CRLF with header", header: true, crlf: true},
	{name: "CRLF without header, no final line end", crlf: true, noEnd: true},
	{name: "TSV, no final line end", tab: true, noEnd: true},
	{name: "header in another order, upper case", header: true, order: []int{8, 0, 3, 1, 7, 2, 6, 4, 5}, upper: true},
	{name: "quoted, tabs, CRLF, header in another order", tab: true, quote: true, crlf: true, header: true, order: []int{5, 6, 7, 8, 0, 1, 2, 3, 4}},
}

// formatResult prints h as an engine would print the query's result.
func formatResult(h *ddt.Histogram, f resultFormat) string {
	sep, end := ",", "\n"
	if f.tab {
		sep = "\t"
	}
	if f.crlf {
		end = "\r\n"
	}
	order := f.order
	if order == nil {
		order = []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	}
	var lines []string
	line := func(fields [9]string) {
		var out []string
		for _, c := range order {
			v := fields[c]
			if f.quote {
				v = `"` + v + `"`
			}
			out = append(out, v)
		}
		lines = append(lines, strings.Join(out, sep))
	}
	if f.header {
		names := columns
		if f.upper {
			for i := range names {
				names[i] = strings.ToUpper(names[i])
			}
		}
		line(names)
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for b, bk := range h {
		a, r := bk.Allocated, bk.Referenced
		if a.Blocks == 0 {
			continue
		}
		line([9]string{strconv.Itoa(b), u(a.Blocks), u(a.LSize), u(a.PSize), u(a.DSize),
			u(r.Blocks), u(r.LSize), u(r.PSize), u(r.DSize)})
	}
	s := strings.Join(lines, end)
	if !f.noEnd && s != "" {
		s += end
	}
	return s
}

func readString(t *testing.T, s string) (*ddt.Histogram, error) {
	t.Helper()
	// One byte at a time: ReadResult must not depend on how reads split.
	return ReadResult(iotest.OneByteReader(strings.NewReader(s)))
}

// TestReadResultFormats reads the fixtures' histograms in every format.
func TestReadResultFormats(t *testing.T) {
	t.Parallel()
	for _, fx := range fixtures() {
		want := native(t, fx.scans)
		for _, f := range resultFormats {
			text := formatResult(want, f)
			got, err := readString(t, text)
			if err != nil {
				t.Errorf("%s, %s: %v\n%s", fx.name, f.name, err, text)
				continue
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s, %s: (-want +got)\n%s", fx.name, f.name, d)
			}
		}
	}
}

// TestReadResultVerbatim reads results written out by hand as the engines
// print them.
func TestReadResultVerbatim(t *testing.T) {
	t.Parallel()
	want := new(ddt.Histogram)
	want.Add(1, 4096, 4096, 4096)
	want.Add(1, 4096, 4096, 4096)
	want.Add(1, 4096, 0+4096, 8192)
	want.Add(5, 131072, 4096, 4096)
	for _, tc := range []struct{ name, text string }{
		{"DuckDB COPY (HEADER)", "" +
			"bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize,ref_dsize\n" +
			"0,3,12288,12288,16384,3,12288,12288,16384\n" +
			"2,1,131072,4096,4096,5,655360,20480,20480\n"},
		{"Trino CSV_HEADER", "" +
			`"bucket","blocks","lsize","psize","dsize","ref_blocks","ref_lsize","ref_psize","ref_dsize"` + "\n" +
			`"0","3","12288","12288","16384","3","12288","12288","16384"` + "\n" +
			`"2","1","131072","4096","4096","5","655360","20480","20480"` + "\n"},
		{"spark-sql", "" +
			"0\t3\t12288\t12288\t16384\t3\t12288\t12288\t16384\n" +
			"2\t1\t131072\t4096\t4096\t5\t655360\t20480\t20480\n"},
		{"rows in another order, CRLF, no final line end", "" +
			"2,1,131072,4096,4096,5,655360,20480,20480\r\n" +
			"0,3,12288,12288,16384,3,12288,12288,16384"},
		{"pandas to_csv with its index, BOM, spaces, empty lines", "\ufeff" +
			",Bucket,Blocks,LSize,PSize,DSize,Ref_Blocks,Ref_LSize,Ref_PSize,Ref_DSize\n\n" +
			"0, 0, 3, 12288, 12288, 16384, 3, 12288, 12288, 16384\n" +
			"1, 2 ,1,131072,4096,4096,5,655360,20480,20480\n\n"},
		{"empty lines before a TSV header", "\n\n" +
			"bucket\tblocks\tlsize\tpsize\tdsize\tref_blocks\tref_lsize\tref_psize\tref_dsize\n" +
			"0\t3\t12288\t12288\t16384\t3\t12288\t12288\t16384\n" +
			"2\t1\t131072\t4096\t4096\t5\t655360\t20480\t20480\n"},
	} {
		got, err := readString(t, tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, d)
		}
	}
}

// TestReadResultEmpty: no stored blocks, no rows; valid.
func TestReadResultEmpty(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"",
		"\n",
		"\r\n",
		"bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize,ref_dsize\n",
		"bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize,ref_dsize",
		`"bucket","blocks","lsize","psize","dsize","ref_blocks","ref_lsize","ref_psize","ref_dsize"` + "\r\n",
		"bucket\tblocks\tlsize\tpsize\tdsize\tref_blocks\tref_lsize\tref_psize\tref_dsize\n",
	} {
		got, err := readString(t, text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if *got != (ddt.Histogram{}) {
			t.Errorf("%q: not an empty histogram", text)
		}
	}
}

func TestReadResultErrors(t *testing.T) {
	t.Parallel()
	const header = "bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize,ref_dsize\n"
	const row0 = "0,3,12288,12288,16384,3,12288,12288,16384\n"
	for _, tc := range []struct{ text, want string }{
		{header + row0 + "2,1,131072,4096,4096,5,1.5e3,20480,20480\n",
			`line 3: ref_lsize: not an integer: "1.5e3"`},
		{row0 + "2,1,131072,4096,4096,5,655360,-20480,20480\n",
			`line 2: ref_psize: negative: -20480`},
		{row0 + "2,1,131072,4096,4096,5,655360,20480,9223372036854775808\n",
			`line 2: ref_dsize: beyond BIGINT: "9223372036854775808"`},
		{"0\t3\t12288\t12288\t16384\tNULL\t12288\t12288\t16384\n",
			`line 1: ref_blocks: not an integer: "NULL"`},
		{`"0","3","12288","12288","16384","3","","12288","16384"` + "\n",
			`line 1: ref_lsize: not an integer: ""`},
		{header + "64,1,1,1,1,1,1,1,1\n",
			`line 2: bucket 64: out of range 0 to 63`},
		{header + row0 + "1,1,1,1,1,2,2,2,2\n" + row0,
			`line 4: bucket 0 twice (also on line 2)`},
		{"bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize\n" + row0,
			`line 1: header row without column ref_dsize (it has bucket, blocks, lsize, psize, dsize, ref_blocks, ref_lsize, ref_psize; a histogram needs bucket, blocks, lsize, psize, dsize, ref_blocks, ref_lsize, ref_psize, ref_dsize)`},
		{"foo,bar\n1,2\n",
			`line 1: header row without column bucket, blocks, lsize, psize, dsize, ref_blocks, ref_lsize, ref_psize, ref_dsize (it has foo, bar; a histogram needs bucket, blocks, lsize, psize, dsize, ref_blocks, ref_lsize, ref_psize, ref_dsize)`},
		{"refcnt,allocated_blocks,allocated_lsize\n",
			`line 1: header row without column bucket, blocks, lsize, psize, dsize, ref_blocks, ref_lsize, ref_psize, ref_dsize`},
		{"bucket,blocks,lsize,psize,dsize,ref_blocks,ref_lsize,ref_psize,ref_dsize,LSIZE\n",
			`line 1: column lsize twice (fields 3 and 10)`},
		{"0,3,12288,12288,16384,3,12288,12288\n",
			`line 1: 8 fields and no header row: want the 9 columns bucket, blocks, lsize, psize, dsize, ref_blocks, ref_lsize, ref_psize, ref_dsize`},
		{header + row0 + "1,1,1,1,1,2,2,2\n",
			`line 3: 8 fields, want 9`},
		{"0\t3\t12288\t12288\t16384\t3\t12288\t12288\t16384\t7\n",
			`line 1: 10 fields and no header row`},
		{header + "0,0,0,0,0,0,0,0,0\n",
			`line 2: bucket 0: blocks is 0`},
		// Allocated and referenced swapped: 5 references cannot be 1 block of bucket 2.
		{header + "2,5,655360,20480,20480,1,131072,4096,4096\n",
			`line 2: bucket 2: ref_blocks 1 does not fit 5 blocks of 4 to 7 references each`},
		{header + "2,1,655360,20480,20480,5,131072,4096,4096\n",
			`line 2: bucket 2: ref_lsize 131072 is less than 4 times lsize 655360`},
		// Columns of a headerless result in another order (bucket, blocks swapped).
		{"3,0,12288,12288,16384,3,12288,12288,16384\n",
			`line 1: bucket 3: blocks is 0`},
		{header + "0,\"3,12288,12288,16384,3,12288,12288,16384\n",
			`parse error on line 2, column 44: extraneous or missing " in quoted-field`},
		{header + "0,3\"x,12288,12288,16384,3,12288,12288,16384\n",
			`parse error on line 2, column 4: bare " in non-quoted-field`},
		{strings.Repeat("0", maxResult+1),
			`longer than 1048576 bytes: not a histogram result`},
	} {
		_, err := readString(t, tc.text)
		if err == nil {
			t.Errorf("%.80q: no error, want %s", tc.text, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.80q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
}

// TestReadResultBucket63 takes zdb's last bucket, which a BIGINT refcnt
// cannot reach but a histogram has, and the bounds check at the top.
func TestReadResultBucket63(t *testing.T) {
	t.Parallel()
	h, err := readString(t, "63,1,1,1,1,9223372036854775807,9223372036854775807,1,1\n")
	if err == nil {
		t.Errorf("bucket 63 with 2^63-1 references: no error (%v)", h[63])
	}
	h, err = readString(t, "62,1,1,1,1,9223372036854775807,9223372036854775807,9223372036854775807,9223372036854775807\n")
	if err != nil {
		t.Fatal(err)
	}
	if h[62].Referenced.Blocks != 1<<63-1 {
		t.Errorf("bucket 62: %v", h[62])
	}
}
