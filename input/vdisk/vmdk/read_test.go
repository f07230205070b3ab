package vmdk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// TestStreamMarkersOnly: a stream whose header says GD_AT_END but which
// has no footer is indexed by its markers and reads the same bytes and
// allocation as the same stream with its footer.
func TestStreamMarkersOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := source(2<<20+512, 11)
	a := openPath(t, writeFile(t, dir, "footer.vmdk", buildSparse(data, buildOpts{stream: true, footer: true})))
	b := openPath(t, writeFile(t, dir, "markers.vmdk", buildSparse(data, buildOpts{stream: true, noGD: true})))
	checkBytes(t, a, data)
	checkBytes(t, b, data)
	if fmt.Sprint(a.Allocated()) != fmt.Sprint(b.Allocated()) || len(a.Allocated()) < 2 {
		t.Errorf("Allocated: footer %v, markers %v", a.Allocated(), b.Allocated())
	}
	if b.Format() != "vmdk streamOptimized" {
		t.Errorf("Format() = %q", b.Format())
	}
}

// TestZeroAndReadOnlyExtents: ZERO extents and RDONLY extents, which
// qemu skips (so it cannot be the reference here): the spec reads ZERO
// as zeros, unallocated, and RDONLY as data.
func TestZeroAndReadOnlyExtents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := source(1<<20, 12)
	two := source(512<<10, 13)
	writeFile(t, dir, "one.bin", one)
	writeFile(t, dir, "two.bin", two)
	desc := `# Disk DescriptorFile
version=1
createType="monolithicFlat"
RW 1024 FLAT "one.bin" 1024
RW 300 ZERO
RDONLY 1024 FLAT "two.bin" 0
`
	d := openPath(t, writeFile(t, dir, "d.vmdk", []byte(desc)))
	want := append(append(append([]byte{}, one[512<<10:]...), make([]byte, 300*512)...), two...)
	checkBytes(t, d, want)
	if got, w := fmt.Sprint(d.Allocated()), fmt.Sprint([]vdisk.Extent{{Off: 0, End: 512 << 10}, {Off: 1324 << 9, End: 1324<<9 + 512<<10}}); got != w {
		t.Errorf("Allocated() = %s, want %s", got, w)
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	img := buildSparse(source(64<<10, 1), buildOpts{})
	for _, c := range []struct {
		b    string
		want bool
	}{
		{string(img[:512]), true},
		{"KDMV", true},
		{"COWD\x01\x00\x00\x00", true},
		{"# Disk DescriptorFile\nversion=1\n", true},
		{"# comment\n\nversion=1\r\nCID=1\n", true},
		{"version=4\n", false},
		{"KDM", false},
		{"", false},
		{"QFI\xfb\x00\x00\x00\x03", false},
		{strings.Repeat("\x00", 512), false},
		{"#!/bin/sh\necho version=1\n", false},
	} {
		if got := Detect([]byte(c.b)); got != c.want {
			t.Errorf("Detect(%.20q) = %v, want %v", c.b, got, c.want)
		}
	}
}

