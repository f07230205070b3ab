package guest

import (
	"io"
	"os"
	"path/filepath"

	"github.com/ddtsim/ddtsim/vdisk"
	"github.com/ddtsim/ddtsim/vdisk/qcow2"
	"github.com/ddtsim/ddtsim/vdisk/vhd"
	"github.com/ddtsim/ddtsim/vdisk/vhdx"
	"github.com/ddtsim/ddtsim/vdisk/vmdk"
	"golang.org/x/sys/unix"
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
// the VMDK descriptors among them, each mapped to its descriptor's name:
// a scan of the directory reads them through the descriptor, not on their
// own (a -flat.vmdk would otherwise count as a second, raw disk, and a
// sparse extent as a disk of its own). Only files of at most 64 KiB are
// read to look for descriptors; unreadable ones are left to the walk.
func Parts(dir string, names []string) map[string]string {
	in := make(map[string]bool, len(names))
	for _, n := range names {
		in[n] = true
	}
	var parts map[string]string
	buf := make([]byte, maxDescriptorFile)
	clean := filepath.Clean(dir)
	for _, name := range names {
		text, ok := smallFile(filepath.Join(dir, name), buf)
		if !ok {
			continue
		}
		files, ok := vmdk.ExtentFiles(text)
		if !ok {
			continue
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

// smallFile reads path into buf if it is a regular file no larger than
// buf, without blocking on a FIFO swapped in since the listing.
func smallFile(path string, buf []byte) ([]byte, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > int64(len(buf)) || fi.Size() < 22 {
		return nil, false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf[:fi.Size()])
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, false
	}
	return buf[:n], true
}
