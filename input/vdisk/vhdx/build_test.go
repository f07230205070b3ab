package vhdx

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"
)

// builder writes VHDX images from scratch, laid out as qemu does: header
// section, a 1 MiB log at 1 MiB, the BAT at 2 MiB, 1 MiB of metadata,
// then payload and sector bitmap blocks. Tests read its images with
// qemu-img too (for what qemu reads), so the builder is checked as well.
type builder struct {
	size     uint64
	bs, ss   uint64
	fixed    bool
	parent   bool
	blocks   map[uint64]blk    // payload block states and data
	bitmaps  map[uint64][]byte // sector bitmap of each PARTIALLY_PRESENT block
	locator  [][2]string       // parent locator keys and values
	dataGUID guid              // DataWriteGuid
	logGUID  guid
	logEntry bool              // write a valid log entry
	badEntry bool              // write a log entry with a bad checksum
	extraReg bool              // an unknown required region
	extraMD  bool              // an unknown required metadata item
	rawBAT   map[uint64]uint64 // BAT entries (by BAT index) to write as given
}

type blk struct {
	state uint64
	data  []byte // FULLY/PARTIALLY_PRESENT: the block's bytes
}

func newBuilder(size, bs uint64) *builder {
	return &builder{size: size, bs: bs, ss: 512, blocks: map[uint64]blk{}, bitmaps: map[uint64][]byte{},
		dataGUID: mustGUID("01234567-89ab-cdef-0123-456789abcdef")}
}

func (b *builder) chunkRatio() uint64 { return sectorsPerSB * b.ss / b.bs }

func (b *builder) entries() uint64 {
	nb := (b.size + b.bs - 1) / b.bs
	cr := b.chunkRatio()
	if nb == 0 {
		return 0
	}
	if b.parent {
		return (nb + cr - 1) / cr * (cr + 1)
	}
	return nb + (nb-1)/cr
}

func putCRC(buf []byte) {
	binary.LittleEndian.PutUint32(buf[4:], 0)
	binary.LittleEndian.PutUint32(buf[4:], crc32.Checksum(buf, castagnoli))
}

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	p := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(p[2*i:], c)
	}
	return p
}

const (
	bLogOff = 1 * mib
	bBATOff = 2 * mib
)

func (b *builder) metaOff() uint64 { return bBATOff + b.batLen() }
func (b *builder) batLen() uint64  { return max((b.entries()*8+mib-1)/mib*mib, mib) }

// header writes header 1 (seq 10) and 2 (seq 11, current).
func (b *builder) header(img []byte, off int, seq uint64) {
	h := img[off : off+headerSize]
	copy(h, "head")
	binary.LittleEndian.PutUint64(h[8:], seq)
	copy(h[16:], "file-write-guid!")
	copy(h[32:], b.dataGUID[:])
	copy(h[48:], b.logGUID[:])
	binary.LittleEndian.PutUint16(h[66:], 1)
	binary.LittleEndian.PutUint32(h[68:], mib)
	binary.LittleEndian.PutUint64(h[72:], bLogOff)
	putCRC(h)
}

