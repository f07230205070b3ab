//go:build linux || freebsd || darwin || illumos

package vdisk

import "golang.org/x/sys/unix"

// DataExtents maps the data of the file open as fd, of size bytes, with
// lseek(SEEK_DATA/SEEK_HOLE): its data ranges, sorted and merged, within
// [0, size); none for a file all holes. ok is false when the file system
// cannot tell (the caller then takes it all as data). It is the one
// place the project asks a file system where its holes are (on Windows:
// extents_windows.go). SEEK_DATA and SEEK_HOLE behave alike on Linux,
// FreeBSD, illumos and macOS (APFS); a file system that keeps no holes
// answers with all data.
func DataExtents(fd int, size uint64) (list []Extent, ok bool) {
	for off := int64(0); uint64(off) < size; {
		d, err := unix.Seek(fd, off, seekData)
		if err != nil {
			if err == unix.ENXIO { // no data after off
				break
			}
			return nil, false
		}
		if uint64(d) >= size {
			break // data appended since size was taken
		}
		h, err := unix.Seek(fd, d, seekHole)
		if err != nil || h <= d {
			return nil, false
		}
		list = Merge(list, Extent{Off: uint64(d), End: min(uint64(h), size)})
		off = h
	}
	return list, true
}
