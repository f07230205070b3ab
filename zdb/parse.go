package zdb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfslist"
)

// This file reads what OpenZFS printed: `zdb -S`, `zdb -D`/`-DD`/`-DDD` and
// `zpool status -D`, from every release (zfs-semantics §1.5–§2.6), as pasted
// by people: with shell prompts and command lines, comments, indentation,
// collapsed whitespace, wrapped ratio lines, several outputs one after the
// other, or cut short. Every line is either understood or reported by its
// number; numbers keep their display precision (Value).

// TableKind says which output a histogram table belongs to.
type TableKind string

// Table kinds.
const (
	KindSimulated  TableKind = "simulated"    // zdb -S: "Simulated DDT histogram:"
	KindAggregated TableKind = "aggregated"   // zdb -DD: "DDT histogram (aggregated over all DDTs):"
	KindObject     TableKind = "object"       // zdb -DDD: one DDT object's histogram (no Total row)
	KindStatus     TableKind = "zpool-status" // zpool status -D, after the dedup: line
	KindUnknown    TableKind = "unknown"      // a table without a title line
)

// Stat is one group of four cells: blocks, LSIZE, PSIZE, DSIZE.
type Stat struct {
	Blocks nicenum.Value `json:"blocks"`
	LSize  nicenum.Value `json:"lsize"`
	PSize  nicenum.Value `json:"psize"`
	DSize  nicenum.Value `json:"dsize"`
}

// Cells returns the four cells in column order.
func (s *Stat) Cells() [4]*nicenum.Value {
	return [4]*nicenum.Value{&s.Blocks, &s.LSize, &s.PSize, &s.DSize}
}

// Row is one row of a histogram table.
type Row struct {
	Line       int    `json:"line"`
	Label      string `json:"label"`  // refcnt label as printed ("1", "2", "1K"), or "Total"
	Bucket     int    `json:"bucket"` // floor(log2(refcnt)); -1 for the Total row
	Allocated  Stat   `json:"allocated"`
	Referenced Stat   `json:"referenced"`
}

// Refcnt returns the bucket's smallest refcnt, 2^Bucket (0 for Total).
func (r *Row) Refcnt() uint64 {
	if r.Bucket < 0 {
		return 0
	}
	return 1 << r.Bucket
}

// HistogramTable is one DDT histogram table as printed.
type HistogramTable struct {
	Kind    TableKind  `json:"kind"`
	Object  string     `json:"object,omitempty"` // KindObject: the DDT object, e.g. DDT-sha256-zap-unique
	Line    int        `json:"line"`             // first line (title or header)
	EndLine int        `json:"end_line"`         // last line read as part of it
	Header  bool       `json:"header"`           // the column header lines were there
	Rows    []Row      `json:"rows"`             // bucket rows, as printed
	Total   *Row       `json:"total"`            // nil when there is no Total row
	Ratios  *RatioLine `json:"ratios"`           // the ratio line printed after the table, if any
	// Errors counts rows that could not be read (bad or missing numbers).
	Errors int `json:"errors"`
	// Estimate is set for a table headed by ddtsim's line "ESTIMATE from
	// a P% random read of the records: not what zdb -S would print"
	// (ddtsim --read): no real zdb printed it.
	Estimate bool `json:"estimate,omitempty"`
}

// Complete reports whether the table was read without errors and has its
// Total row where the output always prints one.
func (t *HistogramTable) Complete() bool {
	return t.Errors == 0 && (t.Total != nil || t.Kind == KindObject || len(t.Rows) == 0 && t.Header)
}

// RatioLine is zdb's "dedup = …, compress = …, copies = …, dedup * compress
// / copies = …" line.
type RatioLine struct {
	Line     int           `json:"line"`
	Dedup    nicenum.Ratio `json:"dedup"`
	Compress nicenum.Ratio `json:"compress"`
	Copies   nicenum.Ratio `json:"copies"`
	Combined nicenum.Ratio `json:"combined"`
}

// Meaning of a printed DDT size.
const (
	PerEntry = "per-entry" // an average over the entries (integer division): ≤2.2.x
	Total    = "total"     // the sum over all entries: 2.3.0+
)

// DDTSize is one DDT size as printed ("on disk" or "in core") with what it
// means, both as bytes per entry and in total. The one that was printed is
// Printed; the other is derived from it and the entry count.
type DDTSize struct {
	Printed  nicenum.Value    `json:"printed"`
	Meaning  string           `json:"meaning"`         // PerEntry or Total: what the text meant
	Sure     bool             `json:"sure"`            // false: the format alone does not say; Basis tells why this reading was taken
	Basis    string           `json:"basis,omitempty"` // how Meaning was decided
	PerEntry nicenum.Interval `json:"per_entry"`       // bytes per entry (integer average)
	Total    nicenum.Interval `json:"total"`           // bytes over all entries
}

// DDTObject is one DDT object line of zdb -D: "DDT-sha256-zap-unique: 402
// entries, size 271 on disk, 155 in core" (≤2.2.x) or "…: dspace=…;
// mspace=…; entries=…" (2.3.0+).
type DDTObject struct {
	Line     int     `json:"line"`
	Name     string  `json:"name"`
	Checksum string  `json:"checksum"`
	Class    string  `json:"class"` // ditto, duplicate, unique
	Entries  uint64  `json:"entries"`
	OnDisk   DDTSize `json:"on_disk"`
	InCore   DDTSize `json:"in_core"`
}

// DDTTotals sums the DDT objects of the text: entries, and the intervals of
// total bytes on disk and in core their printed sizes allow.
func (p *Parsed) DDTTotals() (entries uint64, onDisk, inCore nicenum.Interval) {
	for _, o := range p.Objects {
		entries += o.Entries
		onDisk = onDisk.Add(o.OnDisk.Total)
		inCore = inCore.Add(o.InCore.Total)
	}
	return entries, onDisk, inCore
}

// DDTHeader is the 2.3.0+ per-DDT line "DDT-sha256: version=1 [FDT];
// flags=0x03 [FLAT LOG]; rootobj=139".
type DDTHeader struct {
	Line     int      `json:"line"`
	Checksum string   `json:"checksum"`
	Version  uint64   `json:"version"`
	Kind     string   `json:"kind"` // LEGACY, FDT, UNKNOWN
	Flags    uint64   `json:"flags"`
	FlagText []string `json:"flag_names"`
	RootObj  uint64   `json:"rootobj"`
}

// DDTLog is a 2.3.0+ dedup log line "DDT-log-sha256-0: flags=0x01
// [FLUSHING]; obj=140; len=0; txg=9; entries=0".
type DDTLog struct {
	Line     int      `json:"line"`
	Checksum string   `json:"checksum"`
	N        int      `json:"n"`
	Flags    uint64   `json:"flags"`
	FlagText []string `json:"flag_names"`
	Obj      uint64   `json:"obj"`
	Len      uint64   `json:"len"`
	Txg      uint64   `json:"txg"`
	Entries  uint64   `json:"entries"`
}

