package vdisk

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// The parts of a differencing disk (VHD, VHDX) that do not depend on its
// format: the names its parent may go by, the sector bitmap that says
// which of a block's sectors are the child's, and reads that defer to the
// parent.

// ParentNames returns the names to try, in order and each once, for the
// parent of a differencing disk, from the paths its image records: the
// parent locator entries of a VHD's dynamic disk header (Microsoft's
// "Virtual Hard Disk Image Format Specification" 1.0, "Dynamic Disk
// Header Format"), the Parent Locator metadata item of a VHDX
// ([MS-VHDX] 2.6.2.6.3, "VHDX Parent Locator", which says to try
// relative_path, volume_path, then absolute_win32_path). The images are
// made on Windows and separate with backslashes: they separate here too,
// on every system (a name is made of the system's separators,
// filepath.FromSlash). Then come:
//
//   - rel, a path relative to the child's directory (VHD W2ru, VHDX
//     relative_path: `.\parent.vhdx`, `..\base\parent.vhdx`), unless it
//     is absolute or starts with a drive letter; the Opener resolves it
//     against that directory (Dir, Join);
//   - each of abs that is an absolute path on this system (VHD W2ku and
//     the path of the MacX file URL, VHDX volume_path and
//     absolute_win32_path): on Windows one with a drive letter, a UNC
//     path or a `\\?\` prefix (`\\?\Volume{GUID}\…`, `\\?\d:\…`),
//     elsewhere one from the root but not a UNC path ("//server");
//   - the base name of rel, of each of abs and of each of other (names
//     without a place here, as the VHD header's parent name), for a
//     parent copied next to its child.
//
// Empty strings give nothing. The caller's check of the parent's
// identity (VHD unique id, VHDX DataWriteGuid) keeps a wrong file found
// under one of these names from being used.
func ParentNames(rel string, abs []string, other ...string) []string {
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
	if r := slash(rel); !path.IsAbs(r) && !isWinAbs(r) {
		add(filepath.FromSlash(r))
	}
	for _, a := range abs {
		if a := slash(a); absHere(a) {
			add(filepath.FromSlash(a))
		}
	}
	for _, v := range append(append([]string{rel}, abs...), other...) {
		if v := slash(v); v != "" {
			add(path.Base(v))
		}
	}
	return names
}

// absHere reports whether p, a path with slashes, is absolute on this
// system: on Windows with a volume (filepath.IsAbs), elsewhere from the
// root but not "//server/share/…", which names a Windows share.
func absHere(p string) bool {
	if runtime.GOOS == "windows" {
		return filepath.IsAbs(filepath.FromSlash(p))
	}
	return path.IsAbs(p) && !strings.HasPrefix(p, "//")
}

// isWinAbs reports whether p (slashes) starts with a drive letter.
func isWinAbs(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}

// IsDriveURLPath reports whether p, the path of a file URL, starts with
// a slash and a drive letter ("/C:/vms/base.vhd", RFC 8089 appendix E.2):
// the path on Windows is p without its first slash.
func IsDriveURLPath(p string) bool {
	return len(p) >= 3 && p[0] == '/' && isWinAbs(p[1:])
}

// SectorBitmap is part of the sector bitmap of one block of a
// differencing disk: bit k of Bits stands for sector First+k of the
// block (First a multiple of 8), set when the sector's data is in the
// child's file, clear when it is the parent's. The formats number the
// bits of a byte in opposite orders: the sector bitmap before each block
// of a VHD ("Virtual Hard Disk Image Format Specification" 1.0, "Block
// Allocation Table and Data Blocks"; as qemu and Virtual PC read it) most
// significant bit first (MSBFirst), a VHDX's sector bitmap blocks
// ([MS-VHDX] 1.0, "Blocks": bit 0 of byte 0 is the first sector) least
// significant bit first.
type SectorBitmap struct {
	Bits     []byte
	First    uint64
	MSBFirst bool
}