func (b *builder) bytes() []byte {
	cr := b.chunkRatio()
	spb := b.bs / b.ss
	// Payload after the metadata, 1 MiB aligned; sector bitmaps after.
	next := b.metaOff() + mib
	bat := map[uint64]uint64{}
	var payload []struct {
		off  uint64
		data []byte
	}
	nb := (b.size + b.bs - 1) / b.bs
	sbs := map[uint64][]byte{}
	for i := range nb {
		k, ok := b.blocks[i]
		if !ok {
			continue
		}
		e := k.state
		if k.data != nil {
			e |= next
			payload = append(payload, struct {
				off  uint64
				data []byte
			}{next, k.data})
			next += (uint64(len(k.data)) + mib - 1) / mib * mib
		}
		bat[i+i/cr] = e
		if bm, ok := b.bitmaps[i]; ok {
			c := i / cr
			if sbs[c] == nil {
				sbs[c] = make([]byte, mib)
			}
			copy(sbs[c][(i%cr)*spb/8:], bm)
		}
	}
	for c, sb := range sbs {
		bat[c*(cr+1)+cr] = next | sbPresent
		payload = append(payload, struct {
			off  uint64
			data []byte
		}{next, sb})
		next += mib
	}
	for k, v := range b.rawBAT {
		bat[k] = v
	}
	img := make([]byte, next)
	copy(img, "vhdxfile")
	copy(img[8:], utf16le("ddtsim test"))
	b.header(img, header1Off, 10)
	b.header(img, header2Off, 11)
	// Region tables.
	rt := img[region1Off : region1Off+regionSize]
	copy(rt, "regi")
	n := uint32(2)
	copy(rt[16:], batGUID[:])
	binary.LittleEndian.PutUint64(rt[32:], bBATOff)
	binary.LittleEndian.PutUint32(rt[40:], uint32(b.batLen()))
	binary.LittleEndian.PutUint32(rt[44:], 1)
	copy(rt[48:], metadataGUID[:])
	binary.LittleEndian.PutUint64(rt[64:], b.metaOff())
	binary.LittleEndian.PutUint32(rt[72:], mib)
	binary.LittleEndian.PutUint32(rt[76:], 1)
	if b.extraReg {
		copy(rt[80:], "some-new-region!")
		binary.LittleEndian.PutUint64(rt[96:], next-mib)
		binary.LittleEndian.PutUint32(rt[104:], mib)
		binary.LittleEndian.PutUint32(rt[108:], 1)
		n++
	}
	binary.LittleEndian.PutUint32(rt[8:], n)
	putCRC(rt)
	copy(img[region2Off:], rt)
	// BAT.
	for k, v := range bat {
		binary.LittleEndian.PutUint64(img[bBATOff+8*k:], v)
	}
	// Metadata.
	mo := b.metaOff()
	md := img[mo : mo+mib]
	copy(md, "metadata")
	items := []struct {
		g    guid
		data []byte
	}{
		{fileParamsGUID, le32s(uint32(b.bs), flags(b.fixed, b.parent))},
		{virtualSizeGUID, le64(b.size)},
		{page83GUID, []byte("page-83-data-sn!")},
		{logicalSectGUID, le32s(uint32(b.ss))},
		{physicalSectGUID, le32s(4096)},
	}
	if b.parent {
		items = append(items, struct {
			g    guid
			data []byte
		}{parentLocGUID, b.locatorItem()})
	}
	if b.extraMD {
		items = append(items, struct {
			g    guid
			data []byte
		}{guid([]byte("some-new-item!!!")), []byte{1, 2, 3, 4}})
	}
	binary.LittleEndian.PutUint16(md[10:], uint16(len(items)))
	off := uint32(metaTableSize)
	for i, it := range items {
		e := md[32+32*i:]
		copy(e, it.g[:])
		binary.LittleEndian.PutUint32(e[16:], off)
		binary.LittleEndian.PutUint32(e[20:], uint32(len(it.data)))
		binary.LittleEndian.PutUint32(e[24:], 4)
		copy(md[off:], it.data)
		off += uint32(len(it.data))
	}
	for _, p := range payload {
		copy(img[p.off:], p.data)
	}
	if b.logEntry || b.badEntry {
		e := img[bLogOff : bLogOff+2*logSector]
		copy(e, "loge")
		binary.LittleEndian.PutUint32(e[8:], 2*logSector)
		binary.LittleEndian.PutUint64(e[16:], 5)
		copy(e[32:], b.logGUID[:])
		putCRC(e)
		if b.badEntry {
			e[100] ^= 1
		}
	}
	return img
}

func flags(fixed, parent bool) uint32 {
	var f uint32
	if fixed {
		f |= 1
	}
	if parent {
		f |= 2
	}
	return f
}

func le32s(v ...uint32) []byte {
	p := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(p[4*i:], x)
	}
	return p
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func (b *builder) locatorItem() []byte {
	p := make([]byte, 20+12*len(b.locator))
	copy(p, parentTypeVHDX[:])
	binary.LittleEndian.PutUint16(p[18:], uint16(len(b.locator)))
	for i, kv := range b.locator {
		k, v := utf16le(kv[0]), utf16le(kv[1])
		e := p[20+12*i:]
		binary.LittleEndian.PutUint32(e[0:], uint32(len(p)))
		binary.LittleEndian.PutUint16(e[8:], uint16(len(k)))
		p = append(p, k...)
		e = p[20+12*i:]
		binary.LittleEndian.PutUint32(e[4:], uint32(len(p)))
		binary.LittleEndian.PutUint16(e[10:], uint16(len(v)))
		p = append(p, v...)
	}
	return p
}

// write writes img to name in dir and returns its path.
func write(t testing.TB, dir, name string, img []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