// DedupSummary is zpool status -D's "dedup: DDT entries N, size X on disk,
// Y in core[, C cached (P%)]" line, or "dedup: no DDT entries".
type DedupSummary struct {
	Line      int            `json:"line"`
	NoEntries bool           `json:"no_entries"`
	Entries   uint64         `json:"entries"`
	OnDisk    DDTSize        `json:"on_disk"`
	InCore    DDTSize        `json:"in_core"`
	Cached    *DDTSize       `json:"cached,omitempty"`
	CachedPct *nicenum.Ratio `json:"cached_pct,omitempty"`
}

// Command is a command line found in the text ("$ zdb -S tank").
type Command struct {
	Line int    `json:"line"`
	Text string `json:"text"` // the command without the prompt
}

// Severity of a Diag.
const (
	SevError   = "error"   // something that should have been readable was not: a bad row, a bad number
	SevWarning = "warning" // a line that was not understood and was left out, or a sign of truncation
	SevNote    = "note"    // how an ambiguous text was read
)

// NotUnderstood starts the message of every warning about a line that was
// not understood and left out.
const NotUnderstood = "not understood, left out: "

// Diag is a remark about one line of the text.
type Diag struct {
	Line     int    `json:"line"` // 0: the text as a whole
	Severity string `json:"severity"`
	Msg      string `json:"msg"`
}

func (d Diag) String() string {
	if d.Line == 0 {
		return d.Severity + ": " + d.Msg
	}
	return fmt.Sprintf("line %d: %s: %s", d.Line, d.Severity, d.Msg)
}

// Parsed is everything read from one text.
type Parsed struct {
	Lines     int               `json:"lines"`
	Commands  []Command         `json:"commands"`
	Tables    []*HistogramTable `json:"tables"`
	Headers   []DDTHeader       `json:"ddt_headers"`
	Objects   []DDTObject       `json:"ddt_objects"`
	Logs      []DDTLog          `json:"ddt_logs"`
	Summaries []DedupSummary    `json:"dedup_summaries"`
	// Lists are the zfs list and zpool list tables in the text (with a
	// header line), in order.
	Lists []*zfslist.Table `json:"lists,omitempty"`
	// Empty is set when zdb said "All DDTs are empty".
	Empty bool `json:"all_ddts_empty"`
	// Orphans are ratio lines that follow no table, such as the one zdb -D
	// prints after its DDT object lines.
	Orphans []RatioLine `json:"ratio_lines_without_table,omitempty"`
	Era     Era         `json:"era"`
	// Truncated is set when the text looks cut short.
	Truncated bool    `json:"truncated"`
	Checks    []Check `json:"checks"`
	Diags     []Diag  `json:"diagnostics"`
	// DiagsLeftOut counts the diagnostics about lines past the first
	// MaxDiags (or MaxDiagBytes): only their number is kept. Of them,
	// NotUnderstoodLeftOut are about lines not understood.
	DiagsLeftOut         int `json:"diagnostics_left_out,omitempty"`
	NotUnderstoodLeftOut int `json:"not_understood_left_out,omitempty"`
}

// Errors returns the number of error diagnostics.
func (p *Parsed) Errors() int {
	n := 0
	for _, d := range p.Diags {
		if d.Severity == SevError {
			n++
		}
	}
	return n
}

// Usable reports whether anything of the DDT was read: a table, a DDT
// object or header line, or a dedup summary.
func (p *Parsed) Usable() bool {
	return len(p.Tables) > 0 || len(p.Objects) > 0 || len(p.Headers) > 0 || len(p.Summaries) > 0 || p.Empty
}

// Primary returns the table that best stands for "the" histogram of the
// text: the first zdb -S table, else the last zdb -DD aggregated table,
// else the last zpool status table, else the last table with a Total row,
// else the only table. Nil when there is none.
func (p *Parsed) Primary() *HistogramTable {
	for _, t := range p.Tables {
		if t.Kind == KindSimulated {
			return t
		}
	}
	for _, kind := range []TableKind{KindAggregated, KindStatus} {
		for i := len(p.Tables) - 1; i >= 0; i-- {
			if p.Tables[i].Kind == kind {
				return p.Tables[i]
			}
		}
	}
	for i := len(p.Tables) - 1; i >= 0; i-- {
		if p.Tables[i].Total != nil {
			return p.Tables[i]
		}
	}
	if len(p.Tables) == 1 {
		return p.Tables[0]
	}
	return nil
}

var (
	// A command line, with an optional shell prompt of up to two words
	// ending in $ # % or >: "$ zdb -S tank", "[root@host centos]# zdb -DDD
	// tank", "user@host:~$ sudo zpool status -D tank".
	cmdRe    = regexp.MustCompile(`^(?:(?:[^\s$#%>]+(?:\s[^\s$#%>]+)?\s*)?[$#%>]\s*)?(?:sudo\s+(?:-\S+\s+)*)?((?:\S*/)?(?:zdb|zpool|zfs)\s+\S.*)$`)
	promptRe = regexp.MustCompile(`^(?:[^\s$#%>]+(?:\s[^\s$#%>]+)?\s*)?[$#%>]$`)
	// zdb -D lines.
	ddtHeaderRe = regexp.MustCompile(`^DDT-(\w+): version=(\d+)(?: \[(\w+)\])?; flags=0x([0-9a-fA-F]+)(?: \[([A-Z ]*)\])?; rootobj=(\d+)$`)
	objNewRe    = regexp.MustCompile(`^DDT-(\w+)-(\w+)-(\w+): dspace=(\w+); mspace=(\w+); entries=(\w+)$`)
	objOldRe    = regexp.MustCompile(`^DDT-(\w+)-(\w+)-(\w+): (\d+) entries, size (\S+) on disk, (\S+) in core$`)
	objNumRe    = regexp.MustCompile(`^DDT-(\w+)-(\w+)-(\w+): object=(\d+)$`)
	logRe       = regexp.MustCompile(`^DDT-log-(\w+)-(\d+): flags=0x([0-9a-fA-F]+)(?: \[([A-Z ]*)\])?; obj=(\w+); len=(\w+); txg=(\w+); entries=(\w+)$`)
	checkptRe   = regexp.MustCompile(`^checkpoint: [0-9a-fA-F:]+$`)
	// zpool status -D.
	dedupRe     = regexp.MustCompile(`^(?:dedup:\s*)?DDT entries (\d+), size (\S+) on disk, (\S+) in core(?:, (\S+) cached \(([0-9.]+)%\))?$`)
	noEntriesRe = regexp.MustCompile(`^dedup:\s*no DDT entries$`)
	// The ratio line, with any spacing.
	ratioRe = regexp.MustCompile(`^dedup\s*=\s*(\S+?)\s*,\s*compress\s*=\s*(\S+?)\s*,\s*copies\s*=\s*(\S+?)\s*,\s*dedup\s*\*\s*compress\s*/\s*copies\s*=\s*(\S+)$`)
	// Lines that start a ratio line (to join a wrapped one).
	ratioStartRe = regexp.MustCompile(`^dedup\s*=`)
)

