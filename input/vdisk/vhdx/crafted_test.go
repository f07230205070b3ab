package vhdx

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

// mixed builds a dynamic image of 7 blocks of 1 MiB (the last one
// partial) in every payload state a disk without parent has, from data:
// 0 and 5-6 present, 1 zero, 2 not present, 3 undefined, 4 unmapped.
func mixed(ss uint64, data []byte) *builder {
	size := uint64(len(data))
	b := newBuilder(size, mib)
	b.ss = ss
	b.blocks[0] = blk{stFullyPresent, data[:mib]}
	b.blocks[1] = blk{state: stZero}
	b.blocks[3] = blk{state: stUndefined}
	b.blocks[4] = blk{state: stUnmapped}
	b.blocks[5] = blk{stFullyPresent, data[5*mib : 6*mib]}
	b.blocks[6] = blk{stFullyPresent, data[6*mib:]}
	return b
}

// mixedWant is what mixed reads as: data where blocks are present.
func mixedWant(data []byte) []byte {
	w := bytes.Clone(data)
	clear(w[mib : 5*mib])
	return w
}

// TestBuilderQemu reads images of the test builder with qemu-img too:
// every non-parent block state; 4096-byte sectors only against the bytes
// written, as qemu 7.2 does not open them.
func TestBuilderQemu(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	for _, ss := range []uint64{512, 4096} {
		t.Run(fmt.Sprint(ss), func(t *testing.T) {
			data := guestData(6*mib+2*int(ss), ss)
			p := write(t, t.TempDir(), "m.vhdx", mixed(ss, data).bytes())
			d := openFile(t, p, nil)
			want := []vdisk.Extent{{Off: 0, End: mib}, {Off: 5 * mib, End: uint64(len(data))}}
			if ss == 512 {
				check(t, p, d, "vhdx dynamic", want)
			} else if fmt.Sprint(d.Allocated()) != fmt.Sprint(want) {
				// qemu 7.2 refuses 4096-byte logical sectors (ENOTSUP).
				t.Errorf("Allocated() = %v, want %v", d.Allocated(), want)
			}
			if got := readAll(t, d); !bytes.Equal(got, mixedWant(data)) {
				t.Errorf("guest bytes are not the blocks written")
			}
		})
	}
}

func readAll(t testing.TB, d vdisk.Disk) []byte {
	t.Helper()
	b := make([]byte, d.Size()+100)
	n, err := d.ReadAt(b, 0)
	if uint64(n) != d.Size() || err != io.EOF {
		t.Fatalf("ReadAt(all) = %d, %v; want %d, EOF", n, err, d.Size())
	}
	return b[:n]
}

// opener opens parents as the scan's opener would: VHDX by content, raw
// otherwise; it counts opens.
type opener struct {
	mu    sync.Mutex
	names []string
}

func (o *opener) open(dir, name string) (vdisk.Disk, error) {
	o.mu.Lock()
	o.names = append(o.names, name)
	o.mu.Unlock()
	name = vdisk.Join(dir, name) // as input/guest's opener
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	var sig [8]byte
	f.ReadAt(sig[:], 0)
	if !Detect(sig[:]) {
		f.Close()
		return vdisk.OpenRaw(name)
	}
	d, err := Open(f, name, o.open)
	if err != nil {
		f.Close()
	}
	return d, err
}

const linkGUID = "{01234567-89ab-cdef-0123-456789abcdef}"

// diffPair writes a parent (7 MiB, blocks 0-5 present with parentData)
// and a differencing child of it to dir; child blocks: 0 present, 1 not
// present (the parent's), 2 zero (hides the parent's), 3 partially
// present, 4 undefined, 5 partially present with only its first sector,
// 6 not present (the parent's zero block). It returns the child's path
// and the guest bytes expected.
func diffPair(t *testing.T, dir string, locator [][2]string) (string, []byte) {
	const size = 7 * mib
	pdata := guestData(size, 99)
	for i := range pdata[:6*mib] {
		if pdata[i] == 0 {
			pdata[i] = 0x5a // parent blocks 0-5 have no zeros
		}
	}
	clear(pdata[6*mib:])
	pb := newBuilder(size, mib)
	for i := range uint64(6) {
		pb.blocks[i] = blk{stFullyPresent, pdata[i*mib : (i+1)*mib]}
	}
	pb.blocks[6] = blk{state: stZero}
	write(t, dir, "parent.vhdx", pb.bytes())

	cdata := guestData(size, 100)
	cb := newBuilder(size, mib)
	cb.parent = true
	cb.locator = locator
	cb.dataGUID = mustGUID("ffffffff-0000-0000-0000-000000000001")
	cb.blocks[0] = blk{stFullyPresent, cdata[:mib]}
	cb.blocks[2] = blk{state: stZero}
	cb.blocks[3] = blk{stPartially, cdata[3*mib : 4*mib]}
	cb.blocks[4] = blk{state: stUndefined}
	cb.blocks[5] = blk{stPartially, cdata[5*mib : 6*mib]}
	// Block 3: sectors 0-9 from the child, 10-2047 the parent's except
	// 100-101, 2000 and 2047.
	bm := make([]byte, mib/512/8)
	setBits(bm, 0, 10)
	setBits(bm, 100, 102)
	setBits(bm, 2000, 2001)
	setBits(bm, 2047, 2048)
	cb.bitmaps[3] = bm
	bm5 := make([]byte, mib/512/8)
	setBits(bm5, 0, 1)
	cb.bitmaps[5] = bm5
	child := write(t, dir, "child.vhdx", cb.bytes())

	want := make([]byte, size)
	copy(want[:mib], cdata)
	copy(want[mib:2*mib], pdata[mib:])
	// block 2: zeros
	copy(want[3*mib:4*mib], pdata[3*mib:])
	for _, r := range [][2]int{{0, 10}, {100, 102}, {2000, 2001}, {2047, 2048}} {
		copy(want[3*mib+r[0]*512:3*mib+r[1]*512], cdata[3*mib+r[0]*512:])
	}
	// block 4: zeros
	copy(want[5*mib:6*mib], pdata[5*mib:])
	copy(want[5*mib:5*mib+512], cdata[5*mib:])
	return child, want
}

