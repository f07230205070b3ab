package vmdk

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

// qemuImage converts a raw source of 3 MiB into a VMDK of subformat sub
// with qemu-img and returns its path.
func qemuImage(t *testing.T, sub string) string {
	t.Helper()
	dir := t.TempDir()
	src := writeFile(t, dir, "src.raw", source(3<<20+5*512, 1))
	img := filepath.Join(dir, "disk.vmdk")
	vdisktest.Run(t, "convert", "-f", "raw", "-O", "vmdk", "-o", "subformat="+sub, src, img)
	return img
}

func TestQemuSubformats(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	for _, sub := range []string{"monolithicSparse", "streamOptimized", "monolithicFlat", "twoGbMaxExtentSparse", "twoGbMaxExtentFlat"} {
		t.Run(sub, func(t *testing.T) {
			img := qemuImage(t, sub)
			d := openPath(t, img)
			if want := "vmdk " + sub; d.Format() != want {
				t.Errorf("Format() = %q, want %q", d.Format(), want)
			}
			if sparse := sub != "monolithicFlat" && sub != "twoGbMaxExtentFlat"; sparse && len(d.Allocated()) < 2 {
				t.Errorf("Allocated() = %v: the source has data and zero runs", d.Allocated())
			}
			vdisktest.Check(t, img, "vmdk", d)
		})
	}
}

// qemuIO runs qemu-io commands on a VMDK.
func qemuIO(t *testing.T, img string, cmds ...string) {
	t.Helper()
	args := []string{"-f", "vmdk"}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	out, err := exec.Command("qemu-io", append(args, img)...).CombinedOutput()
	if err != nil {
		t.Fatalf("qemu-io %q: %v\n%s", cmds, err, out)
	}
}

func TestQemuZeroGrains(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	if _, err := exec.LookPath("qemu-io"); err != nil {
		t.Skip("no qemu-io")
	}
	img := filepath.Join(t.TempDir(), "z.vmdk")
	vdisktest.Run(t, "create", "-f", "vmdk", "-o", "zeroed_grain=on", img, "4M")
	qemuIO(t, img, "write -P 0xab 0 1M", "write -z 256k 256k", "write -z 2M 128k", "write -P 0x11 3M 4k")
	d := openPath(t, img)
	vdisktest.Check(t, img, "vmdk", d)
	// Zero grains at 256k and 2M are not allocated; the 4k write at 3M
	// allocates its 64 KiB grain.
	want := "[{0 262144} {524288 1048576} {3145728 3211264}]"
	if got := fmt.Sprint(d.Allocated()); got != want {
		t.Errorf("Allocated() = %s, want %s", got, want)
	}
}

// TestQemuSeveralExtents: a descriptor of two sparse extents (qemu-created
// monolithicSparse files) and a flat one, several extents as
// twoGbMaxExtentSparse disks larger than 2 GB have.
func TestQemuSeveralExtents(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	a := writeFile(t, dir, "a.raw", source(1<<20, 2))
	b := writeFile(t, dir, "b.raw", source(2<<20, 3))
	vdisktest.Run(t, "convert", "-f", "raw", "-O", "vmdk", a, filepath.Join(dir, "d-s001.vmdk"))
	vdisktest.Run(t, "convert", "-f", "raw", "-O", "vmdk", b, filepath.Join(dir, "d-s002.vmdk"))
	writeFile(t, dir, "d-f003.vmdk", source(512<<10, 4))
	desc := `# Disk DescriptorFile
version=1
CID=fffffffe
parentCID=ffffffff
createType="twoGbMaxExtentSparse"

# Extent description
RW 2048 SPARSE "d-s001.vmdk"
RW 4096 SPARSE "d-s002.vmdk"
RW 1024 FLAT "d-f003.vmdk" 0
`
	img := writeFile(t, dir, "d.vmdk", []byte(desc))
	d := openPath(t, img)
	if d.Size() != 3<<20+512<<10 {
		t.Errorf("Size() = %d", d.Size())
	}
	vdisktest.Check(t, img, "vmdk", d)
}