// zpool status keys before the config (and "errors:" after it).
var statusKeys = map[string]bool{
	"pool:": true, "id:": true, "state:": true, "status:": true, "action:": true, "see:": true, "scan:": true,
	"scrub:": true, "remove:": true, "checkpoint:": true, "config:": true, "errors:": true,
}

// parser holds the state of one Parse.
type parser struct {
	p *Parsed
	// win holds the current line (win[0]) and up to window-1 lines after
	// it: Parse streams, the parser sees no more of the text than this.
	win          []winLine
	n            int // current line number (1-based)
	lastNonBlank int // number of the last line read that is not blank
	// Per-line diagnostics kept so far, and their bytes (see keepDiag).
	kept, keptBytes int
	cur             *HistogramTable
	list            *zfslist.Table // the zfs list or zpool list table being read
	hdr             int            // header lines of cur seen: 1 bucket, 2 underscores, 3 names, 4 dashes
	pending         TableKind      // kind of the next table, from a title line
	pendObj         string
	pendEstimate    bool            // ddtsim's ESTIMATE line came before the title
	last            *HistogramTable // the table a ratio line would belong to
	inStatus        bool            // inside zpool status's pool:/config: block
	lastLog         bool            // the previous line was a DDT log line
	tabEra          tableEra
	// objectsSinceTable: DDT object lines came after the last table (a
	// following ratio line is zdb -D's, not the table's).
	objectsSinceTable bool
	era               eraBuilder
	sums              []pendingSummary
}

// utf8BOM starts texts some editors save; Parse and ParseString skip it.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// Parse reads a text printed by zdb -S, zdb -D/-DD/-DDD or zpool status -D
// (any release, several concatenated, with prompts, comments, indentation
// and cut short). It fails when r fails, and with ErrBinary when the text
// is not text at all (NUL bytes, or mostly bytes no text holds, in its
// first 8 KiB); everything about the text itself is in the result (Diags,
// Checks). Lines may be of any length: one longer than MaxLineBytes is
// reported as not understood, by its number, and only its start is kept.
// Parse streams the text: it holds a few lines at a time, and what it
// understood (tables, DDT lines, commands, checks) and the first MaxDiags
// diagnostics about lines; its memory does not grow with the rest.
func Parse(r io.Reader) (*Parsed, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(binarySniff)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if isBinary(head) {
		return nil, ErrBinary
	}
	if bytes.HasPrefix(head, utf8BOM) {
		br.Discard(len(utf8BOM)) // a text saved by a Windows editor
	}
	st := newStream()
	var (
		line []byte // the current line, up to MaxLineBytes+1 bytes
		size int    // the current line's length so far
	)
	for {
		frag, err := br.ReadSlice('\n')
		size += len(frag)
		if room := MaxLineBytes + 1 - len(line); room > 0 {
			line = append(line, frag[:min(room, len(frag))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if size > 0 {
			n := size
			if len(frag) > 0 && frag[len(frag)-1] == '\n' {
				n--
				line = bytes.TrimSuffix(line, []byte("\n"))
			}
			cut := 0
			if n > MaxLineBytes {
				cut = n
				line = line[:min(len(line), MaxLineBytes)]
			}
			st.feed(string(line), cut)
		}
		line, size = line[:0], 0
		if err == io.EOF {
			break
		}
	}
	return st.end(), nil
}

// MaxLineBytes is the longest line Parse reads as a line of zdb or zpool
// output (theirs are at most a few hundred bytes); a longer one is not
// understood.
const MaxLineBytes = 64 << 10

// ErrBinary is Parse's error for input that is not text.
var ErrBinary = errors.New("binary data, not zdb or zpool output")

// binarySniff is how much of the input isBinary looks at.
const binarySniff = 8 << 10

// isBinary reports whether the start of an input is binary data rather
// than text: it holds a NUL byte, or more than 30% of it are bytes no text
// holds (control characters other than tab, line and page breaks,
// backspace and escape; bytes that are not UTF-8).
func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			if !utf8.FullRune(b[i:]) && len(b) == binarySniff {
				i = len(b) // a character cut by the end of the window
				continue
			}
			bad++
		case r < 0x20 && !strings.ContainsRune("\t\n\r\f\v\b\x1b", r), r == 0x7f:
			bad++
		}
		i += n
	}
	return bad*10 > len(b)*3
}

// ParseString is Parse on a string.
func ParseString(s string) *Parsed {
	s = strings.TrimPrefix(s, string(utf8BOM))
	s = strings.TrimSuffix(s, "\n")
	st := newStream()
	for s != "" {
		line, rest, found := strings.Cut(s, "\n")
		st.feed(line, 0)
		if !found {
			break
		}
		s = rest
		if s == "" {
			st.feed("", 0) // the text ended with an empty line
		}
	}
	return st.end()
}

// ParseLines is Parse on a text already split into lines.
func ParseLines(lines []string) *Parsed {
	st := newStream()
	for _, l := range lines {
		st.feed(l, 0)
	}
	return st.end()
}

// markers that a paste may put before every line: a Markdown quote, a list
// item, a comment, a table border.
var markers = []string{"> ", "- ", "# ", "| ", ">", "|"}

// stream parses a text line by line. A marker that starts every non-blank
// line (a line that is only the marker counts as blank), when there are at
// least two such lines, is removed from every line; whether one does is
// known only at the end, so a parser reads the lines with each marker
// removed for as long as every line has had it, besides the one that reads
// them as they are. Lines that lack a marker end its parser, so that on
// most texts only one parser is left after the first line.
type stream struct {
	plain *parser
	cands []*candidate // per marker, nil once a line lacks it
}

type candidate struct {
	m, bare string
	n       int // non-blank lines so far
	ps      *parser
}

func newStream() *stream {
	st := &stream{plain: newParser()}
	for _, m := range markers {
		c := &candidate{m: m, bare: strings.TrimSpace(m), ps: newParser()}
		c.ps.p.Diags = append(c.ps.p.Diags, Diag{0, SevNote, fmt.Sprintf("every line starts with %q (a quote or list marker): removed", m)})
		st.cands = append(st.cands, c)
	}
	return st
}

