package vmdk

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// fuzzSeeds are small images of each kind: 16 KiB of data in 4 KiB
// grains, two entries per grain table.
func fuzzSeeds() [][]byte {
	data := source(16<<10, 21)
	copy(data[5000:], "some text in a grain")
	o := buildOpts{grain: 8, gtes: 2}
	seeds := [][]byte{buildSparse(data, o)}
	for _, v := range []buildOpts{{stream: true}, {stream: true, footer: true}, {stream: true, noGD: true}, {zeroGTE: []int{1, 3}}} {
		v.grain, v.gtes = o.grain, o.gtes
		seeds = append(seeds, buildSparse(data, v))
	}
	seeds = append(seeds,
		[]byte("# Disk DescriptorFile\nversion=1\nCID=fffffffe\nparentCID=ffffffff\ncreateType=\"monolithicFlat\"\nRW 4 FLAT \"img\" 1\nRW 3 ZERO\n"),
		[]byte("# Disk DescriptorFile\nversion=1\ncreateType=\"twoGbMaxExtentSparse\"\nRW 32 SPARSE \"img\"\n"),
		buildSparse(data, buildOpts{grain: 8, gtes: 2, zeroGTE: []int{2},
			desc: "# Disk DescriptorFile\nCID=1\nparentCID=1\ncreateType=\"monolithicSparse\"\nparentFileNameHint=\"img\"\n"}),
	)
	return seeds
}

// FuzzOpen opens arbitrary bytes as a VMDK (named "img", so that a
// descriptor can name itself as an extent), reads all of it when it
// opens and is at most 64 MiB, and checks the Disk's promises: errors
// are FormatErrors or refusals, Allocated is sorted, disjoint, merged
// and within Size, and bytes outside it read as zeros.
func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "img")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Open(fh, path)
		if err != nil {
			fh.Close()
			var fe *vdisk.FormatError
			if !errors.As(err, &fe) && !errors.Is(err, vdisk.ErrUnsupported) {
				t.Fatalf("error %v (%T) is neither a FormatError nor a refusal", err, err)
			}
			return
		}
		defer d.Close()
		alloc := d.Allocated()
		var prev uint64
		for i, e := range alloc {
			if e.Off >= e.End || e.End > d.Size() || (i > 0 && e.Off <= prev) {
				t.Fatalf("Allocated() = %v: not sorted, merged and within %d", alloc, d.Size())
			}
			prev = e.End
		}
		if d.Size() > 64<<20 {
			return
		}
		// Read in 1 MiB chunks; bytes in the gaps of Allocated must be
		// zeros.
		buf := make([]byte, 1<<20)
		zero := make([]byte, len(buf))
		gaps := gapsOf(alloc, d.Size())
		for off := uint64(0); off < d.Size(); off += uint64(len(buf)) {
			b := buf[:min(uint64(len(buf)), d.Size()-off)]
			n, err := d.ReadAt(b, int64(off))
			if err != nil {
				var fe *vdisk.FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("ReadAt: %v (%T) is not a FormatError", err, err)
				}
				return
			}
			if n != len(b) {
				t.Fatalf("ReadAt = %d, want %d", n, len(b))
			}
			end := off + uint64(len(b))
			for _, g := range gaps {
				lo, hi := max(g.Off, off), min(g.End, end)
				if lo < hi && !bytes.Equal(b[lo-off:hi-off], zero[:hi-lo]) {
					t.Fatalf("bytes in [%d, %d) outside Allocated() %v are not zeros", lo, hi, alloc)
				}
			}
		}
	})
}

// gapsOf returns the ranges of [0, size) outside alloc.
func gapsOf(alloc []vdisk.Extent, size uint64) []vdisk.Extent {
	var gaps []vdisk.Extent
	var off uint64
	for _, e := range append(alloc, vdisk.Extent{Off: size, End: size}) {
		if off < e.Off {
			gaps = append(gaps, vdisk.Extent{Off: off, End: e.Off})
		}
		off = e.End
	}
	return gaps
}

// FuzzDescriptor parses arbitrary descriptor text: no panic, and what it
// accepts is well formed.
func FuzzDescriptor(f *testing.F) {
	for _, s := range fuzzSeeds()[5:] {
		f.Add(s)
	}
	f.Add([]byte("createType=\"vmfs\"\nRW 6144 VMFS \"a b.vmdk\"\nRDONLY 1 FLAT \"x\" 99\nencryption.keySafe = \"k\"\nparentFileNameHint=\"p\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		isDescriptorText(b)
		parseEmbedded(b)
		d, err := parseDescriptor(b)
		if err != nil {
			return
		}
		if d.createType == "" || len(d.extents) > maxExtents {
			t.Fatalf("accepted %+v", d)
		}
		for _, e := range d.extents {
			if e.sectors == 0 || (e.file == "" && e.typ != "ZERO") {
				t.Fatalf("accepted extent %+v", e)
			}
		}
	})
}
