package guest

import (
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/input/vdisk/qcow2"
	"github.com/ddtsim/ddtsim/input/vdisk/vhd"
	"github.com/ddtsim/ddtsim/input/vdisk/vhdx"
	"github.com/ddtsim/ddtsim/input/vdisk/vmdk"
)

// formats are the readers, tried in this order on the first 4 KiB of a
// file and its last 512 bytes (a fixed VHD has only a footer).
var formats = []format{
	{"qcow2", func(head, _ []byte) bool { return qcow2.Detect(head) }, qcow2.Open},
	{"vmdk", func(head, _ []byte) bool { return vmdk.Detect(head) },
		func(f *os.File, path string, _ vdisk.Opener) (vdisk.Disk, error) { return vmdk.Open(f, path) }},
	{"vhdx", func(head, _ []byte) bool { return vhdx.Detect(head) }, vhdx.Open},
	{"vhd", vhd.Detect, vhd.Open},
}

// maxDescriptorFile bounds the files Parts reads as possible VMDK
// descriptors, bytes (real ones are about 1 KiB).
const maxDescriptorFile = 64 << 10

// Parts returns, among names (regular files in dir), the extent files of
// the VMDK descriptors and the external data files of the qcow2 images
// among them, each mapped to the name of the image that reads it: a scan
// of the directory reads them through that image, not on their own (a
// -flat.vmdk or a data file would otherwise count as a second, raw disk,
// and a sparse extent as a disk of its own). Only the first 4 KiB of a
// file are read (all of it, up to 64 KiB, to look for a descriptor);
// unreadable files are left to the walk.
func Parts(dir string, names []string) map[string]string {
	in := make(map[string]bool, len(names))
	for _, n := range names {
		in[n] = true
	}
	var parts map[string]string
	buf := make([]byte, maxDescriptorFile)
	clean := filepath.Clean(dir)
	for _, name := range names {
		text, whole, ok := head(filepath.Join(dir, name), buf)
		if !ok {
			continue
		}
		var files []string
		if df, ok := qcow2.DataFile(text); ok {
			files = []string{df}
		} else if whole {
			files, _ = vmdk.ExtentFiles(text)
		}
		for _, f := range files {
			p := f
			if !filepath.IsAbs(p) {
				p = filepath.Join(clean, p)
			}
			if filepath.Dir(p) != clean {
				continue // in another directory: not in this listing
			}
			if base := filepath.Base(p); base != name && in[base] {
				if parts == nil {
					parts = map[string]string{}
				}
				parts[base] = name
			}
		}
	}
	return parts
}

// head reads the start of path, a regular file, into buf: all of it
// (whole) when it fits, else its first 4 KiB; without blocking on a FIFO
// swapped in since the listing.
func head(path string, buf []byte) (b []byte, whole, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 22 {
		return nil, false, false
	}
	whole = fi.Size() <= int64(len(buf))
	n := int64(headSize)
	if whole {
		n = fi.Size()
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, false
	}
	defer f.Close()
	got, err := io.ReadFull(f, buf[:n])
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, false, false
	}
	return buf[:got], whole, true
}
