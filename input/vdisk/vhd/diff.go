package vhd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
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
		if n > maxLocator || off > uint64(d.fsize) || n > uint64(d.fsize)-off {
			return nil, d.errAt(h.off+576+24*int64(k), "parent locator %d at %d, %d bytes: outside the file (%d bytes) or too long", k, off, n, d.fsize)
		}
		b := make([]byte, n)
		if err := d.readFull(b, int64(off), "parent locator"); err != nil {
			return nil, err
		}
		if key == "url" {
			u, err := url.Parse(strings.TrimRight(string(b), "\x00"))
			if err != nil || u.Scheme != "file" {
				continue
			}
			kv[key] = u.Path
		} else {
			kv[key] = utf16String(b, binary.LittleEndian)
		}
	}
	return kv, nil
}

// parentNames returns the names to try for the parent, in order: the
// relative path (W2ru, backslashes made slashes, for the Opener to
// resolve against the child's directory), the absolute path (W2ku) when
// it is absolute here (a drive letter or UNC path is not), the MacX file
// URL's path, then the base name of each of these and of the header's
// parent name in the child's directory (a parent copied next to its
// child). The unique id check keeps a wrong file with that name out.
func parentNames(kv map[string]string) []string {
	var names []string
	add := func(n string) {
		if n == "" || n == "." || n == "/" {
			return
		}
		for _, m := range names {
			if m == n {
				return
			}
		}
		names = append(names, n)
	}
	slash := func(s string) string { return strings.ReplaceAll(s, `\`, "/") }
	if r := slash(kv["rel"]); !path.IsAbs(r) && !(len(r) >= 2 && r[1] == ':') {
		add(filepath.FromSlash(r))
	}
	if a := slash(kv["abs"]); path.IsAbs(a) && !strings.HasPrefix(a, "//") {
		add(filepath.FromSlash(a))
	}
	if u := kv["url"]; path.IsAbs(u) {
		add(filepath.FromSlash(u))
	}
	for _, k := range []string{"rel", "abs", "url", "name"} {
		if v := slash(kv[k]); v != "" {
			add(path.Base(v))
		}
	}
	return names
}

// openParent opens the parent the header names and checks its id.
func (d *disk) openParent(h header, open vdisk.Opener) error {
	kv, err := d.locators(h)
	if err != nil {
		return err
	}
	names := parentNames(kv)
	if len(names) == 0 {
		return d.errAt(h.off+64, "differencing disk names no parent")
	}
	if open == nil {
		return vdisk.Unsupported(d.path, fmt.Sprintf("differencing vhd (parent %q) opened without a way to open its parent", names[0]))
	}
	var id [16]byte
	copy(id[:], h.b[40:56])
	var errs []error
	for _, n := range names {
		p, err := open(vdisk.Dir(d.path), n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pd, ok := p.(*disk)
		if !ok {
			p.Close()
			errs = append(errs, vdisk.Unsupported(d.path, fmt.Sprintf("parent %s is %s, not vhd", n, p.Format())))
			continue
		}
		if pd.uniqueID != id {
			p.Close()
			errs = append(errs, fmt.Errorf("parent %s: unique id %x is not the parent id %x", n, pd.uniqueID, id))
			continue
		}
		d.parent = p
		return nil
	}
	return &vdisk.FormatError{File: d.path, Off: h.off + 40,
		Reason: fmt.Sprintf("no parent opened (tried %q)", names), Err: errors.Join(errs...)}
}

func bit(bm []byte, i uint64) bool { return bm[i/8]&(0x80>>(i%8)) != 0 }

// run returns the end of the run of bits equal to bit s, at most end.
func run(bm []byte, s, end uint64) uint64 {
	v := bit(bm, s)
	for s++; s < end && bit(bm, s) == v; s++ {
	}
	return s
}

// sectorBitmap returns block i's bitmap bits for its sectors [s0, s1),
// and the sector of the first bit of the bytes returned.
func (d *disk) sectorBitmap(i, s0, s1 uint64) ([]byte, uint64, error) {
	base := s0 &^ 7
	bm := make([]byte, (s1-base+7)/8)
	off := int64(uint64(d.bat[i])*sector + base/8)
	n, err := d.f.ReadAt(bm, off)
	if n == len(bm) {
		return bm, base, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, 0, fmt.Errorf("%s: reading the sector bitmap of block %d at %d: %w", d.path, i, off, err)
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
		n := (hi - lo + sector - 1) / sector
		bm, _, err := d.sectorBitmap(i, 0, n)
		if err != nil {
			return err
		}
		for s := uint64(0); s < n; {
			t := run(bm, s, n)
			x := vdisk.Extent{Off: lo + s*sector, End: min(lo+t*sector, hi)}
			if bit(bm, s) {
				own = vdisk.Merge(own, x)
			} else {
				deferred = vdisk.Merge(deferred, x)
			}
			s = t
		}
	}
	d.alloc = vdisk.Union(own, vdisk.Intersect(vdisk.Clip(d.parent.Allocated(), d.size), deferred))
	return nil
}

// readParent reads guest bytes at g from the parent; zeros without one
// (a dynamic disk) and past the parent's end.
func (d *disk) readParent(q []byte, g uint64) error {
	if d.parent == nil {
		clear(q)
		return nil
	}
	n, err := d.parent.ReadAt(q, int64(g))
	if err == io.EOF {
		clear(q[n:])
		return nil
	}
	return err
}

// readPartial reads q from allocated block i of a differencing disk, at
// byte in of the block, from this file or the parent as the bitmap says.
func (d *disk) readPartial(q []byte, i, in uint64) error {
	n := (in + uint64(len(q)) + sector - 1) / sector
	bm, base, err := d.sectorBitmap(i, in/sector, n)
	if err != nil {
		return err
	}
	data := int64(uint64(d.bat[i])*sector + d.bitmap)
	for len(q) > 0 {
		s := in / sector
		end := min((run(bm, s-base, n-base)+base)*sector-in, uint64(len(q)))
		var err error
		if bit(bm, s-base) {
			err = d.readData(q[:end], data+int64(in))
		} else {
			err = d.readParent(q[:end], i*d.blockSize+in)
		}
		if err != nil {
			return err
		}
		q = q[end:]
		in += end
	}
	return nil
}