// feed reads the next line; cut is its length in bytes when Parse cut it
// to MaxLineBytes (a longer line is not understood), else 0.
func (st *stream) feed(l string, cut int) {
	st.plain.push(l, cut)
	t := strings.TrimRight(l, " \t\r")
	for i, c := range st.cands {
		switch {
		case c == nil:
		case t == c.bare:
			c.ps.push("", cut)
		case t == "":
			c.ps.push(strings.TrimPrefix(l, c.m), cut)
		case strings.HasPrefix(t, c.m):
			c.n++
			c.ps.push(strings.TrimPrefix(l, c.m), cut)
		default:
			st.cands[i] = nil
		}
	}
}

// end reads what is left and returns what was parsed: the text with a
// marker removed if it starts at least two lines and every non-blank one.
func (st *stream) end() *Parsed {
	for _, c := range st.cands {
		if c != nil && c.n >= 2 {
			return c.ps.end()
		}
	}
	return st.plain.end()
}

// winLine is a line in the parser's window.
type winLine struct {
	text string
	cut  int // its length in bytes when Parse cut it, else 0
}

// window is how many lines the parser holds: the current one and the three
// after it (a ratio line is joined with up to two following lines, and
// whether the text goes on after those tells a cut one).
const window = 4

func newParser() *parser {
	return &parser{p: &Parsed{}, win: make([]winLine, 0, window)}
}

// push reads the next line: it parses the line window-1 lines before it.
func (ps *parser) push(text string, cut int) {
	ps.p.Lines++
	if strings.TrimSpace(text) != "" {
		ps.lastNonBlank = ps.p.Lines
	}
	ps.win = append(ps.win, winLine{text, cut})
	if len(ps.win) >= window {
		ps.step()
	}
}

// step parses the line win[0] and drops it from the window, with the lines
// after it that it consumed.
func (ps *parser) step() {
	ps.n++
	l := ps.win[0]
	n := l.cut
	if n == 0 {
		n = len(l.text)
	}
	used := 0
	if n > MaxLineBytes {
		ps.endTable()
		ps.diag(SevWarning, NotUnderstood+"a line of %d bytes, longer than any zdb or zpool line (at most %d bytes are read as one)", n, MaxLineBytes)
	} else {
		used = ps.line(strings.TrimRight(l.text, "\r"))
	}
	k := copy(ps.win, ps.win[1+used:])
	clear(ps.win[k:])
	ps.win = ps.win[:k]
	ps.n += used
}

// end parses the lines left in the window and finishes.
func (ps *parser) end() *Parsed {
	for len(ps.win) > 0 {
		ps.step()
	}
	ps.endTable()
	ps.endList()
	ps.finish()
	return ps.p
}

func (ps *parser) diag(sev, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if !ps.keepDiag(msg) {
		return
	}
	ps.p.Diags = append(ps.p.Diags, Diag{Line: ps.n, Severity: sev, Msg: msg})
}

// Parse keeps at most MaxDiags diagnostics about single lines, of at most
// MaxDiagBytes in all (a message quotes its line), and counts the others
// (Parsed.DiagsLeftOut): what a text of any size takes stays bounded by
// what was understood in it.
const (
	MaxDiags     = 1000
	MaxDiagBytes = 1 << 20
)

// keepDiag reports whether a diagnostic about a line is kept, and counts
// it either way.
func (ps *parser) keepDiag(msg string) bool {
	if ps.kept >= MaxDiags || ps.keptBytes+len(msg) > MaxDiagBytes || ps.p.DiagsLeftOut > 0 {
		ps.p.DiagsLeftOut++
		if strings.HasPrefix(msg, NotUnderstood) {
			ps.p.NotUnderstoodLeftOut++
		}
		return false
	}
	ps.kept++
	ps.keptBytes += len(msg)
	return true
}

// tableEra collects what the number formats of one table say about the
// release; it is turned into evidence when the table ends, because raw
// integers (zdb -P) make small plain byte values no sign of 0.6.x.
type tableEra struct {
	rawLine, plainLine, suffixLine int
	raw, plain, suffix             string
}

func (ps *parser) endTable() {
	if ps.cur == nil {
		return
	}
	t := ps.cur
	ps.cur, ps.hdr = nil, 0
	te := ps.tabEra
	ps.tabEra = tableEra{}
	switch {
	case te.raw != "":
		ps.era.add(te.rawLine, "master", "master", fmt.Sprintf("raw integer %q in the table (zdb -P / zpool status -p, after 2.4.4)", te.raw))
	case te.plain != "":
		ps.era.add(te.plainLine, "", "0.6", fmt.Sprintf("byte value %q without the B suffix (before 0.7.0)", te.plain))
	}
	if te.suffix != "" {
		ps.era.add(te.suffixLine, "0.7", "", fmt.Sprintf("byte value %q with the B suffix (zfs_nicebytes, 0.7.0+)", te.suffix))
	}
	if !t.Header && len(t.Rows) == 0 && t.Total == nil && t.Errors == 0 {
		// A partial header only.
		ps.p.Diags = append(ps.p.Diags, Diag{t.EndLine, SevWarning, "incomplete table header, no rows (cut short?)"})
		ps.p.Truncated = true
		return
	}
	ps.p.Tables = append(ps.p.Tables, t)
	ps.last = t
	ps.objectsSinceTable = false
}

// startTable begins a new table at the current line, of the pending kind.
func (ps *parser) startTable() *HistogramTable {
	ps.endTable()
	t := &HistogramTable{Kind: ps.pending, Object: ps.pendObj, Line: ps.n, EndLine: ps.n, Rows: []Row{}, Estimate: ps.pendEstimate}
	if t.Kind == "" {
		t.Kind = KindUnknown
	}
	ps.pending, ps.pendObj, ps.pendEstimate = "", "", false
	ps.cur = t
	return t
}

