package vmdk

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// source returns n deterministic guest bytes, 64 KiB chunks of random
// bytes, compressible text, zeros and partly zero chunks.
func source(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	const chunk = 64 << 10
	for off := 0; off < n; off += chunk {
		c := b[off:min(off+chunk, n)]
		switch r.IntN(5) {
		case 0, 4: // zeros
		case 1:
			for i := range c {
				c[i] = byte(r.Uint32())
			}
		case 2:
			for i := 0; i < len(c); i += 64 {
				copy(c[i:], fmt.Sprintf("line %d of chunk %d: the quick brown fox      \n", i/64, off/chunk))
			}
		case 3:
			for i := range c[:min(len(c), 4096+r.IntN(8192))] {
				c[i] = byte(r.Uint32())
			}
		}
	}
	return b
}

// writeFile writes b to dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// openPath opens the VMDK at path; the test closes it.
func openPath(t testing.TB, path string) vdisk.Disk {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(f, path)
	if err != nil {
		f.Close()
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// openErr opens path and returns Open's error (nil when it opened; the
// disk is then closed).
func openErr(t testing.TB, path string) error {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(f, path)
	if err != nil {
		f.Close()
		return err
	}
	d.Close()
	return nil
}

// buildOpts says what buildSparse writes.
type buildOpts struct {
	grain    uint64 // sectors; 0 means 128 (64 KiB)
	gtes     uint32 // entries per GT; 0 means 512
	stream   bool   // compressed grains with markers
	footer   bool   // stream: GD at end (header gdOffset GD_AT_END), footer
	noGD     bool   // stream: GD_AT_END but no GD and no footer (markers only)
	zeroGTE  []int  // grains written as GTE 1 (sets the zeroed-grain flag)
	desc     string // embedded descriptor; "" writes a default one
	capacity uint64 // sectors; 0 means len(data)/512 rounded up
}

// buildSparse writes a hosted sparse extent holding data, as VMware lays
// it out: header, descriptor, GD and GTs (or, for a stream with a footer,
// grains then GTs, GD, footer and end-of-stream marker). Grains that are
// all zeros are not stored.
func buildSparse(data []byte, o buildOpts) []byte {
	le := binary.LittleEndian
	if o.grain == 0 {
		o.grain = 128
	}
	if o.gtes == 0 {
		o.gtes = 512
	}
	capacity := o.capacity
	if capacity == 0 {
		capacity = (uint64(len(data)) + sector - 1) / sector
	}
	gbytes := o.grain * sector
	ngrains := (capacity + o.grain - 1) / o.grain
	ngts := (ngrains + uint64(o.gtes) - 1) / uint64(o.gtes)
	gtSectors := (uint64(o.gtes)*4 + sector - 1) / sector
	gdSectors := (ngts*4 + sector - 1) / sector
	desc := o.desc
	if desc == "" {
		ct := "monolithicSparse"
		if o.stream {
			ct = "streamOptimized"
		}
		desc = "# Disk DescriptorFile\nversion=1\nCID=12345678\nparentCID=ffffffff\ncreateType=\"" + ct + "\"\n\n" +
			fmt.Sprintf("RW %d SPARSE \"x.vmdk\"\n", capacity)
	}
	descSectors := uint64(len(desc)+sector-1)/sector + 1
	zero := map[int]bool{}
	for _, g := range o.zeroGTE {
		zero[g] = true
	}

	var out bytes.Buffer
	pad := func() {
		for out.Len()%sector != 0 {
			out.WriteByte(0)
		}
	}
	gt := make([]uint32, ngts*uint64(o.gtes))
	gd := make([]uint32, ngts)
	hdr := func(gdOff uint64, overhead uint64) []byte {
		h := make([]byte, sector)
		copy(h, magicKDMV)
		flags := uint32(flagNLDetect)
		if len(o.zeroGTE) > 0 {
			flags |= flagZeroGrain
		}
		version := uint32(1)
		if o.stream {
			flags |= flagCompress | flagMarkers
			version = 3
		}
		le.PutUint32(h[4:], version)
		le.PutUint32(h[8:], flags)
		le.PutUint64(h[12:], capacity)
		le.PutUint64(h[20:], o.grain)
		le.PutUint64(h[28:], 1)
		le.PutUint64(h[36:], descSectors)
		le.PutUint32(h[44:], o.gtes)
		le.PutUint64(h[56:], gdOff)
		le.PutUint64(h[64:], overhead)
		copy(h[73:], "\n \r\n")
		if o.stream {
			le.PutUint16(h[77:], compressDeflate)
		}
		return h
	}
	grainData := func(g uint64) []byte {
		lo := g * gbytes
		if lo >= uint64(len(data)) {
			return nil
		}
		b := data[lo:min(lo+gbytes, uint64(len(data)), capacity*sector)]
		if bytes.Count(b, []byte{0}) == len(b) {
			return nil
		}
		return b
	}

	if !o.stream || !(o.footer || o.noGD) {
		// GD and GTs right after the descriptor, all GTs present.
		gdOff := 1 + descSectors
		gtOff := gdOff + gdSectors
		overhead := gtOff + ngts*gtSectors
		overhead = (overhead + o.grain - 1) / o.grain * o.grain
		for i := range gd {
			gd[i] = uint32(gtOff + uint64(i)*gtSectors)
		}
		out.Write(hdr(gdOff, overhead))
		out.WriteString(desc)
		out.Write(make([]byte, int(overhead*sector)-out.Len()))
		for g := uint64(0); g < ngrains; g++ {
			if zero[int(g)] {
				gt[g] = 1
				continue
			}
			b := grainData(g)
			if b == nil {
				continue
			}
			gt[g] = uint32(out.Len() / sector)
			if o.stream {
				var z bytes.Buffer
				w := zlib.NewWriter(&z)
				w.Write(b)
				w.Close()
				var m [markerHeader]byte
				le.PutUint64(m[:], g*o.grain)
				le.PutUint32(m[8:], uint32(z.Len()))
				out.Write(m[:])
				out.Write(z.Bytes())
				pad()
			} else {
				out.Write(b)
				out.Write(make([]byte, gbytes-uint64(len(b))))
			}
		}
		img := out.Bytes()
		for i, v := range gd {
			le.PutUint32(img[gdOff*sector+4*uint64(i):], v)
		}
		for i, v := range gt {
			t, j := uint64(i)/uint64(o.gtes), uint64(i)%uint64(o.gtes)
			le.PutUint32(img[(gtOff+t*gtSectors)*sector+4*j:], v)
		}
		if o.stream {
			img = append(img, make([]byte, sector)...) // end-of-stream
		}
		return img
	}

	// A stream with its metadata at the end.
	overhead := 1 + descSectors
	out.Write(hdr(gdAtEnd, overhead))
	out.WriteString(desc)
	out.Write(make([]byte, int(overhead*sector)-out.Len()))
	marker := func(val uint64, typ uint32) {
		var m [sector]byte
		le.PutUint64(m[:], val)
		le.PutUint32(m[12:], typ)
		out.Write(m[:])
	}
	for g := uint64(0); g < ngrains; g++ {
		if zero[int(g)] {
			gt[g] = 1
			continue
		}
		b := grainData(g)
		if b == nil {
			continue
		}
		gt[g] = uint32(out.Len() / sector)
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(b)
		w.Close()
		var m [markerHeader]byte
		le.PutUint64(m[:], g*o.grain)
		le.PutUint32(m[8:], uint32(z.Len()))
		out.Write(m[:])
		out.Write(z.Bytes())
		pad()
	}
	if o.noGD {
		marker(0, markerEOS)
		return out.Bytes()
	}
	for i := uint64(0); i < ngts; i++ {
		tab := gt[i*uint64(o.gtes) : (i+1)*uint64(o.gtes)]
		empty := true
		for _, v := range tab {
			empty = empty && v == 0
		}
		if empty {
			continue
		}
		marker(gtSectors, markerGT)
		gd[i] = uint32(out.Len() / sector)
		for _, v := range tab {
			binary.Write(&out, le, v)
		}
		pad()
	}
	marker(gdSectors, markerGD)
	gdOff := uint64(out.Len() / sector)
	for _, v := range gd {
		binary.Write(&out, le, v)
	}
	pad()
	marker(1, markerFooter)
	out.Write(hdr(gdOff, overhead))
	marker(0, markerEOS)
	return out.Bytes()
}

// checkBytes compares the guest bytes of d with want, in odd-sized
// reads.
func checkBytes(t *testing.T, d vdisk.Disk, want []byte) {
	t.Helper()
	if d.Size() != uint64(len(want)) {
		t.Fatalf("Size() = %d, want %d", d.Size(), len(want))
	}
	got := make([]byte, len(want))
	for off, step := 0, 0; off < len(want); step++ {
		n := min([]int{65536, 4097, 512, 200000}[step%4], len(want)-off)
		m, err := d.ReadAt(got[off:off+n], int64(off))
		if m != n || err != nil {
			t.Fatalf("ReadAt(%d at %d) = %d, %v", n, off, m, err)
		}
		off += n
	}
	if !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("guest bytes differ first at %d: %#x, want %#x", i, got[i], want[i])
			}
		}
	}
}
