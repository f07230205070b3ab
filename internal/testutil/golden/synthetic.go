package golden

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// This file is a bit-for-bit Go port of synthetic() in the shared golden set's
// make-inputs.py (/work/shared/golden/make-inputs.py; not copied into the repo).
// Keep it in step with the script: synthetic.sha256 in testdata/golden checks it.

const (
	kib = 1024
	rec = 128 * kib // R in make-inputs.py
)

// rnd returns n pseudo-random bytes: splitmix64 with state seed; each step adds
// 0x9E3779B97F4A7C15 to the state, mixes it, and emits the result as 8
// little-endian bytes (make-inputs.py rnd).
func rnd(seed uint64, n int) []byte {
	out := make([]byte, (n+7)/8*8)
	s := seed
	for i := 0; i < len(out); i += 8 {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
		z = (z ^ z>>27) * 0x94D049BB133111EB
		z ^= z >> 31
		binary.LittleEndian.PutUint64(out[i:], z)
	}
	return out[:n]
}

// masked returns rnd(seed, n) with every byte ANDed with mask (make-inputs.py masked).
func masked(seed uint64, n int, mask byte) []byte {
	b := rnd(seed, n)
	for i := range b {
		b[i] &= mask
	}
	return b
}

// textWords is the vocabulary of make-inputs.py text_like, in order.
var textWords = [][]byte{
	[]byte("zfs"), []byte("pool"), []byte("record"), []byte("block"), []byte("dedup"),
	[]byte("the"), []byte("of"), []byte("and"), []byte("checksum"), []byte("compress"),
	[]byte("snapshot"), []byte("dataset"), []byte("vdev"), []byte("mirror"), []byte("raidz"),
	[]byte("ashift"), []byte("\n"), []byte(". "), []byte("copies"), []byte("size"),
}

// textLike returns n bytes of words drawn from textWords, each followed by a
// space, word i chosen by byte i (mod n) of rnd(seed, n) (make-inputs.py text_like).
func textLike(seed uint64, n int) []byte {
	r := rnd(seed, n)
	var out bytes.Buffer
	out.Grow(n + 16)
	for i := 0; out.Len() < n; i++ {
		out.Write(textWords[int(r[i%len(r)])%len(textWords)])
		out.WriteByte(' ')
	}
	return out.Bytes()[:n]
}

// repeat returns b concatenated count times.
func repeat(b []byte, count int) []byte { return bytes.Repeat(b, count) }

// concat returns the concatenation of parts.
func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// GenerateSynthetic writes the synthetic input tree of the golden cases into
// dir/synthetic, exactly as make-inputs.py's synthetic() does: same files, same
// names, same bytes, created in the same order. The three sparse files
// (sparse-4m, sparse-unaligned, sparse-tail) are written with seek and
// truncate like the script, so they have real holes where the filesystem
// supports them. Existing files of the same names are overwritten; other files
// already in dir/synthetic are left alone. A failure is returned wrapped, with
// the name of the file being written.
func GenerateSynthetic(dir string) error {
	g := synthGen{root: filepath.Join(dir, "synthetic")}
	g.write("empty", nil)
	g.write("one-byte", []byte("x"))
	g.write("tiny-100", textLike(1, 100))
	g.write("small-5000", textLike(2, 5000))
	g.write("small-4608-rand", rnd(3, 4608))
	g.write("small-4608-half", concat(rnd(4, 2304), make([]byte, 2304)))
	g.write("rec-exact", rnd(5, rec))
	g.write("rec-plus-one", rnd(6, rec+1))
	base := rnd(7, 8*rec)
	g.write("rand-1m", base)
	g.write("rand-1m-copy", base)
	g.write("rand-1m-shift", concat([]byte("!"), base))
	edit := bytes.Clone(base)
	edit[3*rec+17] ^= 0xFF
	g.write("rand-1m-edit", edit)
	g.write("zeros-2m", make([]byte, 2*1024*kib))

	// 32 records, compressibility from random to highly redundant.
	masks := []byte{0xFF, 0x7F, 0x3F, 0x1F, 0x0F, 0x07, 0x03, 0x01}
	var rows [][]byte
	for i := 0; i < 32; i++ {
		seed := uint64(100 + i)
		switch {
		case i < 8:
			rows = append(rows, masked(seed, rec, masks[i%8]))
		case i < 16:
			z := (i - 7) * 2048
			rows = append(rows, concat(rnd(seed, rec-z), make([]byte, z)))
		case i < 24:
			rows = append(rows, textLike(seed, rec))
		default:
			p := (i - 23) * 4096
			rows = append(rows, concat(repeat(rnd(seed, p), rec/p), make([]byte, rec%p)))
		}
	}
	g.write("mixed-entropy-4m", concat(rows...))

	// Duplicates at every refcnt bucket: record k repeated 2^k times.
	var rep [][]byte
	for k := 0; k < 7; k++ {
		rep = append(rep, repeat(rnd(uint64(200+k), rec), 1<<k))
	}
	g.write("refcnt-ladder", concat(rep...))

	// Small files: sizes 1..20000, some duplicated.
	for i := 0; i < 200; i++ {
		n := 1 + (i*97)%20000
		var data []byte
		if i%3 != 0 {
			data = textLike(uint64(300+i), n)
		} else {
			data = rnd(uint64(300+i), n)
		}
		g.write(fmt.Sprintf("smallfiles/f%03d", i), data)
		if i%10 == 0 {
			g.write(fmt.Sprintf("smallfiles/dup%03d", i), data)
		}
	}

	// Sparse files: holes made with seek (or truncate), never written.
	g.sparse("sparse-4m", func(f *os.File) error {
		return writeSeekWrite(f, rnd(400, 1024*kib), 3*1024*kib, rnd(401, 1024*kib))
	})
	g.sparse("sparse-unaligned", func(f *os.File) error {
		return writeSeekWrite(f, rnd(402, 100*kib), 400*kib, rnd(403, 100*kib))
	})
	g.sparse("sparse-tail", func(f *os.File) error { // ends in a hole
		if _, err := f.Write(rnd(404, 200*kib)); err != nil {
			return err
		}
		return f.Truncate(1024 * kib)
	})
	return g.err
}

// writeSeekWrite writes a at offset 0, seeks to off, and writes b there.
func writeSeekWrite(f *os.File, a []byte, off int64, b []byte) error {
	if _, err := f.Write(a); err != nil {
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	_, err := f.Write(b)
	return err
}

// synthGen writes files under root and keeps the first error; after an error
// every later call does nothing.
type synthGen struct {
	root string
	err  error
}

// write creates (or truncates) root/name, making its directory, and writes data.
func (g *synthGen) write(name string, data []byte) {
	g.sparse(name, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// sparse creates (or truncates) root/name, making its directory, and lets fill
// write it.
func (g *synthGen) sparse(name string, fill func(*os.File) error) {
	if g.err != nil {
		return
	}
	p := filepath.Join(g.root, filepath.FromSlash(name))
	err := os.MkdirAll(filepath.Dir(p), 0o755)
	if err == nil {
		var f *os.File
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err == nil {
			err = fill(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		g.err = fmt.Errorf("golden: generating synthetic/%s: %w", name, err)
	}
}
