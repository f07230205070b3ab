package vhdx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

const maxLocator = 64 * kib

// parentLocator reads the key/value pairs of the parent locator item.
func (d *disk) parentLocator(loc metaItem) (map[string]string, error) {
	if loc.length < 20 || loc.length > maxLocator {
		return nil, d.errAt(loc.entryOff, "parent locator of %d bytes (20 to %d)", loc.length, maxLocator)
	}
	buf := make([]byte, loc.length)
	if err := d.readFull(buf, loc.off, "parent locator"); err != nil {
		return nil, err
	}
	if t := guid(buf[:16]); t != parentTypeVHDX {
		return nil, vdisk.Unsupported(d.path, "vhdx parent locator type "+t.String())
	}
	n := int(binary.LittleEndian.Uint16(buf[18:]))
	if 20+12*n > len(buf) {
		return nil, d.errAt(loc.off+18, "parent locator: %d entries do not fit in %d bytes", n, len(buf))
	}
	kv := map[string]string{}
	for i := range n {
		e := buf[20+12*i:]
		at := loc.off + 20 + 12*int64(i)
		str := func(off uint32, ln uint16) (string, error) {
			if ln%2 != 0 || uint64(off)+uint64(ln) > uint64(len(buf)) {
				return "", d.errAt(at, "parent locator entry %d: string at %d, %d bytes: outside the locator or odd", i, off, ln)
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

// parentNames returns the names to try for the parent, in order:
// relative_path (backslashes made slashes, so the Opener resolves it
// against the child's directory), absolute_win32_path when it is an
// absolute path here (a drive letter or UNC path is not), then the base
// name of each path given (absolute_win32_path, volume_path, whose
// \\?\Volume{GUID} prefix names nothing here) in the child's directory:
// a parent copied next to its child. The parent_linkage check keeps a
// wrong file with that name from being used.
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
	keys := []string{"relative_path", "absolute_win32_path", "volume_path"}
	if r := slash(kv["relative_path"]); r != "" && !path.IsAbs(r) && !isWinAbs(r) {
		add(filepath.FromSlash(r))
	}
	if a := slash(kv["absolute_win32_path"]); path.IsAbs(a) && !strings.HasPrefix(a, "//") {
		add(filepath.FromSlash(a))
	}
	for _, k := range keys {
		if v := slash(kv[k]); v != "" {
			add(path.Base(v))
		}
	}
	return names
}

// isWinAbs reports whether p (slashes) starts with a drive letter.
func isWinAbs(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
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
		return d.errAt(loc.off, "parent locator without parent_linkage")
	}
	names := parentNames(kv)
	if len(names) == 0 {
		return d.errAt(loc.off, "parent locator names no parent file")
	}
	if open == nil {
		return vdisk.Unsupported(d.path, fmt.Sprintf("differencing vhdx (parent %q) opened without a way to open its parent", names[0]))
	}
	dir := vdisk.Dir(d.path)
	var errs []error
	for _, n := range names {
		p, err := open(dir, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pd, ok := p.(*disk)
		if !ok {
			p.Close()
			errs = append(errs, vdisk.Unsupported(d.path, fmt.Sprintf("parent %s is %s, not vhdx", n, p.Format())))
			continue
		}
		if !sameGUID(link, pd.dataWrite) && !sameGUID(kv["parent_linkage2"], pd.dataWrite) {
			p.Close()
			errs = append(errs, fmt.Errorf("parent %s: DataWriteGuid %v is not the parent_linkage %s (the parent changed since the child was made)",
				n, pd.dataWrite, link))
			continue
		}
		d.parent = p
		return nil
	}
	return &vdisk.FormatError{File: d.path, Off: loc.off,
		Reason: fmt.Sprintf("no parent opened (tried %q)", names), Err: errors.Join(errs...)}
}