// TestQemuFlatOffsets: two FLAT extents in one file at offsets,
// and a second file with a hole, read against qemu. (qemu reports flat
// extents as data throughout, holes included.)
func TestQemuFlatOffsets(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	one := source(2<<20, 5)
	writeFile(t, dir, "one.bin", one)
	f, _ := os.Create(filepath.Join(dir, "two.bin"))
	f.Truncate(1 << 20) // a hole, then data
	f.WriteAt(source(1<<20, 6), 1<<20)
	f.Close()
	desc := `# Disk DescriptorFile
version=1
CID=fffffffe
parentCID=ffffffff
createType="twoGbMaxExtentFlat"
RW 1024 FLAT "one.bin" 2048
RW 4096 FLAT "two.bin" 0
`
	img := writeFile(t, dir, "d.vmdk", []byte(desc))
	d := openPath(t, img)
	vdisktest.Check(t, img, "vmdk", d)
}

func TestQemuVMFS(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	data := source(3<<20, 8)
	writeFile(t, dir, "vm-flat.vmdk", data)
	desc := "# Disk DescriptorFile\nversion=1\nencoding=\"UTF-8\"\nCID=fffffffe\nparentCID=ffffffff\ncreateType=\"vmfs\"\n\n" +
		"# Extent description\nRW 6144 VMFS \"vm-flat.vmdk\"\n\n# The Disk Data Base\n#DDB\n\nddb.adapterType = \"lsilogic\"\n"
	img := writeFile(t, dir, "vm.vmdk", []byte(desc))
	d := openPath(t, img)
	if d.Format() != "vmdk vmfs" {
		t.Errorf("Format() = %q", d.Format())
	}
	vdisktest.Check(t, img, "vmdk", d)
	checkBytes(t, d, data)
}

// TestQemuStreamFooter: a streamOptimized image as VMware writes it, the
// grain directory in the footer, built here and read by qemu too.
func TestQemuStreamFooter(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	data := source(3<<20+3*512, 9)
	for _, o := range []buildOpts{
		{stream: true, footer: true},
		{stream: true, footer: true, grain: 16, gtes: 128, zeroGTE: []int{3, 4, 100}},
		{stream: true},
		{grain: 8, zeroGTE: []int{7}},
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			img := writeFile(t, dir, "s.vmdk", buildSparse(data, o))
			d := openPath(t, img)
			vdisktest.Check(t, img, "vmdk", d)
		})
	}
}

// TestQemuDelta: chains of delta disks made by qemu (parentFileNameHint,
// parentCID), with data, zero grains over the parent's data, and a
// parent smaller than the delta.
func TestQemuDelta(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	if _, err := exec.LookPath("qemu-io"); err != nil {
		t.Skip("no qemu-io")
	}
	dir := t.TempDir()
	src := writeFile(t, dir, "src.raw", source(3<<20, 41))
	base := filepath.Join(dir, "base.vmdk")
	vdisktest.Run(t, "convert", "-f", "raw", "-O", "vmdk", src, base)
	mid := filepath.Join(dir, "mid.vmdk")
	vdisktest.Run(t, "create", "-f", "vmdk", "-o", "zeroed_grain=on", "-b", "base.vmdk", "-F", "vmdk", mid, "4M")
	qemuIO(t, mid, "write -P 0x5a 64k 64k", "write -z 1M 128k", "write -P 0x33 3900k 8k")
	top := filepath.Join(dir, "top.vmdk")
	vdisktest.Run(t, "create", "-f", "vmdk", "-o", "subformat=twoGbMaxExtentSparse", "-b", "mid.vmdk", "-F", "vmdk", top)
	qemuIO(t, top, "write -P 0x77 1000k 100k")
	for _, p := range []string{mid, top} {
		d := openPath(t, p)
		vdisktest.Check(t, p, "vmdk", d)
	}
}

func TestDeltaErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := make([]byte, 64<<10)
	delta := func(name, cid, parentCID, hint string) string {
		desc := fmt.Sprintf("# Disk DescriptorFile\nversion=1\nCID=%s\nparentCID=%s\ncreateType=\"monolithicSparse\"\nparentFileNameHint=\"%s\"\n", cid, parentCID, hint)
		return writeFile(t, dir, name, buildSparse(data, buildOpts{desc: desc}))
	}
	// a's parent is b, b's is a: the error names b, where the loop closes.
	a := delta("a.vmdk", "0000000a", "0000000b", "b.vmdk")
	b := delta("b.vmdk", "0000000b", "0000000a", "a.vmdk")
	wantFormatError(t, openErr(t, a), b, "loop")
	writeFile(t, dir, "base.vmdk", buildSparse(data, buildOpts{desc: "# Disk DescriptorFile\nversion=1\nCID=0000000e\nparentCID=ffffffff\ncreateType=\"monolithicSparse\"\n"}))
	c := delta("c.vmdk", "0000000c", "12345678", "base.vmdk")
	wantFormatError(t, openErr(t, c), c, "CID mismatch")
	ok := delta("ok.vmdk", "0000000c", "e", "base.vmdk")
	if err := openErr(t, ok); err != nil {
		t.Errorf("delta of base.vmdk: %v", err)
	}
	m := delta("m.vmdk", "0000000c", "12345678", "missing.vmdk")
	wantFormatError(t, openErr(t, m), m, "missing parent")
	// A chain deeper than maxChain.
	for i := range maxChain + 1 {
		delta(fmt.Sprintf("d%d.vmdk", i), fmt.Sprintf("%x", i+100), fmt.Sprintf("%x", i+101), fmt.Sprintf("d%d.vmdk", i+1))
	}
	p := filepath.Join(dir, "d0.vmdk")
	if err := openErr(t, p); err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("deep chain: error %v", err)
	}
}

