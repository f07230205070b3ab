// Package vdisktest checks a vdisk.Disk against the reference
// implementation, qemu-img: the guest bytes must equal what
// qemu-img convert -O raw writes, and the allocated ranges what
// qemu-img map reports as data. Tests skip when qemu-img is missing, unless
// DDTSIM_REQUIRE_QEMU is set (CI sets it).
package vdisktest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// QemuImg returns the path of qemu-img, or skips t (fails it when
// DDTSIM_REQUIRE_QEMU is set) when there is none.
func QemuImg(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("qemu-img")
	if err != nil {
		if os.Getenv("DDTSIM_REQUIRE_QEMU") != "" {
			t.Fatal("qemu-img not found and DDTSIM_REQUIRE_QEMU is set")
		}
		t.Skip("qemu-img not found (Debian: apt install qemu-utils)")
	}
	return p
}

// Run runs qemu-img with args and fails t with its output on error.
func Run(t testing.TB, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(QemuImg(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("qemu-img %q: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// Map returns the guest ranges qemu-img map --output=json reports as
// data (data: true) for the image at path, merged.
func Map(t testing.TB, path string, format string) []vdisk.Extent {
	t.Helper()
	args := []string{"map", "--output=json"}
	if format != "" {
		args = append(args, "-f", format)
	}
	out := Run(t, append(args, path)...)
	var rows []struct {
		Start  uint64 `json:"start"`
		Length uint64 `json:"length"`
		Data   bool   `json:"data"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("qemu-img map: %v\n%s", err, out)
	}
	var list []vdisk.Extent
	for _, r := range rows {
		if r.Data {
			list = vdisk.Merge(list, vdisk.Extent{Off: r.Start, End: r.Start + r.Length})
		}
	}
	return list
}

// RawSum returns the sha256 of what qemu-img convert -O raw writes for
// the image, and its length.
func RawSum(t testing.TB, path string, format string) ([32]byte, int64) {
	t.Helper()
	raw := filepath.Join(t.TempDir(), "raw")
	args := []string{"convert"}
	if format != "" {
		args = append(args, "-f", format)
	}
	Run(t, append(args, "-O", "raw", path, raw)...)
	f, err := os.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, n
}

// DiskSum returns the sha256 of d's guest bytes, read with ReadAt in
// chunks of 1 MiB and a few odd sizes (so that reads crossing clusters
// and grains are exercised).
func DiskSum(t testing.TB, d vdisk.Disk) [32]byte {
	t.Helper()
	h := sha256.New()
	sizes := []int{1 << 20, 4096 + 17, 65536 * 3, 512, 1<<20 + 511}
	buf := make([]byte, 2<<20)
	size := d.Size()
	for off, i := uint64(0), 0; off < size; i++ {
		n := uint64(sizes[i%len(sizes)])
		n = min(n, size-off)
		got, err := d.ReadAt(buf[:n], int64(off))
		if uint64(got) != n || (err != nil && err != io.EOF) {
			t.Fatalf("%s: ReadAt(%d bytes at %d) = %d, %v", d.Format(), n, off, got, err)
		}
		h.Write(buf[:n])
		off += n
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// Check asserts that d reads exactly what qemu-img convert -O raw gives
// for the image at path (format: qemu-img's -f, "" to let it probe), has
// the same size, and that d.Allocated() equals the data ranges of
// qemu-img map.
func Check(t testing.TB, path, format string, d vdisk.Disk) {
	t.Helper()
	want, n := RawSum(t, path, format)
	if uint64(n) != d.Size() {
		t.Errorf("%s: size %d, qemu-img convert wrote %d bytes", path, d.Size(), n)
	}
	if got := DiskSum(t, d); got != want {
		t.Errorf("%s: guest bytes differ from qemu-img convert -O raw (sha256 %x, want %x)", path, got, want)
	}
	if got, want := d.Allocated(), Map(t, path, format); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: Allocated() = %v, qemu-img map data ranges %v", path, short(got), short(want))
	}
}

func short(l []vdisk.Extent) string {
	if len(l) > 20 {
		return fmt.Sprintf("%v ... (%d extents)", l[:20], len(l))
	}
	return fmt.Sprint(l)
}
