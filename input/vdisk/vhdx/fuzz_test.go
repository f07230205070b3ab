package vhdx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// The fuzz input is a sparse file, compactly: a flags byte (bit 0: fix
// the header and region table checksums after patching, so that
// mutations get past them), the file size (uint32 LE, at most
// fuzzMaxSize), then records of file offset (uint32 LE), length (uint16
// LE) and bytes, written over zeros.
const fuzzMaxSize = 64 * mib

// encode turns an image into a fuzz input.
func encode(img []byte, fix bool) []byte {
	out := []byte{0}
	if fix {
		out[0] = 1
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(img)))
	for i := 0; i < len(img); {
		if img[i] == 0 {
			i++
			continue
		}
		j, zeros := i, 0
		for j < len(img) && j-i < 60000 && zeros < 32 {
			if img[j] == 0 {
				zeros++
			} else {
				zeros = 0
			}
			j++
		}
		j -= zeros
		out = binary.LittleEndian.AppendUint32(out, uint32(i))
		out = binary.LittleEndian.AppendUint16(out, uint16(j-i))
		out = append(out, img[i:j]...)
		i = j
	}
	return out
}

// decode writes the file a fuzz input describes to path.
func decode(t *testing.T, in []byte, path string) bool {
	if len(in) < 5 {
		return false
	}
	fix := in[0]&1 != 0
	size := int64(binary.LittleEndian.Uint32(in[1:]))
	if size > fuzzMaxSize {
		return false
	}
	// Structures whose checksums are fixed live in the header section:
	// patch them in memory, the rest in the file.
	head := make([]byte, min(size, headerSection))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for in = in[5:]; len(in) >= 6; {
		off := int64(binary.LittleEndian.Uint32(in))
		n := int(binary.LittleEndian.Uint16(in[4:]))
		in = in[6:]
		n = min(n, len(in))
		p := in[:n]
		in = in[n:]
		if off >= size {
			continue
		}
		p = p[:min(int64(len(p)), size-off)]
		if off < int64(len(head)) {
			k := copy(head[off:], p)
			p, off = p[k:], off+int64(k)
		}
		if len(p) > 0 {
			if _, err := f.WriteAt(p, off); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fix {
		for _, r := range [][2]int{{header1Off, headerSize}, {header2Off, headerSize}, {region1Off, regionSize}, {region2Off, regionSize}} {
			if r[0]+r[1] <= len(head) {
				putCRC(head[r[0] : r[0]+r[1]])
			}
		}
	}
	if _, err := f.WriteAt(head, 0); err != nil {
		t.Fatal(err)
	}
	return true
}

// sparseData returns n bytes, zeros but for a few bytes in each 64 KiB
// (small fuzz seeds that still show which bytes come from where).
func sparseData(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 64 * kib {
		b[i], b[i+1] = seed, byte(i>>16)
	}
	return b
}

func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	// The one parent a fuzzed differencing disk may open.
	pb := newBuilder(4*mib, mib)
	pb.blocks[0] = blk{stFullyPresent, sparseData(mib, 1)}
	pb.blocks[2] = blk{stFullyPresent, sparseData(mib, 2)}
	pb.blocks[3] = blk{state: stZero}
	parent := write(f, dir, "parent.vhdx", pb.bytes())
	open := func(d, name string) (vdisk.Disk, error) {
		if filepath.Base(name) != "parent.vhdx" {
			return nil, os.ErrNotExist
		}
		pf, err := os.Open(parent)
		if err != nil {
			return nil, err
		}
		disk, err := Open(pf, parent, nil)
		if err != nil {
			pf.Close()
		}
		return disk, err
	}

	data := sparseData(6*mib+1024, 3)
	f.Add(encode(mixed(512, data).bytes(), true))
	f.Add(encode(mixed(512, data).bytes(), false))
	f.Add(encode(mixed(4096, sparseData(6*mib+8192, 4)).bytes(), true))
	fixed := newBuilder(2*mib+512, mib)
	fixed.fixed = true
	fixed.blocks[0] = blk{stFullyPresent, sparseData(mib, 5)}
	fixed.blocks[1] = blk{stFullyPresent, sparseData(mib, 6)}
	fixed.blocks[2] = blk{stFullyPresent, sparseData(512, 7)}
	f.Add(encode(fixed.bytes(), true))
	lg := mixed(512, data)
	lg.logGUID, lg.logEntry = testLogGUID, true
	f.Add(encode(lg.bytes(), true))
	cb := newBuilder(4*mib, mib)
	cb.parent = true
	cb.locator = [][2]string{{"parent_linkage", linkGUID}, {"relative_path", `.\parent.vhdx`}, {"volume_path", `\\?\Volume{x}\parent.vhdx`}}
	cb.blocks[0] = blk{stPartially, sparseData(mib, 8)}
	bm := make([]byte, mib/512/8)
	setBits(bm, 0, 1)
	setBits(bm, 128, 300)
	cb.bitmaps[0] = bm
	cb.blocks[1] = blk{stFullyPresent, sparseData(mib, 9)}
	cb.blocks[3] = blk{state: stUndefined}
	f.Add(encode(cb.bytes(), true))

	// Files written for each input go to memory when there is a tmpfs:
	// on a busy disk, creating them is most of the time an input takes.
	fuzzDir := dir
	if shm, err := os.MkdirTemp("/dev/shm", "vhdx-fuzz"); err == nil {
		fuzzDir = shm
		f.Cleanup(func() { os.RemoveAll(shm) })
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(fuzzDir, "f.vhdx")
		if !decode(t, in, path) {
			return
		}
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Open(file, path, open)
		if err != nil {
			file.Close()
			var fe *vdisk.FormatError
			if !errors.Is(err, vdisk.ErrUnsupported) && !(errors.As(err, &fe) && fe.File == path) {
				t.Fatalf("error neither FormatError for the file nor ErrUnsupported: %v", err)
			}
			return
		}
		defer d.Close()
		fuzzReads(t, d)
	})
}

