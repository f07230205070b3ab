// Package sys is the set of file-system calls the walker of input/source
// makes, under the names of golang.org/x/sys/unix: on Unix systems they
// are x/sys/unix's own (aliases, nothing added), on Windows their closest
// equivalents over handles (sys_windows.go), so that the walk is one code
// for every platform.
//
// On Windows a descriptor is a handle (an int holding a windows.Handle);
// opening relative to a directory (Openat) joins the names to the path
// the directory was opened by, since Win32 has no openat: the guarantees
// of the walk's openat (no path longer than one name handed to the
// kernel, O_NOFOLLOW on every directory above) hold on Unix systems only.
package sys
