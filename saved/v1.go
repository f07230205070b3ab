package saved

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/blake3"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// magicV1 opens every saved scan of format version 1.
const magicV1 = "\x89DDTSIM\n"

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

// decodeV1 reads a saved scan of format version 1 (one file; see the
// package documentation) from r.
func decodeV1(r io.Reader, opts DecodeOptions) (*Scan, error) {
	hr := &hashReader{r: bufio.NewReaderSize(r, 64<<10), h: blake3.New()}
	var start [len(magicV1) + 4]byte
	if n, err := io.ReadFull(hr, start[:]); err != nil || string(start[:len(magicV1)]) != magicV1 {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		if n >= len(magicV1) && string(start[:len(magicV1)]) == magicV1 {
			return nil, hr.truncated(err, "version")
		}
		return nil, ErrNotScan
	}
	if v := binary.BigEndian.Uint32(start[len(magicV1):]); v != 1 {
		return nil, fmt.Errorf("%w: the file is of format version %d, this ddtsim reads versions 1 to %d (it was written by another ddtsim: use that one, or a newer one)", ErrVersion, v, Version)
	}
	hdr, err := hr.section("header")
	if err != nil {
		return nil, err
	}
	s := &Scan{Version: 1}
	if err := json.Unmarshal(hdr, &s.Header); err != nil {
		return nil, fmt.Errorf("%w: the header is not valid: %v", ErrCorrupt, err)
	}
	for i := range s.Files {
		if err := s.Files[i].check(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	p, err := s.begin(opts)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return s, nil
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