// fuzzReads checks an opened disk: Allocated sorted, disjoint and within
// Size; reads at the start and end of every extent (a bounded number),
// at the disk's end, and just outside extents (zeros) succeed.
func fuzzReads(t *testing.T, d vdisk.Disk) {
	size := d.Size()
	alloc := d.Allocated()
	var last uint64
	for i, e := range alloc {
		if e.Off >= e.End || e.End > size || (i > 0 && e.Off <= last) {
			t.Fatalf("Allocated() = %v: not sorted, disjoint and within %d", alloc, size)
		}
		last = e.End
	}
	buf := make([]byte, 3*512+7)
	read := func(off uint64, zero bool) {
		if off >= size {
			return
		}
		n, err := d.ReadAt(buf, int64(off))
		want := min(uint64(len(buf)), size-off)
		if uint64(n) != want || (err != nil && (err != io.EOF || want == uint64(len(buf)))) {
			t.Fatalf("ReadAt(%d) = %d, %v; want %d bytes", off, n, err, want)
		}
		if zero && !bytes.Equal(buf[:n], make([]byte, n)) {
			t.Fatalf("ReadAt(%d) outside Allocated %v: not zeros", off, alloc)
		}
	}
	read(0, len(alloc) == 0 || alloc[0].Off >= uint64(len(buf)))
	if size > 0 {
		read(size-min(size, 100), false)
	}
	for i, e := range alloc {
		if i == 64 {
			break
		}
		read(e.Off, false)
		read(e.End-min(e.End-e.Off, 10), false)
		if i+1 == len(alloc) || alloc[i+1].Off-e.End >= uint64(len(buf)) {
			read(e.End, true)
		}
	}
}

// TestFuzzEncoding: a fuzz seed decodes to the image it encodes, which
// opens.
func TestFuzzEncoding(t *testing.T) {
	t.Parallel()
	img := mixed(512, sparseData(6*mib+1024, 3)).bytes()
	path := filepath.Join(t.TempDir(), "f.vhdx")
	if !decode(t, encode(img, false), path) {
		t.Fatal("seed does not decode")
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, img) {
		t.Fatalf("decoded seed differs from the image (%v)", err)
	}
	openFile(t, path, nil)
}
