package qcow2

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

// built describes a small image made by build, without qemu.
type built struct {
	v2, zstd, extL2 bool
}

// build writes a qcow2 image by hand, following the spec: 16 guest
// clusters (512 B, or 16 KiB with extended L2 entries) of which a few
// are data, zero, compressed or unallocated; it returns the image and
// the guest bytes and allocation it must read as.
func build(t testing.TB, o built) (img, guest []byte, alloc []vdisk.Extent) {
	t.Helper()
	bits := uint(9)
	if o.extL2 {
		bits = 14
	}
	cs := 1 << bits
	const nclusters = 16
	size := nclusters * cs
	guest = make([]byte, size)
	img = make([]byte, 6*cs)
	put64 := func(off int, v uint64) { be.PutUint64(img[off:], v) }
	// header (spec: Header)
	copy(img, magic)
	version, hlen := uint32(3), uint32(104)
	if o.v2 {
		version, hlen = 2, 72
	}
	var incompat uint64
	if o.zstd {
		incompat |= incCompression
		hlen = 112
		img[104] = 1
	}
	if o.extL2 {
		incompat |= incExtendedL2
	}
	be.PutUint32(img[4:], version)
	be.PutUint32(img[20:], uint32(bits))
	put64(24, uint64(size))
	be.PutUint32(img[36:], 1) // l1_size
	put64(40, uint64(cs))     // l1_table_offset: cluster 1
	put64(48, uint64(5*cs))   // refcount_table_offset (not read)
	be.PutUint32(img[56:], 1) // refcount_table_clusters
	if !o.v2 {
		put64(72, incompat)
		be.PutUint32(img[96:], 4)
		be.PutUint32(img[100:], hlen)
	}
	put64(cs, 1<<63|uint64(2*cs)) // L1[0] -> L2 table in cluster 2
	l2 := 2 * cs
	esize := 8
	if o.extL2 {
		esize = 16
	}
	pattern := func(b []byte, seed byte) {
		for i := range b {
			b[i] = seed + byte(i*7/5)
		}
	}
	// data clusters 3 and 4
	pattern(img[3*cs:4*cs], 1)
	pattern(img[4*cs:5*cs], 2)
	normal := func(gc, hc int) {
		put64(l2+gc*esize, 1<<63|uint64(hc*cs))
		if o.extL2 {
			put64(l2+gc*esize+8, 0xffffffff)
		}
		copy(guest[gc*cs:], img[hc*cs:(hc+1)*cs])
		alloc = vdisk.Merge(alloc, vdisk.Extent{Off: uint64(gc * cs), End: uint64((gc + 1) * cs)})
	}
	normal(0, 3)
	// guest cluster 1: zero (v3 only; v2 leaves it unallocated)
	if !o.v2 && !o.extL2 {
		put64(l2+1*esize, l2Zero)
	}
	// guest cluster 2 and 5: compressed, appended to the file at
	// unaligned offsets
	compress := func(gc int, seed byte) {
		plain := make([]byte, cs)
		pattern(plain, seed)
		var c []byte
		if o.zstd {
			enc, err := zstd.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			c = enc.EncodeAll(plain, nil)
		} else {
			var buf bytes.Buffer
			w, _ := flate.NewWriter(&buf, 6)
			w.Write(plain)
			w.Close()
			c = buf.Bytes()
		}
		off := len(img) + 7
		img = append(img, make([]byte, 7)...)
		img = append(img, c...)
		x := 62 - (bits - 8)
		extra := uint64((off%512+len(c)+511)/512 - 1)
		put64(l2+gc*esize, 1<<62|extra<<x|uint64(off))
		copy(guest[gc*cs:], plain)
		alloc = vdisk.Merge(alloc, vdisk.Extent{Off: uint64(gc * cs), End: uint64((gc + 1) * cs)})
	}
	compress(2, 3)
	normal(4, 4)
	compress(5, 4)
	if o.extL2 {
		// guest cluster 7 -> host cluster 4: subclusters 0-3 allocated,
		// 4-7 zero, the rest unallocated
		sub := cs / 32
		put64(l2+7*esize, 1<<63|uint64(4*cs))
		put64(l2+7*esize+8, 0xf0<<32|0x0f)
		copy(guest[7*cs:7*cs+4*sub], img[4*cs:])
		alloc = vdisk.Merge(alloc, vdisk.Extent{Off: uint64(7 * cs), End: uint64(7*cs + 4*sub)})
	}
	return img, guest, alloc
}

var builds = []built{{}, {v2: true}, {zstd: true}, {extL2: true}, {extL2: true, zstd: true}}

// TestBuilt reads images written by hand (no qemu needed) and compares
// with the bytes and allocation they were built from.
func TestBuilt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, o := range builds {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			img, guest, alloc := build(t, o)
			p := filepath.Join(dir, "built.qcow2")
			if err := os.WriteFile(p, img, 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := openImage(t, p)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			got := make([]byte, d.Size()+100)
			n, err := d.ReadAt(got, 0)
			if n != len(guest) || err != io.EOF {
				t.Fatalf("ReadAt = %d, %v; want %d, EOF", n, err, len(guest))
			}
			if !bytes.Equal(got[:n], guest) {
				t.Error("guest bytes differ")
			}
			if fmt.Sprint(d.Allocated()) != fmt.Sprint(alloc) {
				t.Errorf("Allocated() = %v, want %v", d.Allocated(), alloc)
			}
			if _, err := exec.LookPath("qemu-img"); err == nil {
				// and qemu reads the hand-made image the same way
				vdisktest.Check(t, p, "qcow2", d)
			}
		})
	}
}

// FuzzOpen opens arbitrary bytes as an image and reads the whole disk
// (when at most 64 MiB): errors are fine, panics and hangs are not.
// Backing files are refused (the fuzzer would name arbitrary files).
// The seeds are up to 100 KiB (16 KiB clusters for extended L2 entries),
// so -fuzzminimizetime 5s keeps the fuzzer from spending a minute
// minimizing each new input.
func FuzzOpen(f *testing.F) {
	for _, o := range builds {
		img, _, _ := build(f, o)
		f.Add(img)
	}
	noBacking := func(dir, name string) (vdisk.Disk, error) {
		return nil, errors.New("no backing files while fuzzing")
	}
	// one file and one buffer for all inputs: a worker runs them one
	// at a time, and the fuzzer minimizes with many short runs.
	p := filepath.Join(f.TempDir(), "f.qcow2")
	buf := make([]byte, 1<<20)
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		d, err := Open(fh, p, noBacking)
		if err != nil {
			fh.Close()
			var fe *vdisk.FormatError
			if !errors.As(err, &fe) && !errors.Is(err, vdisk.ErrUnsupported) {
				t.Fatalf("error neither FormatError nor ErrUnsupported: %v", err)
			}
			return
		}
		defer d.Close()
		alloc := d.Allocated()
		for i, e := range alloc {
			if e.Off >= e.End || e.End > d.Size() || (i > 0 && e.Off <= alloc[i-1].End) {
				t.Fatalf("Allocated() not sorted, disjoint and within %d: %v", d.Size(), alloc)
			}
		}
		if d.Size() <= 64<<20 {
			for off := int64(0); off < int64(d.Size()); off += int64(len(buf)) {
				if _, err := d.ReadAt(buf, off); err != nil && err != io.EOF {
					break
				}
			}
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("took %v", el)
		}
	})
}
