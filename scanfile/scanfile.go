package scanfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/zeebo/blake3"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/ddt"
)

// Magic opens every saved scan.
const Magic = "\x89DDTSIM\n"

// Version is the format version this package writes and reads.
const Version = 1

// Errors a file is refused with (wrapped with details).
var (
	ErrNotScan   = errors.New("not a ddtsim saved scan")
	ErrVersion   = errors.New("unsupported saved scan version")
	ErrTruncated = errors.New("truncated")
	ErrCorrupt   = errors.New("corrupt")
)

// maxBlock bounds LSIZE and PSIZE (SPA_MAXBLOCKSIZE, 16 MiB).
const maxBlock = 16 << 20

// Scan is a saved scan: its header, table and counters.
type Scan struct {
	Header
	// Table holds the entries; its DSIZE comes from the model's policy.
	Table *ddt.Table
	// Counters as the scan counted them (the figures derived from the
	// table, UniqueBlocks, Stored, Embedded, are as saved; see Result).
	Counters analyzer.Counters
}

// Result returns the scan as an analyzer result: the table, its histogram,
// and the counters with the figures derived from the table recomputed (the
// table's memory is that of the table read, in this process).
func (s *Scan) Result() *analyzer.Result {
	h, st := s.Table.Summarize()
	c := s.Counters
	c.UniqueBlocks = st.Entries
	c.Stored = st.Refs
	c.UniqueEmbedded = st.EmbeddedEntries
	c.Embedded = st.EmbeddedRefs
	c.TableBytes = uint64(s.Table.PeakBytes())
	c.SpillRuns = uint64(s.Table.SpillRuns())
	return &analyzer.Result{Table: s.Table, Histogram: h, Counters: c}
}

// hashWriter writes to w and hashes what it writes.
type hashWriter struct {
	w   io.Writer
	h   *blake3.Hasher
	buf [binary.MaxVarintLen64]byte
	err error
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	if hw.err != nil {
		return 0, hw.err
	}
	hw.h.Write(p)
	n, err := hw.w.Write(p)
	hw.err = err
	return n, err
}

func (hw *hashWriter) uvarint(v uint64) {
	n := binary.PutUvarint(hw.buf[:], v)
	hw.Write(hw.buf[:n])
}

// Encode writes s to w in the saved scan format. The table must not change
// meanwhile.
func Encode(w io.Writer, s *Scan) error {
	hw := &hashWriter{w: w, h: blake3.New()}
	var ver [4]byte
	binary.BigEndian.PutUint32(ver[:], Version)
	hw.Write([]byte(Magic))
	hw.Write(ver[:])
	hdr, err := json.Marshal(&s.Header)
	if err != nil {
		return err
	}
	hw.uvarint(uint64(len(hdr)))
	hw.Write(hdr)
	count := s.Table.Len()
	hw.uvarint(uint64(count))
	n := 0
	s.Table.Range(func(k ddt.Key, e ddt.Entry) bool {
		hw.Write(k[:])
		hw.uvarint(e.Refcnt)
		hw.uvarint(uint64(e.LSize))
		hw.uvarint(uint64(e.PSize))
		n++
		return hw.err == nil
	})
	if hw.err != nil {
		return hw.err
	}
	if n != count {
		return fmt.Errorf("the table gave %d entries of %d: it could not be read back completely", n, count)
	}
	cnt, err := json.Marshal(&s.Counters)
	if err != nil {
		return err
	}
	hw.uvarint(uint64(len(cnt)))
	hw.Write(cnt)
	if hw.err != nil {
		return hw.err
	}
	_, err = w.Write(hw.h.Sum(nil))
	return err
}

// Write saves s to path atomically: it writes a temporary file in the same
// directory, syncs it and renames it over path, so that path holds either
// its old content or all of the new. A new file gets mode 0644, an
// existing one keeps its mode.
func Write(path string, s *Scan) (err error) {
	f, dir, err := createTemp(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := Encode(bw, s); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the rename durable where the file system allows
		d.Close()
	}
	return nil
}

// CheckWritable reports early whether Write(path) can create its
// temporary file, so that a long scan does not fail only at its end.
func CheckWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, _, err := createTemp(path)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// createTemp creates the temporary file Write writes path through, in
// path's directory (returned too), named after path.
func createTemp(path string) (*os.File, string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	return f, dir, err
}

// hashReader reads from r, hashing and counting what it returns.
type hashReader struct {
	r   *bufio.Reader
	h   *blake3.Hasher
	off int64
}

func (hr *hashReader) Read(p []byte) (int, error) {
	n, err := hr.r.Read(p)
	hr.h.Write(p[:n])
	hr.off += int64(n)
	return n, err
}

func (hr *hashReader) ReadByte() (byte, error) {
	b, err := hr.r.ReadByte()
	if err == nil {
		hr.h.Write([]byte{b})
		hr.off++
	}
	return b, err
}

// truncated turns an unexpected end of the input into ErrTruncated.
func (hr *hashReader) truncated(err error, where string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the file ends at byte %d, inside the %s (the save did not finish, or the copy was cut short)", ErrTruncated, hr.off, where)
	}
	return fmt.Errorf("reading the %s: %w", where, err)
}

func (hr *hashReader) full(p []byte, where string) error {
	if _, err := io.ReadFull(hr, p); err != nil {
		return hr.truncated(err, where)
	}
	return nil
}

func (hr *hashReader) uvarint(where string) (uint64, error) {
	v, err := binary.ReadUvarint(hr)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, hr.truncated(err, where)
		}
		return 0, fmt.Errorf("%w: bad number in the %s at byte %d", ErrCorrupt, where, hr.off)
	}
	return v, nil
}

