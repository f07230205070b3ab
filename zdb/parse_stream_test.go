package zdb

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repeatReader reads block n times.
type repeatReader struct {
	block []byte
	n     int
	off   int
}

func (r *repeatReader) Read(b []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(b, r.block[r.off:])
	if r.off += k; r.off == len(r.block) {
		r.off, r.n = 0, r.n-1
	}
	return k, nil
}

// peakReader samples the live heap (after a collection) every sampleBytes
// read, and keeps the largest.
type peakReader struct {
	r          io.Reader
	read, next int64
	peak       uint64
}

const sampleBytes = 4 << 20

func (r *peakReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.read += int64(n)
	if r.read >= r.next {
		r.next += sampleBytes
		r.peak = max(r.peak, liveHeap())
	}
	return n, err
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Parse streams: on 64 MiB of text (a real zdb -S output, a lot of lines
// not understood, comments, blank lines and lines too long to read, then
// the output again) the live heap stays within a few MiB, whatever the
// size of the input; the diagnostics past the first MaxDiags are counted,
// not kept, and both outputs are read in full.
func TestParseStreamsLargeInput(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 64 MiB")
	}
	b, err := os.ReadFile(filepath.Join(zdbOutputs(), "03-zdb-S-freebsd12-minecraft-compress.txt"))
	if err != nil {
		t.Fatal(err)
	}
	real := string(b)
	realLines := strings.Count(real, "\n")
	one := ParseString(real)
	if len(one.Tables) != 1 || len(one.Diags) != 0 || one.Tables[0].Ratios == nil {
		t.Fatalf("the real output alone: %d tables, %v", len(one.Tables), one.Diags)
	}

	var blk strings.Builder
	const noise = 1000 // lines not understood per block
	for i := range noise {
		fmt.Fprintf(&blk, "Jan 12 10:%02d:%02d host kernel: a line about nothing, number %d\n", i/60%60, i%60, i)
		if i%100 == 0 {
			blk.WriteString("# a comment\n\n")
		}
	}
	blk.WriteString(strings.Repeat("x", MaxLineBytes+100) + "\n") // not understood either
	block := blk.String()
	blockLines := strings.Count(block, "\n")
	blocks := (64 << 20) / len(block)

	runtime.GC()
	base := liveHeap()
	pr := &peakReader{r: io.MultiReader(strings.NewReader(real), &repeatReader{block: []byte(block), n: blocks}, strings.NewReader(real))}
	p, err := Parse(pr)
	if err != nil {
		t.Fatal(err)
	}
	pr.peak = max(pr.peak, liveHeap())
	runtime.KeepAlive(p)
	if pr.read < 64<<20-int64(len(block)) {
		t.Fatalf("read %d bytes", pr.read)
	}
	live := pr.peak - min(pr.peak, base)
	t.Logf("input %d bytes, live heap up to %d bytes more than before Parse", pr.read, live)
	if live > 8<<20 {
		t.Errorf("live heap up to %d bytes more than before Parse (input %d bytes), want at most 8 MiB", live, pr.read)
	}

	if want := 2*realLines + blocks*blockLines; p.Lines != want {
		t.Errorf("%d lines, want %d", p.Lines, want)
	}
	if len(p.Tables) != 2 {
		t.Fatalf("%d tables, want 2", len(p.Tables))
	}
	first, last := p.Tables[0], p.Tables[1]
	if d := realLines + blocks*blockLines; last.Line != first.Line+d || last.EndLine != first.EndLine+d || last.Ratios == nil || last.Ratios.Line != first.Ratios.Line+d {
		t.Errorf("second table: lines %d-%d, want %d-%d", last.Line, last.EndLine, first.Line+d, first.EndLine+d)
	}
	if last.Total == nil || *last.Total != (Row{Line: first.Total.Line + realLines + blocks*blockLines, Label: "Total", Bucket: -1, Allocated: first.Total.Allocated, Referenced: first.Total.Referenced}) {
		t.Errorf("second table's Total %+v, want that of the first", last.Total)
	}
	kept := 0
	for _, d := range p.Diags {
		if strings.HasPrefix(d.Msg, NotUnderstood) {
			kept++
		}
	}
	if want := blocks * (noise + 1); kept != MaxDiags || p.DiagsLeftOut != want-MaxDiags || p.NotUnderstoodLeftOut != want-MaxDiags {
		t.Errorf("%d lines not understood kept, %d left out (%d not understood); want %d, %d", kept, p.DiagsLeftOut, p.NotUnderstoodLeftOut, MaxDiags, want-MaxDiags)
	}
	if p.Era.Text != one.Era.Text || len(p.Checks) != 2*len(one.Checks) || len(p.Failed()) != 0 {
		t.Errorf("era %q, %d checks (%d failed); want %q, %d", p.Era.Text, len(p.Checks), len(p.Failed()), one.Era.Text, 2*len(one.Checks))
	}

	var out strings.Builder
	if err := p.WriteText(&out, "big"); err != nil {
		t.Fatal(err)
	}
	left := blocks*(noise+1) - MaxDiags
	for _, want := range []string{
		fmt.Sprintf("\n  ... and %d more lines not understood (--json lists %d of them)\n", MaxDiags-MaxNotUnderstoodShown+left, MaxDiags-MaxNotUnderstoodShown),
		fmt.Sprintf("\n  ... and %d more diagnostics about lines (%d of them lines not understood), left out: only the first %d are kept\n", left, left, MaxDiags),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
}

// Diagnostics are kept up to MaxDiagBytes of messages: rows of many fields
// quote their line.
func TestParseCapsDiagBytes(t *testing.T) {
	t.Parallel()
	row := "1 " + strings.TrimSpace(strings.Repeat("2 ", 20000)) // 40 KiB, 20001 fields
	var b strings.Builder
	const n = 100
	for range n {
		b.WriteString(row + "\n")
	}
	p := ParseString(b.String())
	msgBytes := 0
	for _, d := range p.Diags {
		msgBytes += len(d.Msg)
	}
	if msgBytes > MaxDiagBytes || len(p.Diags)+p.DiagsLeftOut < n || p.DiagsLeftOut == 0 || p.NotUnderstoodLeftOut != 0 {
		t.Errorf("%d diagnostics of %d bytes kept, %d left out (%d not understood)", len(p.Diags), msgBytes, p.DiagsLeftOut, p.NotUnderstoodLeftOut)
	}
	if len(p.Tables) != 1 || p.Tables[0].Errors != n {
		t.Errorf("%d tables, want 1 with %d errors", len(p.Tables), n)
	}
}
