package vmdk

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// maxDescriptor bounds the bytes read as a descriptor, in a descriptor
// file or embedded in a sparse extent (qemu reads at most 1 MiB too).
const maxDescriptor = 1 << 20

// maxExtents bounds the extent lines of a descriptor: each is an open
// file. twoGbMaxExtent* disks of 16 TiB have 8192.
const maxExtents = 16384

// descriptor is the text part of a VMDK ("Virtual Disk Format 5.0",
// "The Descriptor File"): the header keys, the extent descriptions and
// the disk database (ignored).
type descriptor struct {
	createType string
	cid        string // "" when absent
	parentCID  string // "" when absent
	parentHint string // parentFileNameHint, "" when absent
	encrypted  bool   // an encryption.* key is present
	extents    []extentLine
}

// extentLine is one line of the extent description:
//
//	ACCESS SIZE TYPE "FILENAME" [OFFSET]
//
// SIZE and OFFSET are in 512-byte sectors; ZERO extents name no file.
type extentLine struct {
	line    int // 1-based, for errors
	access  string
	sectors uint64
	typ     string
	file    string
	offset  uint64 // FLAT/VMFS: sectors into file
}

// parseDescriptor parses descriptor text. It does not judge the
// createType or the extent types (Open does); it fails on extent lines
// it cannot read and on a descriptor without createType. Unknown lines
// are ignored, as VMware and qemu ignore them.
func parseDescriptor(text []byte) (*descriptor, error) {
	return parse(text, true)
}

// parseEmbedded parses the descriptor embedded in a sparse extent, of
// which only the keys are used: bad extent lines and a missing
// createType are not errors (qemu does not read it either).
func parseEmbedded(text []byte) *descriptor {
	d, _ := parse(text, false)
	return d
}

func parse(text []byte, strict bool) (*descriptor, error) {
	if i := bytes.IndexByte(text, 0); i >= 0 {
		text = text[:i] // embedded descriptors are padded with NULs
	}
	d := &descriptor{}
	for n, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		first, _, _ := strings.Cut(line, " ")
		switch first {
		case "RW", "RDONLY", "NOACCESS":
			if !strict {
				continue
			}
			if len(d.extents) == maxExtents {
				return nil, fmt.Errorf("more than %d extents", maxExtents)
			}
			e, err := parseExtentLine(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n+1, err)
			}
			e.line = n + 1
			d.extents = append(d.extents, e)
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		switch {
		case key == "createType":
			d.createType = val
		case key == "CID":
			d.cid = val
		case key == "parentCID":
			d.parentCID = val
		case key == "parentFileNameHint":
			d.parentHint = val
		case strings.HasPrefix(key, "encryption."):
			d.encrypted = true
		}
	}
	if strict && d.createType == "" {
		return nil, fmt.Errorf("no createType")
	}
	return d, nil
}

func parseExtentLine(line string) (extentLine, error) {
	var e extentLine
	f := strings.Fields(line)
	if len(f) < 3 {
		return e, fmt.Errorf("extent line %q: too short", line)
	}
	e.access, e.typ = f[0], f[2]
	n, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil || n == 0 {
		return e, fmt.Errorf("extent line %q: bad size %q", line, f[1])
	}
	e.sectors = n
	// The file name is quoted and may hold spaces: take it from the
	// line, after the third field.
	rest := line
	for range 3 {
		rest = strings.TrimLeft(rest, " \t")
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			rest = ""
			break
		}
		rest = rest[i:]
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		if e.typ != "ZERO" {
			return e, fmt.Errorf("extent line %q: no file name", line)
		}
		return e, nil
	}
	if rest[0] != '"' {
		return e, fmt.Errorf("extent line %q: file name not quoted", line)
	}
	end := strings.IndexByte(rest[1:], '"')
	if end < 0 {
		return e, fmt.Errorf("extent line %q: unterminated file name", line)
	}
	e.file = rest[1 : 1+end]
	if e.file == "" {
		return e, fmt.Errorf("extent line %q: empty file name", line)
	}
	rest = strings.TrimSpace(rest[2+end:])
	if rest != "" {
		off, err := strconv.ParseUint(rest, 10, 64)
		if err != nil {
			return e, fmt.Errorf("extent line %q: bad offset %q", line, rest)
		}
		e.offset = off
	}
	return e, nil
}

// isDescriptorText reports whether b starts like a descriptor file: the
// "# Disk DescriptorFile" comment near the start, or (as qemu probes)
// comment and blank lines followed by "version=N".
func isDescriptorText(b []byte) bool {
	b = b[:min(len(b), 1024)]
	if bytes.Contains(b, []byte("# Disk DescriptorFile")) {
		return true
	}
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		t := bytes.TrimRight(line, " \r")
		switch {
		case len(t) == 0 || t[0] == '#':
			b = rest
			continue
		case bytes.Equal(t, []byte("version=1")), bytes.Equal(t, []byte("version=2")), bytes.Equal(t, []byte("version=3")):
			return true
		}
		return false
	}
	return false
}

// ExtentFiles returns the files a descriptor file names as its extents
// (FLAT, VMFS, SPARSE, VMFSSPARSE lines; ZERO extents name none), as the
// descriptor writes them: relative to its directory unless absolute. ok is
// false when text does not start like a descriptor or cannot be parsed.
// A walk that meets both a descriptor and its extent files reads the
// extents through the descriptor only (package guest).
func ExtentFiles(text []byte) (files []string, ok bool) {
	if !isDescriptorText(text) {
		return nil, false
	}
	d, err := parseDescriptor(text[:min(len(text), maxDescriptor)])
	if err != nil {
		return nil, false
	}
	for _, e := range d.extents {
		if e.file != "" {
			files = append(files, e.file)
		}
	}
	return files, true
}
