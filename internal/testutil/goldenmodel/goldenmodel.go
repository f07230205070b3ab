// Package goldenmodel turns a golden case (internal/testutil/golden) into
// what ddtsim takes: the text of its settings (model.Text), which the
// pipeline's golden tests parse, and the command-line flags, which the
// command's tests give; and it says whether this build reproduces the
// case's compressor byte for byte. (Not in package golden: zfs/zio's own
// tests use that one, and model imports zio.)
package goldenmodel

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/zfs/compress/gzip"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// Text is the case's settings as ddtsim takes them: the release, the
// vdev layout, the ashift, the copy's sparse mode and the properties set;
// for a zvol case (Zvol set) its volblocksize, or the default (--zvol)
// when zfs create -V chose it. guest sets Guest (the inputs read as the
// disks of virtual machines).
func Text(c golden.Case, guest bool) model.Text {
	text := model.Text{Release: c.Release, Vdevs: []string{c.Vdevs}, Ashift: strconv.Itoa(c.Ashift),
		Sparse: c.Sparse, Properties: c.Properties(), Guest: guest}
	switch c.Zvol {
	case "":
	case "default":
		text.Zvol = true
	default:
		text.VolBlockSize = c.Zvol
	}
	return text
}

// Settings parses Text(c, guest); it ends the test on an error.
func Settings(t testing.TB, c golden.Case, guest bool) model.Settings {
	t.Helper()
	set, err := model.Parse(Text(c, guest))
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return set
}

// Args are the ddtsim flags of Text(c, guest): --release, --vdev,
// --ashift, --sparse, -o NAME=VALUE for each property (sorted), and
// --zvol or --volblocksize, --guest. The paths to scan come after them.
func Args(c golden.Case, guest bool) []string {
	args := []string{"--release", c.Release, "--vdev", c.Vdevs, "--ashift", strconv.Itoa(c.Ashift), "--sparse", c.Sparse}
	for _, p := range c.Properties() {
		args = append(args, "-o", p)
	}
	switch c.Zvol {
	case "":
	case "default":
		args = append(args, "--zvol")
	default:
		args = append(args, "--volblocksize", c.Zvol)
	}
	if guest {
		args = append(args, "--guest")
	}
	return args
}

// Exact reports whether this build reproduces the case's compressor byte
// for byte (ExactCompression).
func Exact(c golden.Case) bool { return ExactCompression(c.Props["compression"]) }

// ExactCompression reports whether this build reproduces the compressor
// of the compression property value v byte for byte: off, on, lz4, lzjb,
// zle in every build; gzip-N in every build (the port of the Linux
// kernel's deflate); zstd with the C library (cgo, the default; an approximation with
// a measured error in a build without cgo).
func ExactCompression(v string) bool {
	switch {
	case strings.HasPrefix(v, "gzip"):
		return gzip.Exact
	case strings.HasPrefix(v, "zstd"):
		return zstd.Exact
	}
	return true
}