// line handles one line and returns how many following lines it consumed.
func (ps *parser) line(raw string) int {
	t := strings.TrimSpace(raw)
	fields := strings.Fields(t)
	norm := strings.Join(fields, " ")
	wasLog := ps.lastLog
	ps.lastLog = false
	if ps.list != nil {
		if ps.listRow(raw, fields) {
			return 0
		}
		ps.endList()
	}

	if len(fields) == 0 {
		if ps.cur != nil && ps.hdr >= 4 || ps.cur != nil && len(ps.cur.Rows) > 0 {
			ps.endTable()
		}
		return 0
	}
	if m := cmdRe.FindStringSubmatch(norm); m != nil && !strings.HasPrefix(norm, "dedup") {
		ps.endTable()
		ps.inStatus = false
		ps.pending, ps.pendObj = "", ""
		ps.p.Commands = append(ps.p.Commands, Command{ps.n, m[1]})
		return 0
	}
	if promptRe.MatchString(norm) {
		ps.endTable()
		return 0 // a shell prompt without a command
	}
	if t[0] == '#' {
		return 0 // a comment
	}
	if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
		ps.endTable()
		return 0 // a Markdown code fence around a paste
	}

	if ps.listHeader(fields) {
		return 0
	}

	// Table header lines.
	switch {
	case norm == "bucket allocated referenced":
		ps.inStatus = false
		ps.startTable()
		ps.hdr = 1
		return 0
	case isRule(fields, '_', 3):
		ps.headerLine(2)
		return 0
	case norm == "refcnt blocks LSIZE PSIZE DSIZE blocks LSIZE PSIZE DSIZE":
		ps.headerLine(3)
		return 0
	case isRule(fields, '-', 9):
		ps.headerLine(4)
		return 0
	}
	inRows := ps.cur != nil && ps.hdr >= 4 && ps.cur.Total == nil
	if isRowLabel(fields[0]) && (inRows || len(fields) > 1 && isNumberLike(fields[1])) {
		ps.row(fields)
		return 0
	}

	// Anything else ends a table.
	ps.endTable()

	switch {
	case strings.HasPrefix(norm, "ESTIMATE from a ") && strings.HasSuffix(norm, "not what zdb -S would print"):
		// ddtsim --read's head line: the table that follows is an
		// estimate, not zdb's (found by a new user: it was parsed, and
		// could be compared, as a real one).
		ps.pendEstimate = true
		return 0
	case norm == "Simulated DDT histogram:":
		ps.inStatus = false
		ps.pending, ps.pendObj = KindSimulated, ""
		return 0
	case norm == "DDT histogram (aggregated over all DDTs):":
		ps.pending, ps.pendObj = KindAggregated, ""
		return 0
	case norm == "All DDTs are empty":
		ps.p.Empty = true
		return 0
	case ratioStartRe.MatchString(norm):
		return ps.ratio(norm)
	}
	if m := ddtHeaderRe.FindStringSubmatch(norm); m != nil {
		ps.ddtHeader(m)
		return 0
	}
	if m := objNewRe.FindStringSubmatch(norm); m != nil {
		ps.objectNew(m)
		return 0
	}
	if m := objOldRe.FindStringSubmatch(norm); m != nil {
		ps.objectOld(m)
		return 0
	}
	if m := objNumRe.FindStringSubmatch(norm); m != nil {
		ps.era.add(ps.n, "2.4", "", "the DDT object= line (zdb -DDD, 2.4.0+)")
		ps.pending, ps.pendObj = KindObject, "DDT-"+m[1]+"-"+m[2]+"-"+m[3]
		return 0
	}
	if m := logRe.FindStringSubmatch(norm); m != nil {
		ps.log(m)
		ps.lastLog = true
		return 0
	}
	if wasLog && checkptRe.MatchString(norm) {
		return 0
	}
	if m := dedupRe.FindStringSubmatch(norm); m != nil {
		ps.inStatus = false
		ps.summary(m)
		return 0
	}
	if noEntriesRe.MatchString(norm) {
		ps.inStatus = false
		ps.p.Summaries = append(ps.p.Summaries, DedupSummary{Line: ps.n, NoEntries: true})
		return 0
	}
	if statusKeys[fields[0]] || norm == "NAME STATE READ WRITE CKSUM" {
		ps.inStatus = true
		return 0
	}
	if ps.inStatus {
		return 0 // zpool status text: vdev tree, status/action paragraphs
	}
	ps.diag(SevWarning, NotUnderstood+"%q", clip(t))
	return 0
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// isRule reports whether fields are at least min runs of c (a header rule).
func isRule(fields []string, c byte, min int) bool {
	if len(fields) < min {
		return false
	}
	for _, f := range fields {
		if strings.Trim(f, string(c)) != "" {
			return false
		}
	}
	return true
}

func isRowLabel(f string) bool {
	return f == "Total" || f[0] >= '0' && f[0] <= '9'
}

func isNumberLike(f string) bool { return f[0] >= '0' && f[0] <= '9' }

// headerLine handles header line k (2: underscores, 3: names, 4: dashes).
func (ps *parser) headerLine(k int) {
	ps.inStatus = false
	if ps.cur == nil || ps.hdr >= k || len(ps.cur.Rows) > 0 || ps.cur.Total != nil {
		ps.startTable()
	}
	if ps.hdr != k-1 {
		ps.diag(SevWarning, "table header line out of place (header lines missing before it)")
	}
	ps.hdr = k
	ps.cur.EndLine = ps.n
	if k == 4 {
		ps.cur.Header = true
	}
}

// row reads one histogram row.
func (ps *parser) row(fields []string) {
	if ps.cur == nil || ps.cur.Total != nil {
		ps.startTable()
		ps.diag(SevWarning, "histogram row without a table header: read as the start of a new table")
		ps.hdr = 4
	} else if ps.hdr < 4 {
		ps.diag(SevWarning, "histogram row before the end of the table header")
		ps.hdr = 4
	}
	t := ps.cur
	t.EndLine = ps.n
	if len(fields) != 9 {
		t.Errors++
		why := "cut short?"
		if len(fields) > 9 {
			why = "extra text?"
		}
		ps.diag(SevError, "histogram row has %d fields, want 9 (%s): %q", len(fields), why, strings.Join(fields, " "))
		if len(fields) < 9 && len(ps.win) == 1 { // the last line
			ps.p.Truncated = true
		}
		return
	}
	r := Row{Line: ps.n, Label: fields[0], Bucket: -1}
	if fields[0] != "Total" {
		h, raw, ok := bucketOf(fields[0])
		if !ok {
			t.Errors++
			ps.diag(SevError, "bucket label %q is not a power of two as zdb prints it", fields[0])
			return
		}
		r.Bucket = h
		if raw && ps.tabEra.raw == "" {
			ps.tabEra.raw, ps.tabEra.rawLine = fields[0], ps.n
		}
	}
	cells := r.Cells()
	for i, f := range fields[1:] {
		v, err := nicenum.Parse(f)
		if err != nil {
			t.Errors++
			ps.diag(SevError, "column %d: %v", i+2, err)
			return
		}
		*cells[i] = v
		ps.eraOfCell(f, v, i%4 != 0)
	}
	if r.Bucket < 0 {
		if t.Total != nil {
			t.Errors++
			ps.diag(SevError, "second Total row")
			return
		}
		t.Total = &r
		return
	}
	if n := len(t.Rows); n > 0 && t.Rows[n-1].Bucket >= r.Bucket {
		t.Errors++
		ps.diag(SevError, "bucket %s after bucket %s: zdb prints buckets once each, in ascending order", r.Label, t.Rows[n-1].Label)
		return
	}
	t.Rows = append(t.Rows, r)
}

// bucketOf reads a refcnt label: the bucket h whose 2^h prints as the
// label, and whether it was printed raw (zdb -P: "1024" for "1K").
func bucketOf(label string) (h int, raw, ok bool) {
	v, err := nicenum.Parse(label)
	if err != nil {
		return 0, false, false
	}
	for h := 0; h < 64; h++ {
		x := uint64(1) << h
		if !v.Contains(x) {
			continue
		}
		if nicenum.Format(x, false) == label {
			return h, false, true
		}
		if v.Exact() {
			return h, true, true
		}
	}
	return 0, false, false
}

