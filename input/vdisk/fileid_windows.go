package vdisk

import (
	"os"

	"golang.org/x/sys/windows"
)

// FileID is the identity of the open file f: its volume's serial number
// and its file index (GetFileInformationByHandle); ok false when it
// cannot be asked.
func FileID(f *os.File) (dev, ino uint64, ok bool) {
	var fi windows.ByHandleFileInformation
	if windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &fi) != nil {
		return 0, 0, false
	}
	return uint64(fi.VolumeSerialNumber), uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow), true
}
