package vdisk

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// allocatedRange is FILE_ALLOCATED_RANGE_BUFFER: a range of a file, in
// bytes.
type allocatedRange struct{ Off, Len int64 }

// DataExtents maps the data of the file whose handle is fd (an int
// holding a windows.Handle), of size bytes, with
// FSCTL_QUERY_ALLOCATED_RANGES: its allocated ranges, sorted and merged,
// within [0, size); none for a file all holes. ok is false when the file
// system cannot tell (FAT, exFAT: the caller then takes it all as data).
// A file neither sparse nor compressed (FILE_ATTRIBUTE_SPARSE_FILE,
// _COMPRESSED: the only files whose zeroed ranges NTFS knows) has no
// holes: one range, all of it, unasked. It is the one place the project asks Windows
// where a file's holes are.
func DataExtents(fd int, size uint64) (list []Extent, ok bool) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(fd), &fi); err != nil {
		return nil, false
	}
	if fi.FileAttributes&(windows.FILE_ATTRIBUTE_SPARSE_FILE|windows.FILE_ATTRIBUTE_COMPRESSED) == 0 {
		if size == 0 {
			return nil, true
		}
		return []Extent{{Off: 0, End: size}}, true
	}
	var out [64]allocatedRange
	for off := int64(0); uint64(off) < size; {
		in := allocatedRange{Off: off, Len: int64(size) - off}
		var n uint32
		err := windows.DeviceIoControl(windows.Handle(fd), windows.FSCTL_QUERY_ALLOCATED_RANGES,
			(*byte)(unsafe.Pointer(&in)), uint32(unsafe.Sizeof(in)),
			(*byte)(unsafe.Pointer(&out[0])), uint32(unsafe.Sizeof(out)), &n, nil)
		if err != nil && err != windows.ERROR_MORE_DATA {
			return nil, false
		}
		got := out[:n/uint32(unsafe.Sizeof(out[0]))]
		for _, r := range got {
			if r.Off < 0 || r.Len <= 0 || uint64(r.Off) >= size {
				continue
			}
			list = Merge(list, Extent{Off: uint64(r.Off), End: min(uint64(r.Off+r.Len), size)})
		}
		if err == nil {
			if list == nil && allocated(fd) != 0 {
				return nil, false // no range yet space allocated: not to be believed (Wine answers so)
			}
			break
		}
		if len(got) == 0 {
			return nil, false // more data, none returned: not to loop
		}
		last := got[len(got)-1]
		if last.Off+last.Len <= off {
			return nil, false
		}
		off = last.Off + last.Len
	}
	return list, true
}

// allocated is the file's allocation size in bytes (FILE_STANDARD_INFO),
// -1 when it cannot be asked.
func allocated(fd int) int64 {
	var si struct {
		AllocationSize, EndOfFile int64
		NumberOfLinks             uint32
		DeletePending, Directory  bool
	}
	if windows.GetFileInformationByHandleEx(windows.Handle(fd), windows.FileStandardInfo, (*byte)(unsafe.Pointer(&si)), uint32(unsafe.Sizeof(si))) != nil {
		return -1
	}
	return si.AllocationSize
}
