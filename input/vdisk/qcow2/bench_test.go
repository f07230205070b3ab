package qcow2

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

// The benchmarks read the same 8 MiB source (random, text-like and zero
// blocks; see source) as a qcow2 image of compressed clusters and as the
// raw file, in 1 MiB reads, so that the cost of decompression is the
// difference. SetBytes is the guest size.

func benchRead(b *testing.B, d vdisk.Disk) {
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(d.Size()))
	for b.Loop() {
		for off := int64(0); off < int64(d.Size()); off += int64(len(buf)) {
			if _, err := d.ReadAt(buf, off); err != nil && err != io.EOF {
				b.Fatal(err)
			}
		}
	}
}

func benchImage(b *testing.B, args ...string) (raw, img string) {
	vdisktest.QemuImg(b)
	dir := b.TempDir()
	raw = source(b, dir, 8*mib, 9)
	if args == nil {
		return raw, ""
	}
	img = filepath.Join(dir, "b.qcow2")
	vdisktest.Run(b, append(append([]string{"convert", "-O", "qcow2"}, args...), raw, img)...)
	return raw, img
}

func BenchmarkReadCompressed(b *testing.B) {
	for _, c := range []struct{ name, opts string }{
		{"zlib", "cluster_size=64k"},
		{"zstd", "cluster_size=64k,compression_type=zstd"},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, img := benchImage(b, "-c", "-o", c.opts)
			d, err := openImage(b, img)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			benchRead(b, d)
		})
	}
}

func BenchmarkReadRaw(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		raw, _ := benchImage(b)
		d, err := vdisk.OpenRaw(raw)
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		benchRead(b, d)
	})
	b.Run("qcow2", func(b *testing.B) { // uncompressed clusters
		_, img := benchImage(b, "-o", "cluster_size=64k")
		d, err := openImage(b, img)
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		benchRead(b, d)
	})
}
