package vhd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

const mib = 1 << 20

// guestData returns n bytes of deterministic pseudo-random data with
// runs of zeros (about half) and of a repeated pattern in between.
func guestData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 11))
	b := make([]byte, n)
	for off := 0; off < n; {
		l := min(n-off, 4096+r.IntN(300*1024))
		switch r.IntN(4) {
		case 0, 1:
		case 2:
			for i := off; i < off+l; i++ {
				b[i] = byte(r.Uint32())
			}
		case 3:
			p := byte(1 + r.IntN(255))
			for i := off; i < off+l; i++ {
				b[i] = p ^ byte(i%5)
			}
		}
		off += l
	}
	return b
}

func openFile(t testing.TB, path string) vdisk.Disk {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(f, path, nil)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// detect runs Detect on the file's first and last 512 bytes.
func detect(t testing.TB, path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Detect(b[:min(len(b), 512)], b[max(0, len(b)-512):])
}

// TestQemu converts mixed data to fixed and dynamic VHDs (sizes rounded
// to CHS geometry, and exact with force_size), writes into them with
// qemu-io, and compares with qemu-img convert and map.
func TestQemu(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	data := guestData(9*mib+3*512, 5)
	clear(data[4*mib : 8*mib]) // a block for qemu-io to allocate, a hole
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw")
	if err := os.WriteFile(raw, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"fixed", "dynamic"} {
		for _, force := range []string{"off", "on"} {
			t.Run(sub+",force_size="+force, func(t *testing.T) {
				img := filepath.Join(t.TempDir(), "d.vhd")
				vdisktest.Run(t, "convert", "-O", "vpc", "-o", "subformat="+sub+",force_size="+force, raw, img)
				if out, err := exec.Command("qemu-io", "-f", "vpc", "-c", "write -P 0x66 5000000 5000", "-c", "write -z 100000 3000", img).CombinedOutput(); err != nil {
					t.Fatalf("qemu-io: %v\n%s", err, out)
				}
				if !detect(t, img) {
					t.Errorf("Detect = false")
				}
				d := openFile(t, img)
				if d.Format() != "vhd "+sub {
					t.Errorf("Format() = %q", d.Format())
				}
				if force == "on" && d.Size() != uint64(len(data)) {
					t.Errorf("Size() = %d, want %d with force_size", d.Size(), len(data))
				}
				vdisktest.Check(t, img, "vpc", d)
				if sub == "dynamic" && len(d.Allocated()) < 2 {
					t.Errorf("Allocated() = %v: no holes in a dynamic disk", d.Allocated())
				}
			})
		}
	}
}

// build writes a dynamic VHD of size bytes (creator "qem2": the current
// size is the guest's), 2 MiB blocks, with data in the blocks listed.
func build(size uint64, data []byte, blocks ...int) []byte {
	return buildBS(size, 2*mib, data, blocks...)
}

func buildBS(size, bs uint64, data []byte, blocks ...int) []byte {
	nb := (size + bs - 1) / bs
	batOff := uint64(1536)
	dataOff := (batOff + nb*4 + 511) / 512 * 512
	img := make([]byte, dataOff)
	ft := footer(size, typeDynamic)
	copy(img, ft)
	h := img[512:1536]
	copy(h, "cxsparse")
	binary.BigEndian.PutUint64(h[8:], ^uint64(0))
	binary.BigEndian.PutUint64(h[16:], batOff)
	binary.BigEndian.PutUint32(h[24:], 0x10000)
	binary.BigEndian.PutUint32(h[28:], uint32(nb))
	binary.BigEndian.PutUint32(h[32:], uint32(bs))
	binary.BigEndian.PutUint32(h[36:], checksum(h, 36))
	for i := range nb {
		binary.BigEndian.PutUint32(img[batOff+4*i:], unallocated)
	}
	for _, b := range blocks {
		binary.BigEndian.PutUint32(img[batOff+4*uint64(b):], uint32(len(img)/512))
		img = append(img, bytes.Repeat([]byte{0xff}, int(bs/512/8+511)/512*512)...)
		blk := make([]byte, bs)
		copy(blk, data[uint64(b)*bs:])
		img = append(img, blk...)
	}
	return append(img, ft...)
}

func footer(size uint64, typ uint32) []byte {
	ft := make([]byte, 512)
	copy(ft, "conectix")
	binary.BigEndian.PutUint32(ft[8:], 2)
	binary.BigEndian.PutUint32(ft[12:], 0x10000)
	binary.BigEndian.PutUint64(ft[16:], 512)
	if typ == typeFixed {
		binary.BigEndian.PutUint64(ft[16:], ^uint64(0))
	}
	copy(ft[28:], "qem2")
	binary.BigEndian.PutUint64(ft[40:], size)
	binary.BigEndian.PutUint64(ft[48:], size)
	binary.BigEndian.PutUint32(ft[56:], 65535<<16|16<<8|255)
	binary.BigEndian.PutUint32(ft[60:], typ)
	binary.BigEndian.PutUint32(ft[64:], footerChecksum(ft))
	return ft
}

// fixSum recomputes the footer checksums (both copies) and the dynamic
// header's after an edit.
func fixSum(img []byte) {
	for _, o := range []int{0, len(img) - 512} {
		if string(img[o:o+8]) == "conectix" {
			binary.BigEndian.PutUint32(img[o+64:], footerChecksum(img[o:o+512]))
		}
	}
	if string(img[512:520]) == "cxsparse" {
		binary.BigEndian.PutUint32(img[512+36:], checksum(img[512:1536], 36))
	}
}

// TestBuilt reads a built dynamic image against the blocks written
// (qemu-img too when there is one).
func TestBuilt(t *testing.T) {
	t.Parallel()
	size := uint64(7*mib + 512)
	data := guestData(int(size), 6)
	img := build(size, data, 0, 3)
	p := filepath.Join(t.TempDir(), "b.vhd")
	os.WriteFile(p, img, 0o644)
	d := openFile(t, p)
	want := make([]byte, size)
	copy(want[:2*mib], data)
	copy(want[6*mib:], data[6*mib:])
	got := make([]byte, size)
	if n, err := d.ReadAt(got, 0); uint64(n) != size || err != nil {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("guest bytes differ")
	}
	wantAlloc := []vdisk.Extent{{Off: 0, End: 2 * mib}, {Off: 6 * mib, End: size}}
	if fmt.Sprint(d.Allocated()) != fmt.Sprint(wantAlloc) {
		t.Errorf("Allocated() = %v, want %v", d.Allocated(), wantAlloc)
	}
	if _, err := exec.LookPath("qemu-img"); err == nil {
		vdisktest.Check(t, p, "vpc", d)
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	ft := footer(mib, typeFixed)
	raw := make([]byte, 512)
	bad := bytes.Clone(ft)
	bad[100]++
	for _, c := range []struct {
		name         string
		head, footer []byte
		want         bool
	}{
		{"dynamic", footer(mib, typeDynamic), raw, true},
		{"fixed", raw, ft, true},
		{"raw", raw, raw, false},
		{"fixed, bad checksum", raw, bad, false},
		{"short", []byte("conec"), nil, false},
	} {
		if got := Detect(c.head, c.footer); got != c.want {
			t.Errorf("%s: Detect = %v", c.name, got)
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	size := uint64(7*mib + 512)
	data := guestData(int(size), 7)
	be32 := binary.BigEndian.PutUint32
	be64 := binary.BigEndian.PutUint64
	for _, c := range []struct {
		name        string
		edit        func(img []byte) []byte
		unsupported bool
		reason      string
		off         int64
	}{
		{"short", func(img []byte) []byte { return img[:100] }, false, "shorter than a VHD footer", 0},
		{"no footer", func(img []byte) []byte { img[0] = 'C'; img[len(img)-512] = 'C'; return img }, false, "no conectix footer", int64(len(build(size, data, 0, 3))) - 512},
		{"footer checksum", func(img []byte) []byte { img[70]++; return img }, false, "footer checksum", 0},
		{"header checksum", func(img []byte) []byte { img[600]++; return img }, false, "dynamic disk header checksum", 512},
		{"truncated", func(img []byte) []byte { return img[:len(img)-mib] }, false, "block 3 at file offset", 1536 + 3*4},
		{"BAT entry past EOF", func(img []byte) []byte { be32(img[1536+4:], 1<<30); return img }, false, "block 1 at file offset 549755813888", 1536 + 4},
		{"BAT past EOF", func(img []byte) []byte { be64(img[512+16:], 1<<40); fixSum(img); return img }, false, "BAT at 1099511627776", 512 + 16},
		{"BAT too small", func(img []byte) []byte { be32(img[512+28:], 2); fixSum(img); return img }, false, "BAT of 2 entries for a disk of 4 blocks", 512 + 28},
		{"block size", func(img []byte) []byte { be32(img[512+32:], 3*mib); fixSum(img); return img }, false, "block size 3145728", 512 + 32},
		{"header past EOF", func(img []byte) []byte { be64(img[16:], 1<<50); fixSum(img); return img }, false, "dynamic disk header at", 16},
		{"2 TiB", func(img []byte) []byte { be64(img[48:], 2<<40); fixSum(img); return img }, false, "at most 4278190080", 48},
		{"disk type", func(img []byte) []byte { be32(img[60:], 9); fixSum(img); return img }, false, "disk type 9", 60},
		{"differencing without parent", func(img []byte) []byte { be32(img[60:], typeDiff); fixSum(img); return img }, false, "names no parent", 512 + 64},
		{"fixed truncated", func(img []byte) []byte {
			ft := footer(size, typeFixed)
			return append(make([]byte, size-512), ft...)
		}, false, "fixed disk of 7340544 bytes in a file of 7340544 bytes", int64(size) - 512},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := c.edit(build(size, data, 0, 3))
			p := filepath.Join(t.TempDir(), "bad.vhd")
			os.WriteFile(p, img, 0o644)
			f, _ := os.Open(p)
			defer f.Close()
			d, err := Open(f, p, nil)
			if err == nil {
				d.Close()
				t.Fatalf("opened (%s)", d.Format())
			}
			var fe *vdisk.FormatError
			if c.unsupported {
				if !errors.Is(err, vdisk.ErrUnsupported) {
					t.Errorf("%v: not ErrUnsupported", err)
				}
			} else if !errors.As(err, &fe) || fe.File != p || fe.Off != c.off {
				t.Errorf("%v: not a FormatError for %s at %d", err, p, c.off)
			}
			if !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("error %q lacks the path or %q", err, c.reason)
			}
		})
	}
}