// eraOfCell notes what a cell's format says about the release.
func (ps *parser) eraOfCell(tok string, v nicenum.Value, byteCol bool) {
	te := &ps.tabEra
	last := tok[len(tok)-1]
	switch {
	case last == 'B':
		if !byteCol {
			ps.diag(SevWarning, "%q has the byte suffix in a blocks column", tok)
			return
		}
		if te.suffix == "" {
			te.suffix, te.suffixLine = tok, ps.n
		}
	case last >= '0' && last <= '9' && v.Lo >= 1024:
		if te.raw == "" {
			te.raw, te.rawLine = tok, ps.n
		}
	case last >= '0' && last <= '9' && byteCol && v.Lo > 0:
		if te.plain == "" {
			te.plain, te.plainLine = tok, ps.n
		}
	}
}

// ratio reads a ratio line, joining up to two following lines when it was
// wrapped.
func (ps *parser) ratio(norm string) int {
	text := norm
	used := 0
	m := ratioRe.FindStringSubmatch(text)
	for m == nil && used < 2 && used+1 < len(ps.win) {
		next := strings.Join(strings.Fields(ps.win[used+1].text), " ")
		if next == "" {
			break
		}
		used++
		text += " " + next
		m = ratioRe.FindStringSubmatch(text)
	}
	if m == nil {
		if used+1 >= len(ps.win) { // the text ends here
			ps.p.Truncated = true
		}
		ps.diag(SevError, "ratio line not readable (cut short?): %q", clip(norm))
		return 0
	}
	if used > 0 {
		ps.diag(SevNote, "ratio line wrapped over %d lines, joined", used+1)
	}
	rl := RatioLine{Line: ps.n}
	for i, dst := range []*nicenum.Ratio{&rl.Dedup, &rl.Compress, &rl.Copies, &rl.Combined} {
		r, err := nicenum.ParseRatio(m[i+1])
		if err != nil {
			ps.diag(SevError, "ratio line: %v", err)
			return used
		}
		*dst = r
	}
	switch {
	case ps.last != nil && ps.last.Ratios == nil && !ps.objectsSinceTable:
		ps.last.Ratios = &rl
	case ps.objectsSinceTable:
		// zdb -D prints the ratio line after the DDT object lines, with no
		// table.
		ps.p.Orphans = append(ps.p.Orphans, rl)
	default:
		ps.p.Orphans = append(ps.p.Orphans, rl)
		ps.diag(SevWarning, "ratio line after no table (or after a table that has one already)")
	}
	return used
}

func parseUint(s string) (uint64, bool) {
	base := 10
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		s, base = h, 16
	}
	v, err := strconv.ParseUint(s, base, 64)
	return v, err == nil
}

func (ps *parser) ddtHeader(m []string) {
	h := DDTHeader{Line: ps.n, Checksum: m[1], Kind: m[3]}
	var ok1, ok2, ok3 bool
	h.Version, ok1 = parseUint(m[2])
	h.Flags, ok2 = parseUint("0x" + m[4])
	h.RootObj, ok3 = parseUint(m[6])
	if !ok1 || !ok2 || !ok3 {
		ps.diag(SevError, "DDT header line: number out of range")
		return
	}
	h.FlagText = strings.Fields(m[5])
	ps.p.Headers = append(ps.p.Headers, h)
	ps.era.add(ps.n, "2.3", "", "the DDT-<checksum>: version=… line (2.3.0+)")
}

func (ps *parser) objectNew(m []string) {
	o := DDTObject{Line: ps.n, Name: "DDT-" + m[1] + "-" + m[2] + "-" + m[3], Checksum: m[1], Class: m[3]}
	ds, ok1 := parseUint(m[4])
	ms, ok2 := parseUint(m[5])
	n, ok3 := parseUint(m[6])
	if !ok1 || !ok2 || !ok3 {
		ps.diag(SevError, "DDT object line: a number is not readable")
		return
	}
	o.Entries = n
	basis := "dspace=/mspace= are object totals (2.3.0+)"
	o.OnDisk = totalSize(nicenum.ExactValue(ds), n, true, basis)
	o.InCore = totalSize(nicenum.ExactValue(ms), n, true, basis)
	if strings.HasPrefix(m[4], "0x") || strings.HasPrefix(m[5], "0x") {
		ps.diag(SevNote, "hexadecimal sizes (a 2.3 development build printed them so)")
	}
	ps.p.Objects = append(ps.p.Objects, o)
	ps.objectsSinceTable = true
	ps.era.add(ps.n, "2.3", "", "dspace=…; mspace=…; entries=… (2.3.0+)")
	ps.pending, ps.pendObj = KindObject, o.Name
}