// TestConcurrentReads reads a stream from several goroutines at once
// (run with -race to see the caches and pools are safe).
func TestConcurrentReads(t *testing.T) {
	t.Parallel()
	data := source(2<<20, 14)
	dir := t.TempDir()
	for _, o := range []buildOpts{{stream: true, footer: true}, {grain: 8, gtes: 4}} {
		d := openPath(t, writeFile(t, dir, fmt.Sprintf("c%v.vmdk", o.stream), buildSparse(data, o)))
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 3000+w*1000)
				for off := w * 777; off < len(data); off += len(buf) * 3 {
					n, err := d.ReadAt(buf, int64(off))
					if err != nil && n != len(data)-off {
						errs <- err
						return
					}
					if !bytes.Equal(buf[:n], data[off:off+n]) {
						errs <- fmt.Errorf("bytes differ at %d", off)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// wantFormatError asserts err is a *vdisk.FormatError naming file.
func wantFormatError(t *testing.T, err error, file, why string) {
	t.Helper()
	var fe *vdisk.FormatError
	if !errors.As(err, &fe) {
		t.Errorf("%s: error %v, want a *vdisk.FormatError", why, err)
		return
	}
	if fe.File != file {
		t.Errorf("%s: FormatError names %q, want %q (%v)", why, fe.File, file, err)
	}
}

// readAll reads the whole disk and returns the first error.
func readAll(d vdisk.Disk) error {
	buf := make([]byte, 1<<20)
	for off := uint64(0); off < d.Size(); off += uint64(len(buf)) {
		if _, err := d.ReadAt(buf[:min(uint64(len(buf)), d.Size()-off)], int64(off)); err != nil {
			return err
		}
	}
	return nil
}

// openAndRead opens path and reads all of it: the error of either.
func openAndRead(t *testing.T, path string) error {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(f, path)
	if err != nil {
		f.Close()
		return err
	}
	defer d.Close()
	return readAll(d)
}

func TestTruncated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := source(1<<20, 15)
	for _, o := range []buildOpts{{}, {stream: true}, {stream: true, footer: true}, {stream: true, noGD: true}} {
		img := buildSparse(data, o)
		for _, n := range []int{0, 3, 100, 511, 512, 1500, 3000, len(img) / 3, len(img) / 2, len(img) - 700, len(img) - 1} {
			p := writeFile(t, dir, fmt.Sprintf("t%d.vmdk", n), img[:n])
			wantFormatError(t, openAndRead(t, p), p, fmt.Sprintf("%+v truncated at %d of %d", o, n, len(img)))
		}
	}
}

// patch returns a copy of img with v written little-endian at off.
func patch(img []byte, off int, v any) []byte {
	b := bytes.Clone(img)
	var w bytes.Buffer
	binary.Write(&w, binary.LittleEndian, v)
	copy(b[off:], w.Bytes())
	return b
}

func TestDamaged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := source(1<<20, 16)
	sp := buildSparse(data, buildOpts{})
	st := buildSparse(data, buildOpts{stream: true})
	le := binary.LittleEndian
	gdOff := int(le.Uint64(sp[56:]) * sector)
	gtOff := int(le.Uint32(sp[gdOff:]) * sector)
	firstGTE := func(img []byte) int { // offset of the first allocated GTE
		gt := int(le.Uint32(img[int(le.Uint64(img[56:])*sector):]) * sector)
		for i := gt; ; i += 4 {
			if le.Uint32(img[i:]) != 0 {
				return i
			}
		}
	}
	grain := int(le.Uint32(st[firstGTE(st):]) * sector)
	for _, c := range []struct {
		name string
		img  []byte
	}{
		{"capacity 2^60 sectors", patch(sp, 12, uint64(1)<<60)},
		{"capacity 2^54 sectors, GD too large", patch(sp, 12, uint64(1)<<54)},
		{"grain 100 sectors", patch(sp, 20, uint64(100))},
		{"grain 0", patch(sp, 20, uint64(0))},
		{"grain 2^40", patch(sp, 20, uint64(1)<<40)},
		{"0 GTEs per GT", patch(sp, 44, uint32(0))},
		{"GD past EOF", patch(sp, 56, uint64(1)<<40)},
		{"GT past EOF", patch(sp, gdOff, uint32(1)<<30)},
		{"GTE past EOF", patch(sp, gtOff+8, uint32(1)<<31)},
		{"GTE near EOF", patch(sp, firstGTE(sp), uint32(len(sp)/sector-1))},
		{"check bytes", patch(sp, 73, uint32(0x0a0a0a0a))},
		{"stream GTE past EOF", patch(st, firstGTE(st), uint32(len(st)))},
		{"bad compressed grain", patch(st, grain+markerHeader+20, uint64(0xdeadbeefdeadbeef))},
		{"bad zlib header", patch(st, grain+markerHeader, uint16(0xffff))},
		{"marker size 0", patch(st, grain+8, uint32(0))},
		{"marker size huge", patch(st, grain+8, uint32(1<<30))},
		{"marker wrong lba", patch(st, grain, uint64(12345))},
		{"footer without GD", patch(buildSparse(data, buildOpts{stream: true, footer: true}), 12, uint64(1)<<50)},
		{"not a VMDK", []byte("hello, world\n")},
	} {
		p := writeFile(t, dir, strings.ReplaceAll(c.name, " ", "_"), c.img)
		wantFormatError(t, openAndRead(t, p), p, c.name)
	}
}

func TestMissingExtent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.bin", make([]byte, 4096))
	p := writeFile(t, dir, "d.vmdk", []byte("# Disk DescriptorFile\nversion=1\ncreateType=\"twoGbMaxExtentFlat\"\nRW 8 FLAT \"a.bin\" 0\nRW 8 FLAT \"gone-f002.vmdk\" 0\n"))
	err := openErr(t, p)
	wantFormatError(t, err, p, "missing extent")
	if err == nil || !strings.Contains(err.Error(), "gone-f002.vmdk") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v: want it to name gone-f002.vmdk and wrap ErrNotExist", err)
	}
	// A flat extent shorter than the descriptor says.
	p = writeFile(t, dir, "short.vmdk", []byte("# Disk DescriptorFile\nversion=1\ncreateType=\"monolithicFlat\"\nRW 9 FLAT \"a.bin\" 0\n"))
	wantFormatError(t, openErr(t, p), p, "short flat extent")
	// A sparse extent whose header disagrees with the descriptor.
	writeFile(t, dir, "s.vmdk", buildSparse(make([]byte, 64<<10), buildOpts{}))
	p = writeFile(t, dir, "mismatch.vmdk", []byte("# Disk DescriptorFile\nversion=1\ncreateType=\"twoGbMaxExtentSparse\"\nRW 256 SPARSE \"s.vmdk\"\n"))
	wantFormatError(t, openErr(t, p), p, "sparse extent size mismatch")
	// A FIFO is refused, not waited on.
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err == nil {
		p = writeFile(t, dir, "fifo.vmdk", []byte("# Disk DescriptorFile\nversion=1\ncreateType=\"monolithicFlat\"\nRW 9 FLAT \"fifo\" 0\n"))
		wantFormatError(t, openErr(t, p), p, "FIFO extent")
	}
}