// section reads a uvarint length and that many bytes. The bytes are read
// as they come (a corrupt length does not allocate more than the file
// holds).
func (hr *hashReader) section(where string) ([]byte, error) {
	n, err := hr.uvarint(where)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	got, err := io.Copy(&b, io.LimitReader(hr, int64(min(n, 1<<62))))
	if err != nil {
		return nil, hr.truncated(err, where)
	}
	if uint64(got) < n {
		return nil, hr.truncated(io.ErrUnexpectedEOF, where)
	}
	return b.Bytes(), nil
}

// DecodeOptions adjust Decode.
type DecodeOptions struct {
	// Check, when set, is called with the header before any entry is
	// read; an error from it ends Decode with that error.
	Check func(*Header) error
	// Table, when set, receives the entries (added to what it holds, as
	// merging scans does) instead of a new table. It must have been made
	// for an equal model. After an error its content is meaningless.
	Table *ddt.Table
	// HeaderOnly stops after the header (no checksum is verified).
	HeaderOnly bool
}

// Decode reads a saved scan from r.
func Decode(r io.Reader, opts DecodeOptions) (*Scan, error) {
	hr := &hashReader{r: bufio.NewReaderSize(r, 64<<10), h: blake3.New()}
	var start [len(Magic) + 4]byte
	if n, err := io.ReadFull(hr, start[:]); err != nil || string(start[:len(Magic)]) != Magic {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		if n >= len(Magic) && string(start[:len(Magic)]) == Magic {
			return nil, hr.truncated(err, "version")
		}
		return nil, ErrNotScan
	}
	if v := binary.BigEndian.Uint32(start[len(Magic):]); v != Version {
		return nil, fmt.Errorf("%w: the file is of format version %d, this ddtsim reads version %d (it was written by another ddtsim: use that one, or a newer one)", ErrVersion, v, Version)
	}
	hdr, err := hr.section("header")
	if err != nil {
		return nil, err
	}
	s := &Scan{}
	if err := json.Unmarshal(hdr, &s.Header); err != nil {
		return nil, fmt.Errorf("%w: the header is not valid: %v", ErrCorrupt, err)
	}
	for i := range s.Files {
		if err := s.Files[i].check(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	if opts.Check != nil {
		if err := opts.Check(&s.Header); err != nil {
			return nil, err
		}
	}
	if opts.HeaderOnly {
		return s, nil
	}
	p, err := s.Model.Policy()
	if err != nil {
		return nil, fmt.Errorf("the saved model: %w", err)
	}
	s.Table = opts.Table
	if s.Table == nil {
		s.Table = ddt.NewTable(p.DSize)
	}
	count, err := hr.uvarint("entries")
	if err != nil {
		return nil, err
	}
	var k ddt.Key
	for i := uint64(0); i < count; i++ {
		if err := hr.full(k[:], "entries"); err != nil {
			return nil, err
		}
		var v [3]uint64
		for j := range v {
			if v[j], err = hr.uvarint("entries"); err != nil {
				return nil, err
			}
		}
		ref, lsize, psize := v[0], v[1], v[2]
		if ref == 0 || lsize == 0 || lsize > maxBlock || psize > maxBlock {
			return nil, fmt.Errorf("%w: entry %d of %d is invalid (refcnt %d, lsize %d, psize %d)", ErrCorrupt, i, count, ref, lsize, psize)
		}
		if s.Table.RefN(k, uint32(lsize), ref) {
			s.Table.Set(k, uint32(psize))
		}
	}
	cnt, err := hr.section("counters")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(cnt, &s.Counters); err != nil {
		return nil, fmt.Errorf("%w: the counters are not valid: %v", ErrCorrupt, err)
	}
	want := hr.h.Sum(nil)
	var sum [32]byte
	if _, err := io.ReadFull(hr.r, sum[:]); err != nil {
		return nil, hr.truncated(err, "checksum")
	}
	if !bytes.Equal(sum[:], want) {
		return nil, fmt.Errorf("%w: the checksum does not match its content (the file was damaged or changed)", ErrCorrupt)
	}
	if _, err := hr.r.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: bytes follow the checksum", ErrCorrupt)
	}
	return s, nil
}

// Read reads the saved scan in file path; errors name the file.
func Read(path string, opts DecodeOptions) (*Scan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Decode(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ReadHeader reads only the header of the saved scan in file path.
func ReadHeader(path string) (*Header, error) {
	s, err := Read(path, DecodeOptions{HeaderOnly: true})
	if err != nil {
		return nil, err
	}
	return &s.Header, nil
}

// sortFiles sorts files by path.
func sortFiles(files []File) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
}

// NotSavedScanError is CheckReplaceable's refusal to replace a file that
// is not a saved scan.
type NotSavedScanError struct{ why string }

func (e *NotSavedScanError) Error() string {
	return e.why + ": refusing to overwrite it (remove it first, or save elsewhere)"
}

// CheckReplaceable accepts a --save target that does not exist, is empty
// or holds a saved scan (its first bytes are Magic), and refuses
// any other file with a *NotSavedScanError.
func CheckReplaceable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case !fi.Mode().IsRegular():
		return &NotSavedScanError{"it exists and is not a regular file"}
	case fi.Size() == 0:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(Magic))
	if n, _ := io.ReadFull(f, head); string(head[:n]) != Magic {
		return &NotSavedScanError{"it exists and is not a ddtsim saved scan"}
	}
	return nil
}