// ReadSectorBitmap reads the bits of sectors [s0, s1) of block, whose
// bitmap (bit 0: the block's sector 0) starts at byte off of the file:
// whole bytes, from the one holding s0's bit. The file was checked at
// Open to hold the bitmap; a short read is an error naming it.
func (f *File) ReadSectorBitmap(block uint64, off int64, s0, s1 uint64, msbFirst bool) (SectorBitmap, error) {
	first := s0 &^ 7
	bm := SectorBitmap{Bits: make([]byte, (s1-first+7)/8), First: first, MSBFirst: msbFirst}
	off += int64(first / 8)
	n, err := f.F.ReadAt(bm.Bits, off)
	if n == len(bm.Bits) {
		return bm, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return SectorBitmap{}, fmt.Errorf("%s: reading the sector bitmap of block %d at %d: %w", f.Path, block, off, err)
}

// Set reports whether sector s of the block is the child's.
func (b SectorBitmap) Set(s uint64) bool {
	i := s - b.First
	if b.MSBFirst {
		return b.Bits[i/8]&(0x80>>(i%8)) != 0
	}
	return b.Bits[i/8]>>(i%8)&1 != 0
}

// Run returns the end (exclusive) of the run of sectors from s on whose
// bits equal s's, at most end.
func (b SectorBitmap) Run(s, end uint64) uint64 {
	v := b.Set(s)
	for s++; s < end && b.Set(s) == v; s++ {
	}
	return s
}

// Split adds the block's sectors [0, n) (the bitmap covers them), of ss
// bytes each, the block starting at guest offset lo, to the guest ranges
// the child holds (own: set bits) or defers to its parent (deferred:
// clear bits), and returns both lists.
func (b SectorBitmap) Split(own, deferred []Extent, lo, ss, n uint64) ([]Extent, []Extent) {
	for s := uint64(0); s < n; {
		t := b.Run(s, n)
		x := Extent{Off: lo + s*ss, End: lo + t*ss}
		if b.Set(s) {
			own = Merge(own, x)
		} else {
			deferred = Merge(deferred, x)
		}
		s = t
	}
	return own, deferred
}

// ReadRuns reads q, the block's bytes from byte in on, in sectors of ss
// bytes that the bitmap covers, run by run: the runs of set bits with
// own, the others with parent, each called with its part of q and the
// byte offset in the block where that part starts.
func (b SectorBitmap) ReadRuns(q []byte, in, ss uint64, own, parent func(q []byte, in uint64) error) error {
	n := (in + uint64(len(q)) + ss - 1) / ss // sectors up to the end of q
	for len(q) > 0 {
		s := in / ss
		end := min(b.Run(s, n)*ss-in, uint64(len(q)))
		read := parent
		if b.Set(s) {
			read = own
		}
		if err := read(q[:end], in); err != nil {
			return err
		}
		q = q[end:]
		in += end
	}
	return nil
}

// DiffAllocated is a differencing disk's Allocated: own, the ranges it
// holds itself, and the parent's allocated ranges (up to size, the
// child's) within deferred, those where the child reads its parent.
func DiffAllocated(own, deferred []Extent, parent Disk, size uint64) []Extent {
	return Union(own, Intersect(Clip(parent.Allocated(), size), deferred))
}

// ReadParent reads guest bytes at off from parent into q: zeros without
// a parent (nil) and past the parent's end (a parent smaller than its
// child).
func ReadParent(parent Disk, q []byte, off uint64) error {
	if parent == nil {
		clear(q)
		return nil
	}
	n, err := parent.ReadAt(q, int64(off))
	if err == io.EOF {
		clear(q[n:])
		return nil
	}
	return err
}

// OpenParent opens the parent of a differencing disk: open(Dir(f.Path),
// name) for each of names (ParentNames) in turn, until one opens and
// check (the format's: the parent's type and identity) accepts it; a
// disk check refuses is closed. When none is accepted, it returns the
// *FormatError at off (the child's reference to its parent) naming the
// names tried and wrapping each one's error.
func (f *File) OpenParent(off int64, names []string, open Opener, check func(name string, p Disk) error) (Disk, error) {
	var errs []error
	for _, n := range names {
		p, err := open(Dir(f.Path), n)
		if err == nil {
			if err = check(n, p); err == nil {
				return p, nil
			}
			p.Close()
		}
		errs = append(errs, err)
	}
	return nil, &FormatError{File: f.Path, Off: off,
		Reason: fmt.Sprintf("no parent opened (tried %q)", names), Err: errors.Join(errs...)}
}
