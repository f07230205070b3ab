package vhdx

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

// guestData returns n bytes of deterministic pseudo-random data with
// runs of zeros (about half) and of a repeated pattern in between.
func guestData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for off := 0; off < n; {
		l := min(n-off, 4096+r.IntN(400*1024))
		switch r.IntN(4) {
		case 0, 1: // zeros
		case 2:
			for i := off; i < off+l; i++ {
				b[i] = byte(r.Uint32())
			}
		case 3:
			p := byte(1 + r.IntN(255))
			for i := off; i < off+l; i++ {
				b[i] = p ^ byte(i%7)
			}
		}
		off += l
	}
	return b
}

// nonZeroBlocks returns the blocks of b (bs bytes each) holding a
// non-zero byte, as guest ranges.
func nonZeroBlocks(b []byte, bs uint64) []vdisk.Extent {
	var l []vdisk.Extent
	for lo := uint64(0); lo < uint64(len(b)); lo += bs {
		hi := min(lo+bs, uint64(len(b)))
		for _, c := range b[lo:hi] {
			if c != 0 {
				l = vdisk.Merge(l, vdisk.Extent{Off: lo, End: hi})
				break
			}
		}
	}
	return l
}

// blocksOf returns the blocks (bs bytes, within size) that the range
// [off, off+n) touches.
func blocksOf(off, n, bs, size uint64) []vdisk.Extent {
	return []vdisk.Extent{{Off: off / bs * bs, End: min((off+n+bs-1)/bs*bs, size)}}
}

func qemuIO(t *testing.T, path string, cmds ...string) {
	t.Helper()
	args := []string{"-f", "vhdx"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	if out, err := exec.Command("qemu-io", append(args, path)...).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io %q: %v\n%s", cmds, err, out)
	}
}

func openFile(t testing.TB, path string, open vdisk.Opener) vdisk.Disk {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(f, path, open)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// check asserts that d reads what qemu-img convert -O raw writes, and
// that Allocated is want. qemu-img map is no reference for VHDX: qemu's
// driver has no block status, so map calls the whole disk data; that is
// asserted too, so that a qemu that learns block status makes this test
// say so (and then Allocated must equal its map).
func check(t *testing.T, path string, d vdisk.Disk, format string, want []vdisk.Extent) {
	t.Helper()
	if d.Format() != format {
		t.Errorf("%s: Format() = %q, want %q", path, d.Format(), format)
	}
	sum, n := vdisktest.RawSum(t, path, "vhdx")
	if uint64(n) != d.Size() {
		t.Errorf("%s: size %d, qemu-img convert wrote %d bytes", path, d.Size(), n)
	}
	if got := vdisktest.DiskSum(t, d); got != sum {
		t.Errorf("%s: guest bytes differ from qemu-img convert -O raw", path)
	}
	if m := vdisktest.Map(t, path, "vhdx"); fmt.Sprint(m) != fmt.Sprint([]vdisk.Extent{{Off: 0, End: d.Size()}}) {
		t.Errorf("%s: qemu-img map now reports %v: compare Allocated with it", path, m)
	}
	if got := d.Allocated(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: Allocated() = %v, want %v", path, got, want)
	}
}

// TestQemuDynamic converts mixed data to dynamic VHDX of 1 MiB and
// 32 MiB blocks (a partial last block each), then writes into it with
// qemu-io: into a zero block, across blocks, and zeros over data.
func TestQemuDynamic(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	for _, c := range []struct {
		bs   uint64
		size int
	}{{1 * mib, 6*mib + 1536}, {32 * mib, 40*mib + 512}} {
		t.Run(fmt.Sprint(c.bs>>20, "M"), func(t *testing.T) {
			dir := t.TempDir()
			raw, img := filepath.Join(dir, "raw"), filepath.Join(dir, "d.vhdx")
			data := guestData(c.size, c.bs)
			// Leave the second block all zeros, so that a write
			// allocates it.
			clear(data[c.bs:min(2*c.bs, uint64(c.size))])
			if c.size > 3*int(c.bs) {
				clear(data[3*c.bs:])
			}
			if err := os.WriteFile(raw, data, 0o644); err != nil {
				t.Fatal(err)
			}
			vdisktest.Run(t, "convert", "-O", "vhdx", "-o", fmt.Sprint("block_size=", c.bs), raw, img)
			want := nonZeroBlocks(data, c.bs)
			size := uint64(c.size)
			w1 := c.bs + 12345
			w2 := size - 700*1024 - 512
			qemuIO(t, img,
				fmt.Sprintf("write -P 0xa5 %d 3000", w1),
				fmt.Sprintf("write -P 0x3c %d %d", w2, 600*1024),
				"write -z 4096 8192")
			want = vdisk.Union(want, blocksOf(w1, 3000, c.bs, size))
			want = vdisk.Union(want, blocksOf(w2, 600*1024, c.bs, size))
			want = vdisk.Union(want, blocksOf(4096, 8192, c.bs, size))
			d := openFile(t, img, nil)
			check(t, img, d, "vhdx dynamic", want)
		})
	}
}

// TestQemuFixed reads fixed VHDX: blocks created fully present
// (block_state_zero=off: all allocated) and in qemu's default ZERO state
// (only what qemu-io writes is allocated).
func TestQemuFixed(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	const size = 5*mib + 4096
	for _, zero := range []string{"off", "on"} {
		t.Run("block_state_zero="+zero, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "f.vhdx")
			vdisktest.Run(t, "create", "-f", "vhdx", "-o", "subformat=fixed,block_size=1M,block_state_zero="+zero, img, fmt.Sprint(size))
			qemuIO(t, img, "write -P 0x11 1000 5000", "write -P 0x22 3145728 1048576", "write -P 0x33 5242880 4096")
			want := []vdisk.Extent{{Off: 0, End: size}}
			if zero == "on" {
				want = []vdisk.Extent{{Off: 0, End: mib}, {Off: 3 * mib, End: 4 * mib}, {Off: 5 * mib, End: size}}
			}
			d := openFile(t, img, nil)
			check(t, img, d, "vhdx fixed", want)
		})
	}
}
