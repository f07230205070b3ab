package guest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

func write(t *testing.T, path string, data []byte) *os.File {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Files that are not images are raw, whatever their name: detection is by
// content.
func TestRawStaysRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"empty.qcow2":  nil,
		"one.vmdk":     {'K'},
		"short.vhdx":   []byte("vhdxfil"),     // one byte short of the signature
		"text.vmdk":    []byte("# Disk Desc"), // not a whole descriptor line
		"zeros.img":    make([]byte, 1<<16),
		"QFI-late.bin": append(make([]byte, 10), "QFI\xfb"...), // the magic, not at 0
	} {
		f := write(t, filepath.Join(dir, name), data)
		d, err := Open(f, f.Name())
		if d != nil || err != nil {
			t.Errorf("%s: Open = %v, %v; want raw (nil, nil)", name, d, err)
		}
		if got, err := Detect(f, int64(len(data)), f.Name()); got != "raw" || err != nil {
			t.Errorf("%s: Detect = %q, %v; want raw", name, got, err)
		}
	}
}

// Container formats without a reader are refused, naming the file and
// saying how to convert them; reading them as raw would predict the
// container.
func TestRefusedFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"disk.vdi":  "<<< Oracle VM VirtualBox Disk Image >>>\n" + strings.Repeat("\x00", 24) + "\x7f\x10\xda\xbe",
		"disk.qed":  "QED\x00",
		"disk.hdd":  "WithoutFreeSpace",
		"disk2.hdd": "WithouFreSpacExt",
	} {
		p := filepath.Join(dir, name)
		f := write(t, p, append([]byte(data), make([]byte, 4096)...))
		d, err := Open(f, p)
		if d != nil || !errors.Is(err, vdisk.ErrUnsupported) || !strings.Contains(err.Error(), p) ||
			!strings.Contains(err.Error(), "qemu-img convert") {
			t.Errorf("%s: Open = %v, %v; want an error naming the file, wrapping ErrUnsupported", name, d, err)
		}
	}
}

// A chain deeper than MaxChain is refused in one short message, not one
// wrapped in each of its images.
func TestChainTooDeep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(args ...string) { vdisktest.Run(t, args...) }
	run("create", "-q", "-f", "qcow2", filepath.Join(dir, "c0.qcow2"), "1M")
	for i := 1; i <= MaxChain+2; i++ {
		run("create", "-q", "-f", "qcow2", "-u", "-b", fmt.Sprintf("c%d.qcow2", i-1), "-F", "qcow2", filepath.Join(dir, fmt.Sprintf("c%d.qcow2", i)), "1M")
	}
	top := filepath.Join(dir, fmt.Sprintf("c%d.qcow2", MaxChain+2))
	f, err := os.Open(top)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := Open(f, top)
	if d != nil || err == nil || !strings.Contains(err.Error(), "backing chain deeper than 64 images") || len(err.Error()) > 200 {
		t.Errorf("Open = %v, %v", d, err)
	}
}
