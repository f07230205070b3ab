package saved

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/zeebo/blake3"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

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

// encodeV1 writes s to w in the saved scan format of version 1 (the
// format ddtsim wrote before Parquet tables), for tests of reading it. The table must not change
// meanwhile.
func encodeV1(w io.Writer, s *Scan) error {
	hw := &hashWriter{w: w, h: blake3.New()}
	var ver [4]byte
	binary.BigEndian.PutUint32(ver[:], 1)
	hw.Write([]byte(magicV1))
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

// fileBlake3 is the BLAKE3-256 of a file, hex.
func fileBlake3(t interface{ Fatal(...any) }, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := blake3.Sum256(b)
	return hex.EncodeToString(s[:])
}
