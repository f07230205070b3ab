package vhd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

var parentID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// setID sets the unique id in both footers of a built image.
func setID(img []byte, id [16]byte) {
	copy(img[68:], id[:])
	copy(img[len(img)-512+68:], id[:])
	fixSum(img)
}

// child builds a differencing VHD (creator "qem2") of 2 MiB blocks:
// blocks maps a block to its sector bitmap (MSB first) and data.
type childBlock struct {
	bitmap []byte
	data   []byte
}

func buildChild(size uint64, blocks map[int]childBlock, locators map[uint32]string, name string) []byte {
	return buildChildBS(size, 2*mib, blocks, locators, name)
}

func buildChildBS(size, bs uint64, blocks map[int]childBlock, locators map[uint32]string, name string) []byte {
	nb := (size + bs - 1) / bs
	batOff := uint64(1536)
	locOff := (batOff + nb*4 + 511) / 512 * 512
	img := make([]byte, locOff)
	ft := footer(size, typeDiff)
	copy(img, ft)
	h := img[512:1536]
	copy(h, "cxsparse")
	binary.BigEndian.PutUint64(h[8:], ^uint64(0))
	binary.BigEndian.PutUint64(h[16:], batOff)
	binary.BigEndian.PutUint32(h[24:], 0x10000)
	binary.BigEndian.PutUint32(h[28:], uint32(nb))
	binary.BigEndian.PutUint32(h[32:], uint32(bs))
	copy(h[40:], parentID[:])
	for i, c := range utf16.Encode([]rune(name)) {
		binary.BigEndian.PutUint16(h[64+2*i:], c)
	}
	k := 0
	for _, code := range []uint32{platW2ku, platW2ru, platMacX} {
		v, ok := locators[code]
		if !ok {
			continue
		}
		var b []byte
		if code == platMacX {
			b = []byte(v)
		} else {
			for _, c := range utf16.Encode([]rune(v)) {
				b = binary.LittleEndian.AppendUint16(b, c)
			}
		}
		e := img[512+576+24*k:]
		binary.BigEndian.PutUint32(e, code)
		binary.BigEndian.PutUint32(e[4:], 1)
		binary.BigEndian.PutUint32(e[8:], uint32(len(b)))
		binary.BigEndian.PutUint64(e[16:], uint64(len(img)))
		img = append(img, b...)
		img = append(img, make([]byte, 512-len(b)%512)...)
		k++
	}
	h = img[512:1536]
	for i := range nb {
		binary.BigEndian.PutUint32(img[batOff+4*i:], unallocated)
	}
	for b := range int(nb) {
		c, ok := blocks[b]
		if !ok {
			continue
		}
		binary.BigEndian.PutUint32(img[batOff+4*uint64(b):], uint32(len(img)/512))
		bm := make([]byte, (bs/512/8+511)/512*512)
		copy(bm, c.bitmap)
		img = append(img, bm...)
		blk := make([]byte, bs)
		copy(blk, c.data)
		img = append(img, blk...)
	}
	h = img[512:1536]
	binary.BigEndian.PutUint32(h[36:], checksum(h, 36))
	return append(img, ft...)
}

// opener opens VHD parents by content, raw files otherwise.
type opener struct{ names []string }