func setBits(bm []byte, lo, hi int) {
	for i := lo; i < hi; i++ {
		bm[i/8] |= 1 << (i % 8)
	}
}

// TestDifferencing reads a crafted differencing disk over a crafted
// parent, against bytes and allocation composed by hand (qemu 7.2 does
// not read differencing VHDX).
func TestDifferencing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child, want := diffPair(t, dir, [][2]string{
		{"parent_linkage", linkGUID},
		{"relative_path", `.\parent.vhdx`},
		{"absolute_win32_path", `C:\vms\elsewhere\parent.vhdx`},
	})
	var o opener
	d := openFile(t, child, o.open)
	if d.Format() != "vhdx differencing" || d.Size() != 7*mib {
		t.Errorf("Format, Size = %q, %d", d.Format(), d.Size())
	}
	if fmt.Sprint(o.names) != fmt.Sprint([]string{filepath.FromSlash("./parent.vhdx")}) {
		t.Errorf("opened %q, want the relative_path", o.names)
	}
	got := readAll(t, d)
	if !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("guest bytes differ first at %d", i)
			}
		}
	}
	// Odd-sized reads across sector runs and blocks.
	sum := vdisktest.DiskSum(t, d)
	if sum != sha(want) {
		t.Errorf("DiskSum differs from the expected bytes")
	}
	wantAlloc := []vdisk.Extent{
		{Off: 0, End: 2 * mib},       // child block 0, parent block 1
		{Off: 3 * mib, End: 4 * mib}, // block 3: child sectors and parent's
		{Off: 5 * mib, End: 6 * mib}, // block 5: the same
	}
	if fmt.Sprint(d.Allocated()) != fmt.Sprint(wantAlloc) {
		t.Errorf("Allocated() = %v, want %v", d.Allocated(), wantAlloc)
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}

// TestDifferencingBackslashes: a child whose relative_path climbs out of
// its folder with backslashes, as Windows writes it, finds its parent
// there on every system, whatever the working directory.
func TestDifferencingBackslashes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	kids := filepath.Join(dir, "vms", "kids")
	for _, d := range []string{base, kids} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rel := `..\..\base\parent.vhdx`
	made, want := diffPair(t, base, [][2]string{
		{"parent_linkage", linkGUID},
		{"relative_path", rel},
		{"absolute_win32_path", `C:\elsewhere\parent.vhdx`},
	})
	child := filepath.Join(kids, "child.vhdx")
	if err := os.Rename(made, child); err != nil {
		t.Fatal(err)
	}
	var o opener
	d := openFile(t, child, o.open)
	defer d.Close()
	if w := filepath.FromSlash("../../base/parent.vhdx"); fmt.Sprint(o.names) != fmt.Sprint([]string{w}) {
		t.Errorf("opened %q, want [%s]", o.names, w)
	}
	if !bytes.Equal(readAll(t, d), want) {
		t.Errorf("guest bytes differ")
	}
}

