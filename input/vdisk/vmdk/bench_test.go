package vmdk

import (
	"io"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// BenchmarkReadStreamOptimized reads 8 MiB of mixed data (random,
// text, zeros) from a streamOptimized image in 1 MiB reads and in 8 KiB
// reads (a scan's records of a small volblocksize), against the same
// bytes in a monolithicSparse image and a raw file. The bytes per second
// count all guest bytes; about 2/5 of the 64 KiB chunks are zeros, not
// stored. Each pass starts with the grain cache empty (it could hold
// the whole 8 MiB).
func BenchmarkReadStreamOptimized(b *testing.B) {
	data := source(8<<20, 31)
	dir := b.TempDir()
	images := []struct {
		name string
		open func() vdisk.Disk
	}{
		{"stream", func() vdisk.Disk {
			return openPath(b, writeFile(b, dir, "s.vmdk", buildSparse(data, buildOpts{stream: true, footer: true})))
		}},
		{"sparse", func() vdisk.Disk { return openPath(b, writeFile(b, dir, "m.vmdk", buildSparse(data, buildOpts{}))) }},
		{"raw", func() vdisk.Disk {
			d, err := vdisk.OpenRaw(writeFile(b, dir, "r.raw", data))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { d.Close() })
			return d
		}},
	}
	for _, im := range images {
		d := im.open()
		for _, rs := range []struct {
			name string
			size int
		}{{"1MiB", 1 << 20}, {"8KiB", 8 << 10}} {
			b.Run(im.name+"/"+rs.name, func(b *testing.B) {
				buf := make([]byte, rs.size)
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					cold(d)
					for off := int64(0); off < int64(d.Size()); off += int64(len(buf)) {
						if _, err := d.ReadAt(buf, off); err != nil && err != io.EOF {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// cold empties d's cache of decompressed grains, when d is a VMDK.
func cold(d vdisk.Disk) {
	if c, ok := d.(*disk); ok {
		c.grains.mu.Lock()
		c.grains.m, c.grains.bytes = nil, 0
		c.grains.l.Init()
		c.grains.mu.Unlock()
	}
}
