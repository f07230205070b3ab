package saved

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/zeebo/blake3"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// Partitions is the number of key-range partitions of a saved scan's
// table: partition p holds the keys whose first byte, shifted right by 4,
// is p (Partition), each in its own Parquet file (PartName).
const Partitions = 16

// Row is one DDT entry of one scan as a Parquet row: the columns of every
// part-PP.parquet file, in this order.
type Row struct {
	// Key is the 128-bit DDT key: the first 16 bytes of the BLAKE3-256
	// digest of the block's logical content (ddt.Key; the table keeps no
	// more of it). FIXED_LEN_BYTE_ARRAY(16); bytewise order is key order.
	Key [16]byte `parquet:"key"`
	// Refcnt is the number of references of the block in this scan, ≥ 1.
	Refcnt int64 `parquet:"refcnt"`
	// LSize is the logical size of one reference, bytes.
	LSize int64 `parquet:"lsize"`
	// PSize is the physical (compressed) size of one reference, bytes;
	// 0 for a block stored in its block pointer (embedded), which zdb's
	// histogram leaves out.
	PSize int64 `parquet:"psize"`
	// DSize is the allocated size of one reference over all its copies,
	// bytes (zio.Policy.DSize of PSize: sectors, raidz parity and
	// padding, copies); 0 when PSize is 0.
	DSize int64 `parquet:"dsize"`
}

// rowColumns are the column names of Row, in order.
var rowColumns = []string{"key", "refcnt", "lsize", "psize", "dsize"}

// Partition returns the partition of key k (0 … Partitions−1).
func Partition(k *[16]byte) int { return int(k[0] >> 4) }

// PartName is the file name of partition p in a saved scan's directory.
func PartName(p int) string { return fmt.Sprintf("part-%02d.parquet", p) }

// Part describes one partition file in the manifest.
type Part struct {
	File   string `json:"file"`   // name in the scan's directory (PartName)
	Rows   int64  `json:"rows"`   // entries
	Bytes  int64  `json:"bytes"`  // file size
	Blake3 string `json:"blake3"` // BLAKE3-256 of the file, hex
}

// Parquet layout: row groups of rowGroupRows rows, pages of pageBytes,
// zstd. Readers then hold a page per column, not a whole file.
const (
	rowGroupRows = 128 << 10
	pageBytes    = 64 << 10
	rowBatch     = 1024 // rows read or written per call
)

// rowOf converts a table entry.
func rowOf(k *ddt.Key, e *ddt.Entry) Row {
	var r Row
	copy(r.Key[:], k[:16])
	r.Refcnt = int64(e.Refcnt)
	r.LSize = int64(e.LSize)
	r.PSize = int64(e.PSize)
	r.DSize = int64(e.DSize)
	return r
}

// keyOf is the ddt.Key of a row (its last 16 bytes zero, as the table
// gives them).
func (r *Row) keyOf() ddt.Key {
	var k ddt.Key
	copy(k[:], r.Key[:])
	return k
}

