package zdb

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// Parse refuses binary input (a NUL byte, or mostly bytes no text holds,
// in its first 8 KiB) with ErrBinary, and takes text with accents, tabs,
// escapes and CRLF line ends.
func TestParseRefusesBinary(t *testing.T) {
	t.Parallel()
	noNUL := make([]byte, 20000)
	rand.New(rand.NewSource(1)).Read(noNUL)
	for i := range noNUL {
		if noNUL[i] == 0 {
			noNUL[i] = 1
		}
	}
	elf, err := os.ReadFile(os.Args[0]) // this test binary
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"ELF":           elf,
		"random no NUL": noNUL,
		"NUL in text":   []byte(workedZdbS[:100] + "\x00" + workedZdbS[100:]),
		"UTF-16":        []byte("\xff\xfeS\x00i\x00m\x00"),
	} {
		p, err := Parse(bytes.NewReader(in))
		if !errors.Is(err, ErrBinary) || p != nil {
			t.Errorf("%s: %v, %v; want ErrBinary", name, p != nil, err)
		}
	}
	text := "Résumé de zdb -S, «pool» tank\t\x1b[1m\x1b[0m\r\n" + strings.ReplaceAll(workedZdbS, "\n", "\r\n")
	p, err := Parse(iotest.OneByteReader(strings.NewReader(text)))
	if err != nil || len(p.Tables) != 1 || p.Tables[0].Total == nil || p.Tables[0].Ratios == nil {
		t.Fatalf("text with accents and CRLF: %v %+v", err, p)
	}
}

// A line of any length is read; one longer than MaxLineBytes is a "not
// understood" warning naming its number and length, and the text around
// it is read as usual.
func TestParseLongLines(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(zdbOutputs(), "03-zdb-S-freebsd12-minecraft-compress.txt"))
	if err != nil {
		t.Fatal(err)
	}
	real := strings.TrimSuffix(string(b), "\n")
	nReal := strings.Count(real, "\n") + 1
	for _, n := range []int{MaxLineBytes + 1, 3 << 20, 40 << 20} {
		long := strings.Repeat("x", n)
		p, err := Parse(strings.NewReader(real + "\n" + long + "\n" + real + "\n"))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if len(p.Tables) != 2 || p.Lines != 2*nReal+1 {
			t.Errorf("%d bytes: %d tables, %d lines", n, len(p.Tables), p.Lines)
		}
		var found bool
		for _, d := range p.Diags {
			if d.Line == nReal+1 && d.Severity == SevWarning && strings.HasPrefix(d.Msg, NotUnderstood) && strings.Contains(d.Msg, "a line of "+strconv.Itoa(n)+" bytes") {
				found = true
			}
		}
		if !found {
			t.Errorf("%d bytes: no warning at line %d: %v", n, nReal+1, p.Diags)
		}
	}
	// A line of exactly MaxLineBytes is read as a line; no final newline.
	p, err := Parse(strings.NewReader(real + "\n" + strings.Repeat("y", MaxLineBytes)))
	if err != nil || p.Lines != nReal+1 || len(p.Diags) != 1 || !strings.Contains(p.Diags[0].Msg, `"yyy`) {
		t.Errorf("line of MaxLineBytes: %v %d lines, %v", err, p.Lines, p.Diags)
	}
}

// The text report lists 20 lines not understood and counts the others;
// the JSON keeps them all.
func TestParseCapsNotUnderstood(t *testing.T) {
	t.Parallel()
	var garbage strings.Builder
	for i := 0; i < 150; i++ {
		garbage.WriteString("some garbage here\n")
	}
	p := ParseString(garbage.String() + workedZdbS)
	if len(p.Diags) != 150 {
		t.Fatalf("%d diagnostics", len(p.Diags))
	}
	var b strings.Builder
	if err := p.WriteText(&b, "x"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, NotUnderstood); n != MaxNotUnderstoodShown {
		t.Errorf("%d not-understood lines printed, want %d", n, MaxNotUnderstoodShown)
	}
	if !strings.Contains(out, "  ... and 130 more lines not understood (--json lists them all)\n") {
		t.Errorf("no count of the rest:\n%s", out)
	}
	b.Reset()
	p.WriteJSON(&b)
	if n := strings.Count(b.String(), NotUnderstood); n != 150 {
		t.Errorf("JSON lists %d, want 150", n)
	}
}

// The text report counts in words: "1 line", "1 bucket row", "1 more
// line not understood"; "2 lines" and so on.
func TestWriteTextCounts(t *testing.T) {
	t.Parallel()
	text := func(p *Parsed) string {
		var b strings.Builder
		if err := p.WriteText(&b, "x"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := text(ParseString("hello\n")); !strings.HasPrefix(got, "x: 1 line\n") {
		t.Errorf("one line:\n%s", got)
	}
	if got := text(ParseString("hello\nthere\n")); !strings.HasPrefix(got, "x: 2 lines\n") {
		t.Errorf("two lines:\n%s", got)
	}
	one := `bucket              allocated                       referenced
______   ______________________________   ______________________________
refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE
------   ------   -----   -----   -----   ------   -----   -----   -----
     1        1    128K      4K      4K        1    128K      4K      4K
 Total        1    128K      4K      4K        1    128K      4K      4K
`
	if got := text(ParseString(one)); !strings.Contains(got, "  table        lines 1-6: DDT histogram (no title: which command printed it is unknown), 1 bucket row\n") {
		t.Errorf("one bucket row:\n%s", got)
	}
	var garbage strings.Builder
	for range MaxNotUnderstoodShown + 1 {
		garbage.WriteString("some garbage here\n")
	}
	if got := text(ParseString(garbage.String())); !strings.Contains(got, "\n  ... and 1 more line not understood (--json lists them all)\n") {
		t.Errorf("21 lines not understood:\n%s", got)
	}
}
