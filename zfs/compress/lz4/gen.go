//go:build ignore

// gen.go writes search.go, the compressor proper of package lz4
// (LZ4_compressCtx and LZ4_compress64kCtx of module/zfs/lz4_zfs.c, each
// writing the block or only counting its bytes), from the one template
// search.tmpl. Run by go generate (see lz4.go); with -out - it writes to
// standard output, which TestGenerated compares with search.go.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"strings"
	"text/template"
)

func main() {
	file := flag.String("out", "search.go", "the Go file to write (-: standard output)")
	flag.Parse()
	text, err := os.ReadFile("search.tmpl")
	var src []byte
	if err == nil {
		src, err = source(string(text))
	}
	if err == nil {
		if *file == "-" {
			_, err = os.Stdout.Write(src)
		} else {
			err = os.WriteFile(*file, src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// table is one of the two LZ4 r85 variants: its hash table and checks,
// as the template names them.
type table struct {
	Suffix string // of the function names: "Large", "64k"
	C      string // the C function it models
	Doc    string // what the function comment says of it
	Large  bool   // 32-bit positions and MAX_DISTANCE check
	Log    string // the hash log constant
	Hash   string // the hash function
	Pos    string // the type of a table entry
	Table  string // the Compressor field
}

// variant is one function of the four: a table's compressor, writing or
// counting.
type variant struct {
	table
	Write bool
}

var tables = []table{
	{
		Suffix: "Large", C: "LZ4_compressCtx",
		Doc:   "inputs of 65547 bytes and more: 4096 hash entries holding 32-bit positions, matches at most MAX_DISTANCE = 65535 bytes back",
		Large: true, Log: "hashLogLarge", Hash: "hashLarge", Pos: "uint32", Table: "large",
	},
	{
		Suffix: "64k", C: "LZ4_compress64kCtx",
		Doc: "inputs shorter than 65547 bytes: 8192 hash entries holding 16-bit positions and no distance check",
		Log: "hashLog64k", Hash: "hash64k", Pos: "uint16", Table: "small",
	},
}

// source returns search.go, gofmt-ed, from the template text.
func source(text string) ([]byte, error) {
	t, err := template.New("search.tmpl").Funcs(template.FuncMap{"comment": comment}).Parse(text)
	if err != nil {
		return nil, err
	}
	var vs []variant
	for _, w := range []bool{true, false} {
		for _, tb := range tables {
			vs = append(vs, variant{tb, w})
		}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct{ Variants []variant }{vs}); err != nil {
		return nil, err
	}
	return format.Source(b.Bytes())
}

// comment returns text as a Go comment, its lines filled up to 76 columns.
func comment(text string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len([]rune(w)) > 76 {
			b.WriteByte('\n')
			n = 0
		}
		if n == 0 {
			b.WriteString("//")
			n = 2
		}
		b.WriteByte(' ')
		b.WriteString(w)
		n += 1 + len([]rune(w))
	}
	return b.String()
}