// TestQemuTwoGbSplit: qemu splits twoGbMaxExtent* disks at 2 GB; a
// sparse 2.1 GB guest with data written across the split has two
// extents. Reading all of it would be slow, so the check is
// qemu-img map against Allocated, and the written patterns (and zeros
// around them) read back.
func TestQemuTwoGbSplit(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	if _, err := exec.LookPath("qemu-io"); err != nil {
		t.Skip("no qemu-io")
	}
	for _, sub := range []string{"twoGbMaxExtentSparse", "twoGbMaxExtentFlat"} {
		t.Run(sub, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "big.vmdk")
			vdisktest.Run(t, "create", "-f", "vmdk", "-o", "subformat="+sub, img, "2100M")
			split := int64(2) << 30 // qemu splits at 2 GiB
			writes := []struct {
				off, n int64
				pat    byte
			}{{0, 4096, 0x11}, {split - 8192, 16384, 0x22}, {2099 << 20, 65536, 0x33}}
			var cmds []string
			for _, w := range writes {
				cmds = append(cmds, fmt.Sprintf("write -P %#x %d %d", w.pat, w.off, w.n))
			}
			qemuIO(t, img, cmds...)
			d := openPath(t, img)
			if d.Size() != 2100<<20 {
				t.Fatalf("Size() = %d", d.Size())
			}
			if ex := d.(*disk).exts; len(ex) != 2 || ex[1].start != uint64(split) {
				t.Fatalf("%d extents, want 2 split at %d", len(ex), split)
			}
			if got, want := fmt.Sprint(d.Allocated()), fmt.Sprint(vdisktest.Map(t, img, "vmdk")); got != want {
				t.Errorf("Allocated() = %s, qemu-img map %s", got, want)
			}
			buf := make([]byte, 192<<10)
			for _, w := range writes {
				lo := max(0, w.off-64<<10)
				n, err := d.ReadAt(buf, lo)
				if err != nil && n != int(d.Size()-uint64(lo)) {
					t.Fatalf("ReadAt(%d): %d, %v", lo, n, err)
				}
				for i, c := range buf[:n] {
					at := lo + int64(i)
					want := byte(0)
					if at >= w.off && at < w.off+w.n {
						want = w.pat
					}
					if c != want {
						t.Fatalf("byte %d is %#x, want %#x", at, c, want)
					}
				}
			}
		})
	}
}

func TestExtentFiles(t *testing.T) {
	t.Parallel()
	desc := "# Disk DescriptorFile\nversion=1\nCID=fffffffe\nparentCID=ffffffff\ncreateType=\"twoGbMaxExtentFlat\"\n\n" +
		"RW 4192256 FLAT \"disk-f001.vmdk\" 0\nRW 4192256 FLAT \"disk-f002.vmdk\" 0\nRW 128 ZERO\nRDONLY 64 SPARSE \"/abs/s.vmdk\"\n"
	files, ok := ExtentFiles([]byte(desc))
	if !ok || strings.Join(files, ",") != "disk-f001.vmdk,disk-f002.vmdk,/abs/s.vmdk" {
		t.Errorf("ExtentFiles = %q, %v", files, ok)
	}
	for _, bad := range []string{"", "KDMV", "createType=\"monolithicFlat\"\nRW 1 FLAT \"a\"\n", "# Disk DescriptorFile\nRW x FLAT \"a\"\n"} {
		if files, ok := ExtentFiles([]byte(bad)); ok {
			t.Errorf("ExtentFiles(%q) = %q, true; want not a descriptor", bad, files)
		}
	}
}