func TestUnsupported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.bin", make([]byte, 4096))
	head := "# Disk DescriptorFile\nversion=1\nCID=1234abcd\n"
	flat := "RW 8 FLAT \"a.bin\" 0\n"
	for _, c := range []struct{ name, text, want string }{
		{"delta without hint", head + "parentCID=89abcdef\ncreateType=\"monolithicFlat\"\n" + flat, "without parentFileNameHint"},
		{"seSparse", head + "createType=\"seSparse\"\nRW 8 SESPARSE \"a.bin\"\n", "seSparse"},
		{"vmfsSparse", head + "createType=\"vmfsSparse\"\nRW 8 VMFSSPARSE \"a.bin\"\n", "vmfsSparse"},
		{"unknown", head + "createType=\"fancyNewThing\"\n" + flat, "fancyNewThing"},
		{"encrypted", head + "createType=\"monolithicFlat\"\nencryption.keySafe = \"vmware:key/list/...\"\n" + flat, "encrypted"},
		{"noaccess", head + "createType=\"monolithicFlat\"\nNOACCESS 8 FLAT \"a.bin\" 0\n", "NOACCESS"},
		{"rdm", head + "createType=\"vmfs\"\nRW 8 VMFSRDM \"a.bin\"\n", "VMFSRDM"},
	} {
		p := writeFile(t, dir, c.name+".vmdk", []byte(c.text))
		err := openErr(t, p)
		if !errors.Is(err, vdisk.ErrUnsupported) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want ErrUnsupported naming %q and the file", c.name, err, c.want)
		}
	}
	// A monolithicSparse delta without parentFileNameHint in the embedded
	// descriptor.
	img := buildSparse(make([]byte, 64<<10), buildOpts{desc: "# Disk DescriptorFile\nversion=1\nCID=1\nparentCID=2\ncreateType=\"monolithicSparse\"\n"})
	p := writeFile(t, dir, "delta.vmdk", img)
	if err := openErr(t, p); !errors.Is(err, vdisk.ErrUnsupported) || !strings.Contains(err.Error(), "parentCID 2") {
		t.Errorf("sparse delta: error %v", err)
	}
	p = writeFile(t, dir, "cowd.vmdk", append([]byte("COWD"), make([]byte, 2044)...))
	if err := openErr(t, p); !errors.Is(err, vdisk.ErrUnsupported) {
		t.Errorf("COWD: error %v", err)
	}
}

// TestGrainInflatedOnce: sequential reads of any size and alignment
// decompress each grain of a stream once (the grain cache), and the
// cache stays within its bound.
func TestGrainInflatedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := source(12<<20+512, 16) // more than the cache holds; a partial last grain
	for _, o := range []buildOpts{{stream: true, footer: true}, {stream: true, noGD: true}} {
		path := writeFile(t, dir, fmt.Sprintf("s%v.vmdk", o.noGD), buildSparse(data, o))
		for _, c := range []struct {
			start, size int
		}{{0, 4 << 10}, {0, 8 << 10}, {0, 64 << 10}, {4 << 10, 1 << 20}, {100, 3000}, {0, 65537}} {
			d := openPath(t, path).(*disk)
			sp := d.exts[0].sp
			var grains uint64
			for gi := uint64(0); gi*sp.grain < sp.size; gi++ {
				if st, _, err := sp.lookup(gi); err != nil {
					t.Fatal(err)
				} else if st == grainData && uint64(c.start) < (gi+1)*sp.grain {
					grains++
				}
			}
			got := make([]byte, len(data)-c.start)
			for off := 0; off < len(got); off += c.size {
				n := min(c.size, len(got)-off)
				if m, err := d.ReadAt(got[off:off+n], int64(c.start+off)); m != n || err != nil {
					t.Fatalf("ReadAt(%d at %d) = %d, %v", n, c.start+off, m, err)
				}
			}
			if !bytes.Equal(got, data[c.start:]) {
				t.Fatalf("%+v: guest bytes differ", c)
			}
			if n := sp.inflated.Load(); n != grains {
				t.Errorf("noGD %v, reads of %d from %d: %d grains decompressed, want %d (once each)", o.noGD, c.size, c.start, n, grains)
			}
			if d.grains.bytes > grainCacheBytes {
				t.Errorf("grain cache holds %d bytes, more than %d", d.grains.bytes, grainCacheBytes)
			}
		}
	}
}
