package vhdx

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

const maxLocator = 64 * kib

// parentLocator reads the key/value pairs of the parent locator item.
func (d *disk) parentLocator(loc metaItem) (map[string]string, error) {
	if loc.length < 20 || loc.length > maxLocator {
		return nil, d.ErrAt(loc.entryOff, "parent locator of %d bytes (20 to %d)", loc.length, maxLocator)
	}
	buf := make([]byte, loc.length)
	if err := d.ReadStruct(buf, loc.off, "parent locator"); err != nil {
		return nil, err
	}
	if t := guid(buf[:16]); t != parentTypeVHDX {
		return nil, vdisk.Unsupported(d.Path, "vhdx parent locator type "+t.String())
	}
	n := int(binary.LittleEndian.Uint16(buf[18:]))
	if 20+12*n > len(buf) {
		return nil, d.ErrAt(loc.off+18, "parent locator: %d entries do not fit in %d bytes", n, len(buf))
	}
	kv := map[string]string{}
	for i := range n {
		e := buf[20+12*i:]
		at := loc.off + 20 + 12*int64(i)
		str := func(off uint32, ln uint16) (string, error) {
			if ln%2 != 0 || uint64(off)+uint64(ln) > uint64(len(buf)) {
				return "", d.ErrAt(at, "parent locator entry %d: string at %d, %d bytes: outside the locator or odd", i, off, ln)
			}
			u := make([]uint16, ln/2)
			for k := range u {
				u[k] = binary.LittleEndian.Uint16(buf[int(off)+2*k:])
			}
			return string(utf16.Decode(u)), nil
		}
		k, err := str(binary.LittleEndian.Uint32(e[0:]), binary.LittleEndian.Uint16(e[8:]))
		if err != nil {
			return nil, err
		}
		v, err := str(binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint16(e[10:]))
		if err != nil {
			return nil, err
		}
		kv[k] = v
	}
	return kv, nil
}

// sameGUID compares a GUID string from a parent locator ("{...}", any
// case) with g.
func sameGUID(s string, g guid) bool {
	t := func(x string) string { return strings.ToLower(strings.Trim(strings.TrimSpace(x), "{}")) }
	return s != "" && t(s) == t(g.String())
}

// openParent opens the parent named by the locator and checks that it is
// the VHDX image this one was made from.
func (d *disk) openParent(loc metaItem, open vdisk.Opener) error {
	kv, err := d.parentLocator(loc)
	if err != nil {
		return err
	}
	link := kv["parent_linkage"]
	if link == "" {
		return d.ErrAt(loc.off, "parent locator without parent_linkage")
	}
	names := vdisk.ParentNames(kv["relative_path"], []string{kv["volume_path"], kv["absolute_win32_path"]})
	if len(names) == 0 {
		return d.ErrAt(loc.off, "parent locator names no parent file")
	}
	if open == nil {
		return vdisk.Unsupported(d.Path, fmt.Sprintf("differencing vhdx (parent %q) opened without a way to open its parent", names[0]))
	}
	p, err := d.OpenParent(loc.off, names, open, func(n string, p vdisk.Disk) error {
		pd, ok := p.(*disk)
		if !ok {
			return vdisk.Unsupported(d.Path, fmt.Sprintf("parent %s is %s, not vhdx", n, p.Format()))
		}
		if !sameGUID(link, pd.dataWrite) && !sameGUID(kv["parent_linkage2"], pd.dataWrite) {
			return fmt.Errorf("parent %s: DataWriteGuid %v is not the parent_linkage %s (the parent changed since the child was made)",
				n, pd.dataWrite, link)
		}
		return nil
	})
	d.parent = p
	return err
}
