package outpath

import "golang.org/x/sys/windows"

// devOf is the serial number of the volume the file at path lies on
// (GetFileInformationByHandle, following links): what tells one file
// system from another on Windows, as st_dev does on Unix systems.
func devOf(path string) (uint64, bool) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, false
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, false
	}
	defer windows.CloseHandle(h)
	var fi windows.ByHandleFileInformation
	if windows.GetFileInformationByHandle(h, &fi) != nil {
		return 0, false
	}
	return uint64(fi.VolumeSerialNumber), true
}