// TestDifferencingOwnAllocation: over a parent with holes, a partially
// present block allocates only this file's sectors.
func TestDifferencingOwnAllocation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pb := newBuilder(2*mib, mib)
	pdata := bytes.Repeat([]byte{7}, mib)
	pb.blocks[1] = blk{stFullyPresent, pdata}
	write(t, dir, "p.vhdx", pb.bytes())
	cb := newBuilder(2*mib, mib)
	cb.parent = true
	vol := `\\?\Volume{26a21bda-a627-11d7-9931-806e6f6e6963}\vms\p.vhdx`
	cb.locator = [][2]string{{"parent_linkage", linkGUID}, {"volume_path", vol}}
	cb.blocks[0] = blk{stPartially, bytes.Repeat([]byte{9}, mib)}
	bm := make([]byte, mib/512/8)
	setBits(bm, 8, 16)
	setBits(bm, 2040, 2048)
	cb.bitmaps[0] = bm
	child := write(t, dir, "c.vhdx", cb.bytes())
	var o opener
	d := openFile(t, child, o.open)
	wantNames := []string{"p.vhdx"}
	if runtime.GOOS == "windows" {
		wantNames = []string{vol, "p.vhdx"} // a path there, of no volume here
	}
	if fmt.Sprint(o.names) != fmt.Sprint(wantNames) {
		t.Errorf("opened %q, want %q", o.names, wantNames)
	}
	wantAlloc := []vdisk.Extent{{Off: 8 * 512, End: 16 * 512}, {Off: 2040 * 512, End: 2 * mib}}
	if fmt.Sprint(d.Allocated()) != fmt.Sprint(wantAlloc) {
		t.Errorf("Allocated() = %v, want %v", d.Allocated(), wantAlloc)
	}
	want := make([]byte, 2*mib)
	for _, e := range wantAlloc {
		for i := e.Off; i < e.End; i++ {
			want[i] = 9
		}
	}
	copy(want[mib:], pdata)
	if !bytes.Equal(readAll(t, d), want) {
		t.Errorf("guest bytes differ")
	}
}

func TestDifferencingRefused(t *testing.T) {
	t.Parallel()
	loc := [][2]string{{"parent_linkage", linkGUID}, {"relative_path", `parent.vhdx`}}
	t.Run("no opener", func(t *testing.T) {
		child, _ := diffPair(t, t.TempDir(), loc)
		wantErr(t, child, nil, true, "opened without a way to open its parent")
	})
	t.Run("parent missing", func(t *testing.T) {
		dir := t.TempDir()
		child, _ := diffPair(t, dir, loc)
		os.Remove(filepath.Join(dir, "parent.vhdx"))
		var o opener
		err := wantErr(t, child, o.open, false, "no parent opened")
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: not ErrNotExist", err)
		}
	})
	t.Run("linkage", func(t *testing.T) {
		child, _ := diffPair(t, t.TempDir(), [][2]string{{"parent_linkage", "{01234567-89ab-cdef-0123-456789abcdee}"}, {"relative_path", "parent.vhdx"}})
		var o opener
		wantErr(t, child, o.open, false, "is not the parent_linkage")
	})
	t.Run("raw parent", func(t *testing.T) {
		dir := t.TempDir()
		child, _ := diffPair(t, dir, loc)
		os.WriteFile(filepath.Join(dir, "parent.vhdx"), make([]byte, 7*mib), 0o644)
		var o opener
		wantErr(t, child, o.open, true, "is raw, not vhdx")
	})
	t.Run("no linkage", func(t *testing.T) {
		child, _ := diffPair(t, t.TempDir(), loc[1:])
		var o opener
		wantErr(t, child, o.open, false, "without parent_linkage")
	})
}

// wantErr opens path, wants an error naming it: ErrUnsupported when
// unsupported, else a *vdisk.FormatError for path; the message must hold
// reason.
func wantErr(t *testing.T, path string, open vdisk.Opener, unsupported bool, reason string) error {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := Open(f, path, open)
	if err == nil {
		d.Close()
		t.Fatalf("%s: opened (%s)", path, d.Format())
	}
	var fe *vdisk.FormatError
	switch {
	case unsupported && !errors.Is(err, vdisk.ErrUnsupported):
		t.Errorf("%v: not ErrUnsupported", err)
	case !unsupported && (!errors.As(err, &fe) || fe.File != path):
		t.Errorf("%v: not a FormatError for %s", err, path)
	}
	if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), reason) {
		t.Errorf("error %q does not start with the path or lacks %q", err, reason)
	}
	return err
}

func sha(b []byte) [32]byte { return sha256.Sum256(b) }

// TestConcurrentRead reads a differencing disk from several goroutines
// (run with -race).
func TestConcurrentRead(t *testing.T) {
	t.Parallel()
	child, want := diffPair(t, t.TempDir(), [][2]string{{"parent_linkage", linkGUID}, {"relative_path", "parent.vhdx"}})
	var o opener
	d := openFile(t, child, o.open)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			buf := make([]byte, 70000+g*4096)
			for off := int64(g * 777); off < int64(len(want)); off += int64(len(buf)) {
				n, err := d.ReadAt(buf, off)
				if (err != nil && err != io.EOF) || !bytes.Equal(buf[:n], want[off:off+int64(n)]) {
					t.Errorf("ReadAt(%d) = %d, %v: bytes differ", off, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