func (o *opener) open(dir, name string) (vdisk.Disk, error) {
	o.names = append(o.names, name)
	name = vdisk.Join(dir, name) // as input/guest's opener
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if !Detect(b[:min(512, len(b))], b[max(0, len(b)-512):]) {
		return vdisk.OpenRaw(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	d, err := Open(f, name, o.open)
	if err != nil {
		f.Close()
	}
	return d, err
}

func msb(bm []byte, lo, hi int) {
	for i := lo; i < hi; i++ {
		bm[i/8] |= 0x80 >> (i % 8)
	}
}

// diffPair writes a parent (7 MiB + 512: blocks 0 and 3 allocated) and a
// child to dir; child blocks: 0 partly its own (sectors 0-7, 100, 4095),
// 1 unallocated (the parent's, a hole there too), 2 its own sectors 0-9
// over the parent's hole, 3 its own sector 1 over the parent's last
// block. It returns the child and the guest bytes expected.
func diffPair(t *testing.T, dir string, locators map[uint32]string) (string, []byte) {
	const size = 7*mib + 512
	pdata := guestData(size, 21)
	for i := range pdata {
		if pdata[i] == 0 {
			pdata[i] = 0x77
		}
	}
	clear(pdata[2*mib : 6*mib]) // blocks 1 and 2 unallocated
	pimg := build(size, pdata, 0, 3)
	setID(pimg, parentID)
	if err := os.WriteFile(filepath.Join(dir, "parent.vhd"), pimg, 0o644); err != nil {
		t.Fatal(err)
	}
	cdata := guestData(size, 22)
	bm0 := make([]byte, 512)
	msb(bm0, 0, 8)
	msb(bm0, 100, 101)
	msb(bm0, 4095, 4096)
	bm2 := make([]byte, 512)
	msb(bm2, 0, 10)
	bm3 := make([]byte, 512)
	msb(bm3, 1, 2)
	img := buildChild(size, map[int]childBlock{
		0: {bm0, cdata[:2*mib]},
		2: {bm2, cdata[4*mib : 6*mib]},
		3: {bm3, cdata[6*mib:]},
	}, locators, "parent.vhd")
	child := filepath.Join(dir, "child.vhd")
	if err := os.WriteFile(child, img, 0o644); err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(pdata)
	for _, r := range [][2]int{{0, 8}, {100, 101}, {4095, 4096}} {
		copy(want[r[0]*512:r[1]*512], cdata[r[0]*512:])
	}
	copy(want[4*mib:4*mib+10*512], cdata[4*mib:])
	copy(want[6*mib+512:6*mib+1024], cdata[6*mib+512:])
	return child, want
}

func TestDifferencing(t *testing.T) {
	t.Parallel()
	win := runtime.GOOS == "windows"
	absOpened := "[parent.vhd]"
	if win {
		absOpened = `[C:\vms\parent.vhd parent.vhd]` // absolute there, tried first
	}
	for _, c := range []struct {
		name     string
		locators map[uint32]string
		opened   string
	}{
		{"relative", map[uint32]string{platW2ku: `C:\vms\parent.vhd`, platW2ru: `.\parent.vhd`}, fmt.Sprintf("[%s]", filepath.FromSlash("./parent.vhd"))},
		{"absolute only", map[uint32]string{platW2ku: `C:\vms\parent.vhd`}, absOpened},
		{"file URL", nil, ""}, // set below: an absolute path here
		{"header name only", nil, "[parent.vhd]"},
		// Backslashes, as Windows writes them, out of the child's
		// folder: the child is moved to sub/ below.
		{"relative up", map[uint32]string{platW2ru: `..\parent.vhd`}, fmt.Sprintf("[%s]", filepath.FromSlash("../parent.vhd"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.name == "file URL" {
				p := filepath.ToSlash(filepath.Join(dir, "parent.vhd")) // C:/… on Windows
				c.locators = map[uint32]string{platMacX: "file:///" + strings.TrimPrefix(p, "/")}
				c.opened = fmt.Sprintf("[%s]", filepath.Join(dir, "parent.vhd"))
			}
			child, want := diffPair(t, dir, c.locators)
			if c.name == "relative up" {
				moved := filepath.Join(dir, "sub", "child.vhd")
				if err := os.Mkdir(filepath.Dir(moved), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(child, moved); err != nil {
					t.Fatal(err)
				}
				child = moved
			}
			var o opener
			f, err := os.Open(child)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Open(f, child, o.open)
			if err != nil {
				f.Close()
				t.Fatal(err)
			}
			defer d.Close()
			if fmt.Sprint(o.names) != c.opened {
				t.Errorf("opened %q, want %s", o.names, c.opened)
			}
			if d.Format() != "vhd differencing" || d.Size() != uint64(len(want)) {
				t.Errorf("Format, Size = %q, %d", d.Format(), d.Size())
			}
			got := make([]byte, len(want))
			// Odd-sized reads across bitmap runs and blocks.
			for off := 0; off < len(got); off += 70001 {
				n, err := d.ReadAt(got[off:min(off+70001, len(got))], int64(off))
				if err != nil || n != min(70001, len(got)-off) {
					t.Fatalf("ReadAt(%d) = %d, %v", off, n, err)
				}
			}
			if !bytes.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("guest bytes differ first at %d", i)
					}
				}
			}
			// Block 0 (the child's sectors and the parent's), block
			// 2's own sectors, block 3 (the same as block 0).
			wantAlloc := []vdisk.Extent{{Off: 0, End: 2 * mib}, {Off: 4 * mib, End: 4*mib + 10*512}, {Off: 6 * mib, End: 7*mib + 512}}
			if fmt.Sprint(d.Allocated()) != fmt.Sprint(wantAlloc) {
				t.Errorf("Allocated() = %v, want %v", d.Allocated(), wantAlloc)
			}
		})
	}
}

func TestDifferencingRefused(t *testing.T) {
	t.Parallel()
	loc := map[uint32]string{platW2ru: `parent.vhd`}
	try := func(t *testing.T, child string, open vdisk.Opener, unsupported bool, reason string) error {
		t.Helper()
		f, err := os.Open(child)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		d, err := Open(f, child, open)
		if err == nil {
			d.Close()
			t.Fatalf("opened %s", d.Format())
		}
		var fe *vdisk.FormatError
		if unsupported && !errors.Is(err, vdisk.ErrUnsupported) {
			t.Errorf("%v: not ErrUnsupported", err)
		}
		if !unsupported && (!errors.As(err, &fe) || fe.File != child) {
			t.Errorf("%v: not a FormatError for the child", err)
		}
		if !strings.HasPrefix(err.Error(), child+": ") || !strings.Contains(err.Error(), reason) {
			t.Errorf("error %q lacks the path or %q", err, reason)
		}
		return err
	}
	t.Run("no opener", func(t *testing.T) {
		child, _ := diffPair(t, t.TempDir(), loc)
		try(t, child, nil, true, "without a way to open its parent")
	})
	t.Run("parent missing", func(t *testing.T) {
		dir := t.TempDir()
		child, _ := diffPair(t, dir, loc)
		os.Remove(filepath.Join(dir, "parent.vhd"))
		var o opener
		if err := try(t, child, o.open, false, "no parent opened"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: not ErrNotExist", err)
		}
	})
	t.Run("unique id", func(t *testing.T) {
		dir := t.TempDir()
		child, _ := diffPair(t, dir, loc)
		p := filepath.Join(dir, "parent.vhd")
		img, _ := os.ReadFile(p)
		setID(img, [16]byte{9})
		os.WriteFile(p, img, 0o644)
		var o opener
		try(t, child, o.open, false, "is not the parent id")
	})
	t.Run("raw parent", func(t *testing.T) {
		dir := t.TempDir()
		child, _ := diffPair(t, dir, loc)
		os.WriteFile(filepath.Join(dir, "parent.vhd"), make([]byte, 4096), 0o644)
		var o opener
		try(t, child, o.open, true, "is raw, not vhd")
	})
	t.Run("blocks share file space", func(t *testing.T) {
		dir := t.TempDir()
		child, _ := diffPair(t, dir, loc)
		img, _ := os.ReadFile(child)
		// Every BAT entry at block 0's place.
		first := binary.BigEndian.Uint32(img[1536:])
		for i := 1; i < 4; i++ {
			binary.BigEndian.PutUint32(img[1536+4*i:], first)
		}
		img = img[:len(img)-2*(2*mib+512)]
		img = append(img, footer(7*mib+512, typeDiff)...)
		os.WriteFile(child, img, 0o644)
		var o opener
		try(t, child, o.open, false, "blocks share file space")
	})
}