func (ps *parser) objectOld(m []string) {
	o := DDTObject{Line: ps.n, Name: "DDT-" + m[1] + "-" + m[2] + "-" + m[3], Checksum: m[1], Class: m[3]}
	n, ok := parseUint(m[4])
	if !ok {
		ps.diag(SevError, "DDT object line: entry count out of range")
		return
	}
	o.Entries = n
	ds, err1 := nicenum.Parse(m[5])
	ms, err2 := nicenum.Parse(m[6])
	if err1 != nil || err2 != nil {
		ps.diag(SevError, "DDT object line: sizes not readable: %v", firstErr(err1, err2))
		return
	}
	sure, basis := true, "zdb -D ≤2.2.x prints integer averages per entry"
	if !ds.Exact() || !ms.Exact() {
		ps.diag(SevWarning, "DDT object line with nicenum sizes (zdb prints plain integers here)")
	}
	if ds.Lo%512 == 0 && n > 1 {
		sure = false
		basis += "; the on-disk figure is a multiple of 512, as a total would be (2.3.0-rc1..rc3 printed totals in these words)"
	}
	o.OnDisk = perEntrySize(ds, n, sure, basis)
	o.InCore = perEntrySize(ms, n, sure, basis)
	ps.p.Objects = append(ps.p.Objects, o)
	ps.objectsSinceTable = true
	ps.era.add(ps.n, "", "2.2", "\"N entries, size X on disk, Y in core\" per DDT object (≤2.2.x)")
	ps.pending, ps.pendObj = KindObject, o.Name
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func (ps *parser) log(m []string) {
	l := DDTLog{Line: ps.n, Checksum: m[1]}
	l.N, _ = strconv.Atoi(m[2])
	var ok [5]bool
	l.Flags, ok[0] = parseUint("0x" + m[3])
	l.FlagText = strings.Fields(m[4])
	l.Obj, ok[1] = parseUint(m[5])
	l.Len, ok[2] = parseUint(m[6])
	l.Txg, ok[3] = parseUint(m[7])
	l.Entries, ok[4] = parseUint(m[8])
	for _, o := range ok {
		if !o {
			ps.diag(SevError, "DDT log line: a number is not readable")
			return
		}
	}
	ps.p.Logs = append(ps.p.Logs, l)
	ps.era.add(ps.n, "2.3", "", "a DDT log line (fast dedup, 2.3.0+)")
}

// pendingSummary is a dedup: line whose meaning (per entry or total) is
// decided once the whole text has been read, when its release is not plain
// from the line itself.
type pendingSummary struct {
	idx   int             // index in Parsed.Summaries
	vals  []nicenum.Value // on disk, in core
	plain bool            // both plain integers (else both with K, M, ... suffixes)
}

// summary reads zpool status's dedup: line and decides whether its sizes
// are per entry (≤2.2.x) or totals (2.3.0+).
func (ps *parser) summary(m []string) {
	s := DedupSummary{Line: ps.n}
	n, ok := parseUint(m[1])
	if !ok {
		ps.diag(SevError, "dedup: entry count out of range")
		return
	}
	s.Entries = n
	vals := make([]nicenum.Value, 0, 3)
	toks := []string{m[2], m[3]}
	if m[4] != "" {
		toks = append(toks, m[4])
	}
	for _, tok := range toks {
		v, err := nicenum.Parse(tok)
		if err != nil {
			ps.diag(SevError, "dedup: %v", err)
			return
		}
		vals = append(vals, v)
	}
	kind := func(tok string) byte { // 'B', 'K' (any of KMGTPE), or '0' (plain)
		switch c := tok[len(tok)-1]; {
		case c == 'B':
			return 'B'
		case c >= '0' && c <= '9':
			return '0'
		}
		return 'K'
	}
	k0, k1 := kind(m[2]), kind(m[3])
	ps.pending, ps.pendObj = KindStatus, ""
	switch {
	case m[4] != "":
		basis := "the \"cached\" figure is printed only with totals (2.3.0+)"
		ps.era.add(ps.n, "2.3", "", "dedup: … cached (…%) (2.3.0+, or its development branch)")
		s.OnDisk = totalSize(vals[0], n, true, basis)
		s.InCore = totalSize(vals[1], n, true, basis)
		c := totalSize(vals[2], n, true, basis)
		s.Cached = &c
		pct, err := nicenum.ParseRatio(m[5])
		if err != nil {
			ps.diag(SevError, "dedup: cached percentage: %v", err)
		} else {
			s.CachedPct = &pct
		}
	case k0 == 'B' || k1 == 'B':
		basis := "byte suffix B: zfs_nicebytes of per-entry averages (0.7.0 to 2.2.x)"
		ps.era.add(ps.n, "0.7", "2.2", "dedup: sizes with the B suffix (0.7.0 to 2.2.x)")
		s.OnDisk = perEntrySize(vals[0], n, true, basis)
		s.InCore = perEntrySize(vals[1], n, true, basis)
	case k0 != k1:
		basis := "a size below 1K without B next to one with a suffix: zfs_nicenum of totals (2.3.0+)"
		ps.era.add(ps.n, "2.3", "", "dedup: sizes in zfs_nicenum without B (2.3.0+)")
		s.OnDisk = totalSize(vals[0], n, true, basis)
		s.InCore = totalSize(vals[1], n, true, basis)
	case k0 == '0' && vals[0].Lo%512 != 0:
		basis := "plain integers: raw per-entry averages (0.6.x); an on-disk total would be a multiple of 512"
		ps.era.add(ps.n, "", "0.6", "dedup: raw per-entry sizes (0.6.x)")
		s.OnDisk = perEntrySize(vals[0], n, true, basis)
		s.InCore = perEntrySize(vals[1], n, true, basis)
	default:
		ps.sums = append(ps.sums, pendingSummary{len(ps.p.Summaries), vals[:2], k0 == '0'})
	}
	ps.p.Summaries = append(ps.p.Summaries, s)
}

// resolveSummaries decides the meaning of the dedup: lines the format
// alone does not settle, from the rest of the text.
func (ps *parser) resolveSummaries() {
	from, to := ps.era.current()
	old := to != "" && famIndex(to) <= famIndex("2.2")
	recent := from != "" && famIndex(from) >= famIndex("2.3")
	for _, q := range ps.sums {
		s := &ps.p.Summaries[q.idx]
		n := s.Entries
		var meaning, basis string
		sure := true
		switch {
		case q.plain && recent:
			meaning, basis = Total, "plain integers in a text from 2.3.0+: zpool status -p prints raw totals"
		case q.plain && old:
			meaning, basis = PerEntry, "plain integers in a text from before 2.3.0: raw per-entry averages"
		case q.plain && plausibleTotal(q.vals[1], n):
			sure = false
			meaning, basis = Total, fmt.Sprintf("plain integers, the on-disk one a multiple of 512 as totals are, and nothing else in the text dates them; read as raw totals (zpool status -p, 2.3.0+), which gives a plausible %d bytes per entry in core; 0.6.x printed raw per-entry averages in this form", q.vals[1].Hi/max(n, 1))
		case q.plain:
			sure = false
			meaning, basis = PerEntry, "plain integers, read as raw per-entry averages (0.6.x): as totals (zpool status -p, 2.3.0+) they would give an implausible size per entry"
		case old:
			meaning, basis = PerEntry, "both sizes 1K or more in a text from before 2.3.0, which prints per-entry averages"
		case recent:
			meaning, basis = Total, "both sizes 1K or more in a text from 2.3.0+, which prints totals"
		default:
			sure = false
			if plausibleTotal(q.vals[1], n) {
				meaning, basis = Total, fmt.Sprintf("both sizes 1K or more and nothing else in the text dates them; read as totals (2.3.0+), which gives a plausible %d bytes per entry in core (as per-entry averages of 0.7.0 to 2.2.x they would be implausibly large)", q.vals[1].Hi/max(n, 1))
			} else {
				meaning, basis = PerEntry, "both sizes 1K or more and nothing else in the text dates it; read as per-entry averages (0.7.0 to 2.2.x): as totals they would give an implausible size per entry"
			}
		}
		if meaning == Total {
			s.OnDisk = totalSize(q.vals[0], n, sure, basis)
			s.InCore = totalSize(q.vals[1], n, sure, basis)
		} else {
			s.OnDisk = perEntrySize(q.vals[0], n, sure, basis)
			s.InCore = perEntrySize(q.vals[1], n, sure, basis)
		}
		if !sure {
			ps.p.Diags = append(ps.p.Diags, Diag{s.Line, SevNote, "dedup: sizes read as " + meaning + ": " + basis})
		}
	}
}

// plausibleTotal reports whether an in-core size read as the total over n
// entries gives a believable size per entry: 64 bytes to 64 KiB (a DDT
// entry takes 96 to a few hundred bytes in core, §2.6).
func plausibleTotal(inCore nicenum.Value, n uint64) bool {
	per := inCore.Hi / max(n, 1)
	return n > 0 && per >= 64 && per <= 64<<10
}

// totalSize builds a DDTSize from a printed total over n entries.
func totalSize(v nicenum.Value, n uint64, sure bool, basis string) DDTSize {
	d := DDTSize{Printed: v, Meaning: Total, Sure: sure, Basis: basis, Total: v.Interval()}
	if n > 0 {
		d.PerEntry = nicenum.Interval{Lo: v.Lo / n, Hi: v.Hi / n}
	}
	return d
}

// perEntrySize builds a DDTSize from a printed per-entry average (total /
// n, integer division) over n entries.
func perEntrySize(v nicenum.Value, n uint64, sure bool, basis string) DDTSize {
	d := DDTSize{Printed: v, Meaning: PerEntry, Sure: sure, Basis: basis, PerEntry: v.Interval()}
	if n > 0 {
		d.Total = nicenum.Interval{Lo: nicenum.SatMul(v.Lo, n), Hi: nicenum.SatAdd(nicenum.SatMul(v.Hi, n), n-1)}
	}
	return d
}

// finish runs after the last line: truncation, era, checks.
func (ps *parser) finish() {
	p := ps.p
	if n := len(p.Tables); n > 0 {
		t := p.Tables[n-1]
		if t.Total == nil && t.Kind != KindObject && len(t.Rows) > 0 && t.EndLine == ps.lastNonBlank {
			p.Truncated = true
			p.Diags = append(p.Diags, Diag{t.EndLine, SevWarning, "the text ends inside a table, before its Total row (cut short?)"})
		}
		if len(t.Rows) == 0 && t.Total == nil && t.Errors == 0 && t.EndLine == p.Lines {
			p.Truncated = true
			p.Diags = append(p.Diags, Diag{t.EndLine, SevWarning, "the text ends right after a table header, without the empty line zdb prints after an empty table (cut short?)"})
		}
		if t.Kind == KindSimulated && t.Total != nil && t.Ratios == nil && t.EndLine == ps.lastNonBlank {
			p.Truncated = true
			p.Diags = append(p.Diags, Diag{t.EndLine, SevWarning, "zdb -S output ends before its ratio line (cut short?)"})
		}
	}
	for _, t := range p.Tables {
		if t.Total == nil && len(t.Rows) > 0 && t.Kind != KindObject && !(t.EndLine == ps.lastNonBlank) {
			p.Diags = append(p.Diags, Diag{t.EndLine, SevWarning, "table without a Total row"})
		}
	}
	if ps.pending != "" && ps.pending != KindObject && ps.pending != KindStatus {
		p.Truncated = true
		p.Diags = append(p.Diags, Diag{0, SevWarning, "the text ends after a title, before its table (cut short?)"})
	}
	ps.resolveSummaries()
	p.Era = ps.era.build(&p.Diags)
	p.Checks = runChecks(p)
}

// Release families, oldest first, that the formats tell apart.
var families = []string{"0.6", "0.7", "0.8", "2.0", "2.1", "2.2", "2.3", "2.4", "master"}

func famIndex(f string) int {
	for i, x := range families {
		if x == f {
			return i
		}
	}
	return -1
}

// Era is the range of OpenZFS releases whose output looks like the text.
type Era struct {
	From     string     `json:"from"` // oldest release family ("0.6", "0.7", … "2.4", "master")
	To       string     `json:"to"`   // newest
	Text     string     `json:"text"`
	Evidence []Evidence `json:"evidence"`
	Conflict bool       `json:"conflict"` // the evidence contradicts itself
}

// Evidence is one line that narrows the era.
type Evidence struct {
	Line int    `json:"line"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Says string `json:"says"`
}

// Excludes reports whether the release families from to to ("2.3",
// "2.4": those of Era.From and Era.To) lie wholly outside the era; false
// when either is not such a family.
func (e Era) Excludes(from, to string) bool {
	a, b := famIndex(from), famIndex(to)
	return a >= 0 && b >= 0 && (b < famIndex(e.From) || a > famIndex(e.To))
}

type eraBuilder struct {
	ev   []Evidence
	seen map[string]bool
}

func (e *eraBuilder) add(line int, from, to, says string) {
	key := from + "|" + to
	if e.seen == nil {
		e.seen = map[string]bool{}
	}
	if e.seen[key] {
		return // one line of evidence per kind is enough
	}
	e.seen[key] = true
	e.ev = append(e.ev, Evidence{line, from, to, says})
}

// bounds returns the indexes in families of the oldest and newest family
// the evidence allows (lo > hi: it conflicts).
func (e *eraBuilder) bounds() (lo, hi int) {
	lo, hi = 0, len(families)-1
	for _, v := range e.ev {
		if v.From != "" {
			lo = max(lo, famIndex(v.From))
		}
		if v.To != "" {
			hi = min(hi, famIndex(v.To))
		}
	}
	return lo, hi
}

// current returns the range so far ("" = open).
func (e *eraBuilder) current() (from, to string) {
	lo, hi := e.bounds()
	if lo > hi {
		return "", ""
	}
	if lo > 0 {
		from = families[lo]
	}
	if hi < len(families)-1 {
		to = families[hi]
	}
	return from, to
}

func (e *eraBuilder) build(diags *[]Diag) Era {
	lo, hi := e.bounds()
	era := Era{Evidence: e.ev}
	if era.Evidence == nil {
		era.Evidence = []Evidence{}
	}
	if lo > hi {
		era.Conflict = true
		era.From, era.To = families[0], families[len(families)-1]
		era.Text = "unknown: the formats in the text belong to different releases"
		*diags = append(*diags, Diag{0, SevWarning, "the text mixes formats of different releases (see era evidence)"})
		return era
	}
	era.From, era.To = families[lo], families[hi]
	name := func(f string, first bool) string {
		switch {
		case f == "master":
			return "unreleased master (after 2.4.4)"
		case f == "0.6" && first:
			return "0.6.0"
		case f == "0.6":
			return "0.6.x (or a port of that time: illumos, FreeBSD, macOS)"
		case first:
			return f + ".0"
		}
		return f + ".x"
	}
	switch {
	case len(e.ev) == 0:
		era.Text = "any release (nothing in the text tells them apart)"
	case lo == hi && era.From == "master":
		era.Text = name(era.From, true)
	case lo == hi:
		era.Text = "OpenZFS " + era.From + ".x"
		if era.From == "0.6" {
			era.Text = "OpenZFS " + name(era.To, false)
		}
	case lo == 0:
		era.Text = "OpenZFS " + name(era.To, false) + " or earlier"
	case hi == len(families)-1:
		era.Text = "OpenZFS " + name(era.From, true) + " or later"
	default:
		era.Text = "OpenZFS " + name(era.From, true) + " to " + name(era.To, false)
	}
	return era
}