// partWriter writes one partition file, hashing what it writes.
type partWriter struct {
	f    *os.File
	h    *blake3.Hasher
	cw   countWriter
	w    *parquet.GenericWriter[Row]
	rows int64
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// newPartWriter creates the partition file path, once fault
// (Writer.CreateFault; nil outside tests) let it.
func newPartWriter(path string, fault func(name string) error) (*partWriter, error) {
	if fault != nil {
		if err := fault(path); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	pw := &partWriter{f: f, h: blake3.New()}
	pw.cw.w = io.MultiWriter(f, pw.h)
	pw.w = parquet.NewGenericWriter[Row](&pw.cw,
		parquet.MaxRowsPerRowGroup(rowGroupRows),
		parquet.PageBufferSize(pageBytes),
		parquet.Compression(&snappy.Codec{}),
		parquet.CreatedBy("ddtsim", "", ""),
	)
	return pw, nil
}

func (pw *partWriter) write(rows []Row) error {
	for len(rows) > 0 {
		n, err := pw.w.Write(rows[:min(len(rows), rowBatch)])
		pw.rows += int64(n)
		if err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// close finishes the file and closes it (not synced: syncFiles), and
// describes it.
func (pw *partWriter) close() (Part, error) {
	err := pw.w.Close()
	if cerr := pw.f.Close(); err == nil {
		err = cerr
	}
	return Part{File: filepath.Base(pw.f.Name()), Rows: pw.rows, Bytes: pw.cw.n, Blake3: hex.EncodeToString(pw.h.Sum(nil))}, err
}

// abort closes the file after a failure.
func (pw *partWriter) abort() { pw.f.Close() }

// DefaultWriteBudget bounds the memory a saved scan's writing uses for
// the rows it sorts at once, bytes (Writer.Budget).
const DefaultWriteBudget int64 = 256 << 20

// rowBytes is what one Row takes in writeTable's buffer.
const rowBytes = 48

// writeTable writes t's entries into dir as Partitions sorted partition
// files. The table is read in passes over equal ranges of the key space,
// as many as keep the rows sorted at once within budget bytes (with the
// default, a table in memory of under about 5 million entries takes one
// pass); a pass's range lies within one partition or covers whole
// partitions. fault is Writer.CreateFault (nil outside tests).
func writeTable(dir string, t *ddt.Table, budget int64, fault func(name string) error) ([]Part, error) {
	n := int64(t.Len())
	if err := t.Err(); err != nil {
		return nil, err
	}
	passes := int64(1)
	for passes < 1<<20 && n*rowBytes/passes > budget {
		passes *= 2
	}
	var parts []Part
	var err error
	if passes == 1 {
		parts, err = writeParallel(dir, t, n, fault)
	} else {
		parts, err = writeSorted(dir, t, n, passes, budget, fault)
	}
	if err != nil {
		return nil, err
	}
	return parts, checkRows(parts, n)
}

// checkRows checks that the partitions hold the table's n entries.
func checkRows(parts []Part, n int64) error {
	var rows int64
	for _, part := range parts {
		rows += part.Rows
	}
	if rows != n {
		return fmt.Errorf("the table gave %d entries of %d: it could not be read back completely", rows, n)
	}
	return nil
}

// writeSorted is writeTable in passes over ranges of the key space, each
// read from the table, sorted and appended to the partition it lies in.
func writeSorted(dir string, t *ddt.Table, n, passes, budget int64, fault func(name string) error) ([]Part, error) {
	// The rows come in key order, so partition after partition: one file
	// is open at a time (one row group buffered).
	parts := make([]Part, 0, Partitions)
	var w *partWriter
	defer func() {
		if w != nil {
			w.abort()
		}
	}()
	upTo := func(p int) error { // finish every partition before p, open p
		for len(parts) < p || (w == nil && len(parts) == p && p < Partitions) {
			if w == nil {
				var err error
				if w, err = newPartWriter(filepath.Join(dir, PartName(len(parts))), fault); err != nil {
					return err
				}
			}
			if len(parts) == p {
				return nil
			}
			part, err := w.close()
			w = nil
			if err != nil {
				return err
			}
			parts = append(parts, part)
		}
		return nil
	}
	per := n/passes + n/passes/8 + 1024 // the rows of a pass, with room for uneven ranges
	buf := make([]Row, 0, min(per, budget/rowBytes+1024))
	step := ^uint64(0)/uint64(passes) + 1 // key-space width of a pass (by the first 8 bytes)
	for pass := int64(0); pass < passes; pass++ {
		lo := uint64(pass) * step
		hi := lo + step - 1 // inclusive
		if pass == passes-1 {
			hi = ^uint64(0)
		}
		buf = buf[:0]
		t.Range(func(k ddt.Key, e ddt.Entry) bool {
			if v := keyPrefix(&k); v >= lo && v <= hi {
				buf = append(buf, rowOf(&k, &e))
			}
			return true
		})
		if err := t.Err(); err != nil {
			return nil, err
		}
		slices.SortFunc(buf, cmpRows)
		for i := 0; i < len(buf); {
			p := Partition(&buf[i].Key)
			j := i + 1
			for j < len(buf) && Partition(&buf[j].Key) == p {
				j++
			}
			if err := upTo(p); err != nil {
				return nil, err
			}
			if err := w.write(buf[i:j]); err != nil {
				return nil, err
			}
			i = j
		}
	}
	if err := upTo(Partitions); err != nil {
		return nil, err
	}
	return parts, nil
}

// cmpRows orders rows by key.
func cmpRows(a, b Row) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(a.Key[:8]), binary.BigEndian.Uint64(b.Key[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(a.Key[8:]), binary.BigEndian.Uint64(b.Key[8:]))
}

// writeParallel is writeTable of a table whose rows fit its budget at
// once: read once into one slice per partition, then each partition
// sorted and written on its own, several at once (GOMAXPROCS).
func writeParallel(dir string, t *ddt.Table, n int64, fault func(name string) error) ([]Part, error) {
	rows, err := captureRows(t, n, nil)
	if err != nil {
		return nil, err
	}
	return writeRows(dir, rows, fault)
}

// captureRows reads the n entries of t into one slice of rows per
// partition, unsorted, reusing the slices of reuse (nil: none) where they
// are large enough.
func captureRows(t *ddt.Table, n int64, reuse [][]Row) ([][]Row, error) {
	rows := make([][]Row, Partitions)
	for p := range rows {
		want := int(n/Partitions + n/Partitions/8 + 64)
		if p < len(reuse) && cap(reuse[p]) >= want {
			rows[p] = reuse[p][:0]
			continue
		}
		// A quarter more than needed: a growing table's next copies fit.
		rows[p] = make([]Row, 0, want+want/4)
	}
	t.Range(func(k ddt.Key, e ddt.Entry) bool {
		r := rowOf(&k, &e)
		p := Partition(&r.Key)
		rows[p] = append(rows[p], r)
		return true
	})
	return rows, t.Err()
}

// writeRows sorts and writes the rows of each partition (captureRows),
// several partitions at once (GOMAXPROCS). fault is Writer.CreateFault
// (nil outside tests).
func writeRows(dir string, rows [][]Row, fault func(name string) error) ([]Part, error) {
	parts := make([]Part, Partitions)
	err := eachPartition(runtime.GOMAXPROCS(0), func(p int) error {
		slices.SortFunc(rows[p], cmpRows)
		w, err := newPartWriter(filepath.Join(dir, PartName(p)), fault)
		if err != nil {
			return err
		}
		if err := w.write(rows[p]); err != nil {
			w.abort()
			return err
		}
		parts[p], err = w.close()
		return err
	})
	return parts, err
}

// Snapshot is a copy of a table's entries (TakeSnapshot), to be written
// later (WriteSnapshot) while the table goes on changing. Once written its
// memory can be reused by the next TakeSnapshot: a fresh copy of millions
// of entries costs more in page faults than in copying (measured: about
// 250 ns an entry fresh in this project's VM, BenchmarkTakeSnapshot).
type Snapshot struct {
	rows [][]Row
	n    int64
	sum  ddt.Summary // the table's figures (ddt.Table.Summarize's)
}

// Len is the number of entries in s.
func (s *Snapshot) Len() int { return int(s.n) }

// TakeSnapshot copies the entries of t, which must not change meanwhile,
// into memory (48 bytes per entry), that of reuse (a snapshot written
// already; nil: none) where it is large enough: what a scan's checkpoint
// does while its workers wait. ok is false, with no copy, when the copy
// would take more than the memory a saved scan's writing may use
// (DefaultWriteBudget, 256 MiB: about 5 million entries); the caller then
// writes t itself (Write).
func TakeSnapshot(t *ddt.Table, reuse *Snapshot) (snap *Snapshot, ok bool, err error) {
	return takeSnapshot(t, reuse, DefaultWriteBudget)
}

// takeSnapshot is TakeSnapshot within budget bytes.
func takeSnapshot(t *ddt.Table, reuse *Snapshot, budget int64) (snap *Snapshot, ok bool, err error) {
	n := int64(t.Len())
	if err := t.Err(); err != nil {
		return nil, false, err
	}
	if n*rowBytes > budget {
		return nil, false, nil
	}
	var old [][]Row
	if reuse != nil {
		old = reuse.rows
	}
	rows, err := captureRows(t, n, old)
	if err != nil {
		return nil, false, err
	}
	snap = &Snapshot{rows: rows, n: n}
	for _, part := range rows {
		for i := range part {
			if r := &part[i]; r.PSize == 0 {
				snap.sum.EmbeddedEntries++
				snap.sum.EmbeddedRefs += uint64(r.Refcnt)
				snap.sum.EmbeddedLSize += uint64(r.Refcnt) * uint64(r.LSize)
			} else {
				snap.sum.Entries++
				snap.sum.Refs += uint64(r.Refcnt)
			}
		}
	}
	return snap, true, nil
}

// eachPartition runs f for every partition, on jobs goroutines at most;
// after a failure it starts no other partition, and returns every error.
func eachPartition(jobs int, f func(p int) error) error {
	errs := make([]error, Partitions)
	next := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range max(1, min(jobs, Partitions)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if !failed.Load() {
					if errs[p] = f(p); errs[p] != nil {
						failed.Store(true)
					}
				}
			}
		}()
	}
	for p := range Partitions {
		next <- p
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// syncFiles makes the files durable, all at once (a journaling file
// system commits concurrent syncs together: one wait, not one per file).
func syncFiles(names []string) error {
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.OpenFile(name, syncOpenFlag, 0)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = f.Sync()
			if err := f.Close(); errs[i] == nil {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// keyPrefix is the first 8 bytes of k, big-endian.
func keyPrefix(k *ddt.Key) uint64 {
	var v uint64
	for _, b := range k[:8] {
		v = v<<8 | uint64(b)
	}
	return v
}

// partReader reads the rows of one partition file in order, checking
// them: the schema, the partition of every key, strictly increasing keys,
// sizes, and the row count the manifest gives. It reads the columns page
// by page (parquet-go's typed value readers), not row by row.
type partReader struct {
	name   string // for messages: the file's path
	p      int
	want   int64
	f      *os.File
	groups []parquet.RowGroup
	g      int       // next row group
	left   int64     // rows left in the current row group
	cols   []*column // the current row group's columns, in rowColumns order
	buf    []Row
	keys   []byte    // a batch of keys
	ints   [][]int64 // a batch of each INT64 column
	i      int
	rows   int64
	last   [16]byte
}

// ErrPart is wrapped by the errors of a partition file that is missing,
// cut short, not Parquet, or not what the manifest says.
var ErrPart = errors.New("bad table partition")

// openPart opens partition p of the scan in dir, as the manifest
// describes it; verify also checks its BLAKE3 (reading it once more).
func openPart(dir string, p int, part Part, verify bool) (*partReader, error) {
	name := filepath.Join(dir, part.File)
	if part.File != PartName(p) {
		return nil, fmt.Errorf("%s: %w: the manifest names %q for partition %d", filepath.Join(dir, ManifestName), ErrCorrupt, part.File, p)
	}
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file (%s)", name, ErrPart, st.Mode().Type())
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPart, err)
	}
	bad := func(format string, a ...any) (*partReader, error) {
		f.Close()
		return nil, fmt.Errorf("%s: %w: %s", name, ErrPart, fmt.Sprintf(format, a...))
	}
	st, err := f.Stat()
	if err != nil {
		return bad("%v", err)
	}
	if st.Size() != part.Bytes {
		return bad("%d bytes where the manifest says %d (cut short, or replaced)", st.Size(), part.Bytes)
	}
	if verify {
		h := blake3.New()
		if _, err := io.Copy(h, f); err != nil {
			return bad("%v", err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != part.Blake3 {
			return bad("its BLAKE3 does not match the manifest's (damaged or replaced)")
		}
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return bad("not a readable Parquet file: %v", err)
	}
	if err := checkSchema(pf.Schema()); err != nil {
		return bad("%v", err)
	}
	if pf.NumRows() != part.Rows {
		return bad("%d rows where the manifest says %d", pf.NumRows(), part.Rows)
	}
	pr := &partReader{name: name, p: p, want: part.Rows, f: f, groups: pf.RowGroups(),
		buf: make([]Row, 0, rowBatch), keys: make([]byte, 16*rowBatch), ints: make([][]int64, len(rowColumns)-1)}
	for c := range pr.ints {
		pr.ints[c] = make([]int64, rowBatch)
	}
	return pr, nil
}

// column reads the values of one column chunk, page after page.
type column struct {
	pages   parquet.Pages
	page    parquet.Page
	values  parquet.ValueReader
	generic []parquet.Value // for pages without a typed reader (other writers' encodings)
}

func (c *column) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	c.pages.Close()
}

// nextPage moves to the next page of the column chunk.
func (c *column) nextPage() error {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	pg, err := c.pages.ReadPage()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF // the row group promised more rows
		}
		return err
	}
	c.page, c.values = pg, pg.Values()
	return nil
}

// fill reads n values of the column into dst (its kind's reader: ints or
// 16-byte keys).
func (c *column) fill(ints []int64, keys []byte, n int) error {
	got := 0
	for got < n {
		if c.values == nil {
			if err := c.nextPage(); err != nil {
				return err
			}
		}
		var k int
		var err error
		switch r := c.values.(type) {
		case parquet.Int64Reader:
			if ints == nil {
				return fmt.Errorf("an INT64 page in the key column")
			}
			k, err = r.ReadInt64s(ints[got:n])
		case parquet.FixedLenByteArrayReader:
			if keys == nil {
				return fmt.Errorf("a FIXED_LEN_BYTE_ARRAY page in an INT64 column")
			}
			k, err = r.ReadFixedLenByteArrays(keys[16*got : 16*n])
		default:
			if cap(c.generic) < n-got {
				c.generic = make([]parquet.Value, rowBatch)
			}
			k, err = c.values.ReadValues(c.generic[:n-got])
			for j, v := range c.generic[:k] {
				switch {
				case ints != nil && v.Kind() == parquet.Int64:
					ints[got+j] = v.Int64()
				case keys != nil && v.Kind() == parquet.FixedLenByteArray && len(v.ByteArray()) == 16:
					copy(keys[16*(got+j):], v.ByteArray())
				default:
					return fmt.Errorf("a value of kind %v", v.Kind())
				}
			}
		}
		got += k
		if err == io.EOF {
			c.values = nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// batch reads the next rows into buf; it returns false at the end.
func (pr *partReader) batch() (bool, error) {
	for pr.left == 0 {
		for _, c := range pr.cols {
			c.close()
		}
		pr.cols = pr.cols[:0]
		if pr.g == len(pr.groups) {
			return false, nil
		}
		rg := pr.groups[pr.g]
		pr.g++
		pr.left = rg.NumRows()
		for _, cc := range rg.ColumnChunks() {
			pr.cols = append(pr.cols, &column{pages: cc.Pages()})
		}
	}
	n := int(min(pr.left, rowBatch))
	if err := pr.cols[0].fill(nil, pr.keys, n); err != nil {
		return false, err
	}
	for c := range pr.ints {
		if err := pr.cols[c+1].fill(pr.ints[c], nil, n); err != nil {
			return false, err
		}
	}
	pr.left -= int64(n)
	pr.buf = pr.buf[:n]
	for i := range pr.buf {
		r := &pr.buf[i]
		copy(r.Key[:], pr.keys[16*i:])
		r.Refcnt, r.LSize, r.PSize, r.DSize = pr.ints[0][i], pr.ints[1][i], pr.ints[2][i], pr.ints[3][i]
	}
	pr.i = 0
	return true, nil
}

// checkSchema accepts the columns of Row only.
func checkSchema(s *parquet.Schema) error {
	want := parquet.SchemaOf(Row{})
	fields := s.Fields()
	if len(fields) != len(rowColumns) {
		return fmt.Errorf("its columns are not a ddtsim table's (%d columns, want %v)", len(fields), rowColumns)
	}
	for i, f := range fields {
		w := want.Fields()[i]
		if f.Name() != w.Name() || f.Type().Kind() != w.Type().Kind() || f.Type().Length() != w.Type().Length() || !f.Required() {
			return fmt.Errorf("its columns are not a ddtsim table's (column %d is %q %s, want %q %s)", i, f.Name(), f.Type(), w.Name(), w.Type())
		}
	}
	return nil
}

// next returns the next row, or nil at the end. The row is valid until
// the next call.
func (pr *partReader) next() (*Row, error) {
	if pr.i == len(pr.buf) {
		more, err := pr.batch()
		if err != nil {
			return nil, fmt.Errorf("%s: %w: row %d: %v", pr.name, ErrPart, pr.rows, err)
		}
		if !more {
			if pr.rows != pr.want {
				return nil, fmt.Errorf("%s: %w: %d rows read where the manifest says %d", pr.name, ErrPart, pr.rows, pr.want)
			}
			return nil, nil
		}
	}
	r := &pr.buf[pr.i]
	pr.i++
	switch {
	case Partition(&r.Key) != pr.p:
		return nil, fmt.Errorf("%s: %w: row %d: key %x is not of partition %d", pr.name, ErrPart, pr.rows, r.Key, pr.p)
	case pr.rows > 0 && bytes.Compare(r.Key[:], pr.last[:]) <= 0:
		return nil, fmt.Errorf("%s: %w: row %d: keys out of order", pr.name, ErrPart, pr.rows)
	case r.Refcnt <= 0 || r.LSize <= 0 || r.LSize > maxBlock || r.PSize < 0 || r.PSize > maxBlock || r.DSize < 0:
		return nil, fmt.Errorf("%s: %w: row %d is invalid (refcnt %d, lsize %d, psize %d, dsize %d)", pr.name, ErrPart, pr.rows, r.Refcnt, r.LSize, r.PSize, r.DSize)
	}
	pr.last = r.Key
	pr.rows++
	return r, nil
}

func (pr *partReader) close() {
	for _, c := range pr.cols {
		c.close()
	}
	pr.cols = nil
	pr.f.Close()
}
