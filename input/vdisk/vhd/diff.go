package vhd

import (
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf16"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// Parent locator platform codes.
const (
	platW2ru = 0x57327275 // relative path, UTF-16LE
	platW2ku = 0x57326b75 // absolute path, UTF-16LE
	platMacX = 0x4d616358 // file URL, UTF-8
)

const maxLocator = 64 << 10

func utf16String(b []byte, order binary.ByteOrder) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = order.Uint16(b[2*i:])
	}
	for i, c := range u {
		if c == 0 {
			u = u[:i]
			break
		}
	}
	return string(utf16.Decode(u))
}

// locators returns the parent paths the header gives, by kind: "rel"
// (W2ru), "abs" (W2ku), "url" (MacX, as a path) and "name" (the parent's
// Unicode name in the header).
func (d *disk) locators(h header) (map[string]string, error) {
	kv := map[string]string{"name": utf16String(h.b[64:576], binary.BigEndian)}
	for k := range 8 {
		e := h.b[576+24*k:]
		code := binary.BigEndian.Uint32(e)
		n := uint64(binary.BigEndian.Uint32(e[8:]))
		off := binary.BigEndian.Uint64(e[16:])
		var key string
		switch code {
		case platW2ru:
			key = "rel"
		case platW2ku:
			key = "abs"
		case platMacX:
			key = "url"
		default:
			continue // none, deprecated or Mac alias
		}
		if n > maxLocator || off > uint64(d.FileSize) || n > uint64(d.FileSize)-off {
			return nil, d.ErrAt(h.off+576+24*int64(k), "parent locator %d at %d, %d bytes: outside the file (%d bytes) or too long", k, off, n, d.FileSize)
		}
		b := make([]byte, n)
		if err := d.ReadStruct(b, int64(off), "parent locator"); err != nil {
			return nil, err
		}
		if key == "url" {
			u, err := url.Parse(strings.TrimRight(string(b), "\x00"))
			if err != nil || u.Scheme != "file" {
				continue
			}
			kv[key] = u.Path
			if vdisk.IsDriveURLPath(u.Path) {
				kv[key] = u.Path[1:] // file:///C:/vms/base.vhd
			}
		} else {
			kv[key] = utf16String(b, binary.LittleEndian)
		}
	}
	return kv, nil
}

// openParent opens the parent the header names and checks its id.
func (d *disk) openParent(h header, open vdisk.Opener) error {
	kv, err := d.locators(h)
	if err != nil {
		return err
	}
	names := vdisk.ParentNames(kv["rel"], []string{kv["abs"], kv["url"]}, kv["name"])
	if len(names) == 0 {
		return d.ErrAt(h.off+64, "differencing disk names no parent")
	}
	if open == nil {
		return vdisk.Unsupported(d.Path, fmt.Sprintf("differencing vhd (parent %q) opened without a way to open its parent", names[0]))
	}
	var id [16]byte
	copy(id[:], h.b[40:56])
	p, err := d.OpenParent(h.off+40, names, open, func(n string, p vdisk.Disk) error {
		pd, ok := p.(*disk)
		if !ok {
			return vdisk.Unsupported(d.Path, fmt.Sprintf("parent %s is %s, not vhd", n, p.Format()))
		}
		if pd.uniqueID != id {
			return fmt.Errorf("parent %s: unique id %x is not the parent id %x", n, pd.uniqueID, id)
		}
		return nil
	})
	d.parent = p
	return err
}

// sectorBitmap returns block i's bitmap bits for its sectors [s0, s1).
func (d *disk) sectorBitmap(i, s0, s1 uint64) (vdisk.SectorBitmap, error) {
	return d.ReadSectorBitmap(i, int64(uint64(d.bat[i])*sector), s0, s1, true)
}

// diffAllocated sets d.alloc for a differencing disk.
func (d *disk) diffAllocated() error {
	var own, deferred []vdisk.Extent
	for i, e := range d.bat {
		i := uint64(i)
		lo := i * d.blockSize
		hi := min(lo+d.blockSize, d.size)
		if e == unallocated {
			deferred = vdisk.Merge(deferred, vdisk.Extent{Off: lo, End: hi})
			continue
		}
		// The disk's size is whole sectors: n sectors end at hi.
		n := (hi - lo) / sector
		bm, err := d.sectorBitmap(i, 0, n)
		if err != nil {
			return err
		}
		own, deferred = bm.Split(own, deferred, lo, sector, n)
	}
	d.alloc = vdisk.DiffAllocated(own, deferred, d.parent, d.size)
	return nil
}

// readPartial reads q from allocated block i of a differencing disk, at
// byte in of the block, from this file or the parent as the bitmap says.
func (d *disk) readPartial(q []byte, i, in uint64) error {
	bm, err := d.sectorBitmap(i, in/sector, (in+uint64(len(q))+sector-1)/sector)
	if err != nil {
		return err
	}
	data := int64(uint64(d.bat[i])*sector + d.bitmap)
	return bm.ReadRuns(q, in, sector,
		func(q []byte, in uint64) error { return d.ReadData(q, data+int64(in)) },
		func(q []byte, in uint64) error { return vdisk.ReadParent(d.parent, q, i*d.blockSize+in) })
}
