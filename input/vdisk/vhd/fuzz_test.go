package vhd

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

func FuzzOpen(f *testing.F) {
	data := guestData(64*1024+512, 8)
	f.Add(buildBS(64*1024+512, 4096, data, 0, 3, 16))
	f.Add(buildBS(64*1024, 512, data, 1, 2, 100))
	f.Add(append(bytes.Clone(data[:8192]), footer(8192, typeFixed)...))
	// The one parent a fuzzed differencing disk may open.
	pdir := f.TempDir()
	pimg := buildBS(64*1024, 4096, data, 0, 5)
	setID(pimg, parentID)
	parent := filepath.Join(pdir, "parent.vhd")
	if err := os.WriteFile(parent, pimg, 0o644); err != nil {
		f.Fatal(err)
	}
	open := func(dir, name string) (vdisk.Disk, error) {
		if filepath.Base(name) != "parent.vhd" {
			return nil, os.ErrNotExist
		}
		pf, err := os.Open(parent)
		if err != nil {
			return nil, err
		}
		d, err := Open(pf, parent, nil)
		if err != nil {
			pf.Close()
		}
		return d, err
	}
	f.Add(buildChildBS(64*1024, 4096, map[int]childBlock{
		0: {[]byte{0xf0, 0x01}, data[:4096]},
		2: {[]byte{0xff}, data[8192:]},
		5: {[]byte{0x81}, data[5*4096:]},
	}, map[uint32]string{platW2ru: `.\parent.vhd`, platMacX: "file:///x/parent.vhd"}, "parent.vhd"))
	// Files go to memory when there is a tmpfs (a busy disk is slow).
	dir := f.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "vhd-fuzz"); err == nil {
		dir = shm
		f.Cleanup(func() { os.RemoveAll(shm) })
	}
	f.Fuzz(func(t *testing.T, img []byte) {
		path := filepath.Join(dir, "f.vhd")
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
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
		size := d.Size()
		var last uint64
		for i, e := range d.Allocated() {
			if e.Off >= e.End || e.End > size || (i > 0 && e.Off <= last) {
				t.Fatalf("Allocated() = %v: not sorted, disjoint and within %d", d.Allocated(), size)
			}
			last = e.End
		}
		// Read the first and last 64 KiB: zeros outside Allocated.
		buf := make([]byte, 64<<10)
		for _, off := range []uint64{0, size - min(size, 64<<10)} {
			n, err := d.ReadAt(buf, int64(off))
			want := min(uint64(len(buf)), size-off)
			if uint64(n) != want || (err != nil && err != io.EOF) {
				t.Fatalf("ReadAt(%d) = %d, %v; want %d", off, n, err, want)
			}
			for k := uint64(0); k < want; k += 512 {
				if !inside(d.Allocated(), off+k) && buf[k] != 0 {
					t.Fatalf("byte %d outside Allocated is %#x", off+k, buf[k])
				}
			}
		}
	})
}

func inside(l []vdisk.Extent, x uint64) bool {
	for _, e := range l {
		if x >= e.Off && x < e.End {
			return true
		}
	}
	return false
}
