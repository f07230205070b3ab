package qcow2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

// opener opens backing files for the tests: qcow2 when Detect says so,
// else raw, at most 8 deep.
func opener(depth int) vdisk.Opener {
	return func(dir, name string) (vdisk.Disk, error) {
		if depth >= 8 {
			return nil, fmt.Errorf("backing chain deeper than 8 at %q", name)
		}
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		hdr := make([]byte, 512)
		n, _ := f.ReadAt(hdr, 0)
		var d vdisk.Disk
		if Detect(hdr[:n]) {
			d, err = Open(f, p, opener(depth+1))
		} else {
			d, err = vdisk.Raw(f)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return d, nil
	}
}

func openImage(t testing.TB, path string) (vdisk.Disk, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(f, path, opener(0))
	if err != nil {
		f.Close()
	}
	return d, err
}

// check opens the image at path and compares it with qemu-img.
func check(t *testing.T, path string) vdisk.Disk {
	t.Helper()
	d, err := openImage(t, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	vdisktest.Check(t, path, "", d)
	return d
}

func qemuIO(t testing.TB, path string, cmds ...string) {
	t.Helper()
	vdisktest.QemuImg(t)
	args := []string{}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	out, err := exec.Command("qemu-io", append(args, path)...).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("error")) || bytes.Contains(out, []byte("failed")) {
		t.Fatalf("qemu-io %q %s: %v\n%s", cmds, path, err, out)
	}
}

// source writes a sparse raw file of size bytes, deterministic: 4 KiB
// blocks of random bytes, zeros, compressible text and half-zero blocks,
// in runs, and returns its path.
func source(t testing.TB, dir string, size int, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	p := filepath.Join(dir, fmt.Sprintf("src%d.raw", seed))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 4096)
	words := []string{"zfs ", "dedup ", "qcow2 ", "cluster ", "block "}
	kind := 0
	for off := 0; off < size; off += len(b) {
		if r.IntN(4) == 0 {
			kind = r.IntN(4)
		}
		switch kind {
		case 0: // zeros: a hole
			continue
		case 1:
			for i := range b {
				b[i] = byte(r.Uint32())
			}
		case 2:
			s := b[:0]
			for len(s) < len(b) {
				s = append(s, words[r.IntN(len(words))]...)
			}
			copy(b, s)
		case 3:
			clear(b)
			for i := 0; i < len(b)/2; i++ {
				b[i] = byte(r.Uint32())
			}
		}
		if _, err := f.WriteAt(b, int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	return p
}

const mib = 1 << 20

// TestConvert: images qemu-img convert writes from the same source, one
// per variant, read as qemu-img reads them.
func TestConvert(t *testing.T) {
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	src := source(t, dir, 3*mib+512*3, 1) // not a multiple of the cluster size
	// qemu 7.2 resolves a relative data file name against its working
	// directory, this package against the image's directory (as later
	// qemu releases do): make them the same.
	t.Chdir(dir)
	for _, v := range []struct {
		name, format string
		args         []string
	}{
		{"v2", "qcow2 v2", []string{"-o", "compat=0.10"}},
		{"v3", "qcow2 v3", nil},
		{"v3-512", "qcow2 v3", []string{"-o", "cluster_size=512"}},
		{"v2-512", "qcow2 v2", []string{"-o", "cluster_size=512,compat=0.10"}},
		{"v3-2M", "qcow2 v3", []string{"-o", "cluster_size=2M"}},
		{"zlib", "qcow2 v3", []string{"-c"}},
		{"zlib-v2-4k", "qcow2 v2", []string{"-c", "-o", "compat=0.10,cluster_size=4k"}},
		{"zlib-512", "qcow2 v3", []string{"-c", "-o", "cluster_size=512"}},
		{"zlib-2M", "qcow2 v3", []string{"-c", "-o", "cluster_size=2M"}},
		{"zstd", "qcow2 v3", []string{"-c", "-o", "compression_type=zstd"}},
		{"zstd-512", "qcow2 v3", []string{"-c", "-o", "compression_type=zstd,cluster_size=512"}},
		{"extl2", "qcow2 v3", []string{"-o", "extended_l2=on"}},
		{"extl2-zstd", "qcow2 v3", []string{"-c", "-o", "extended_l2=on,compression_type=zstd,cluster_size=32k"}},
		// data file names: absolute, and relative to the image's directory
		{"datafile", "qcow2 v3", []string{"-o", "data_file=" + filepath.Join(dir, "datafile.data")}},
		{"datafile-raw", "qcow2 v3", []string{"-o", "data_file=datafile-raw.data,data_file_raw=on"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			img := filepath.Join(dir, v.name+".qcow2")
			args := append([]string{"convert", "-O", "qcow2"}, v.args...)
			vdisktest.Run(t, append(args, src, img)...)
			d := check(t, img)
			if d.Format() != v.format {
				t.Errorf("Format() = %q, want %q", d.Format(), v.format)
			}
		})
	}
}

// TestZeroMasksBacking: zero clusters of the top image read as zeros and
// are not allocated although the backing file has data there; clusters
// left unallocated read the backing file.
func TestZeroMasksBacking(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	src := source(t, dir, 2*mib, 2)
	base := filepath.Join(dir, "base.qcow2")
	vdisktest.Run(t, "convert", "-O", "qcow2", src, base)
	qemuIO(t, base, "write -P 0x77 0 64k", "write -P 0x78 1m 64k")
	for _, v := range []struct{ name, opts string }{
		{"v3", "compat=1.1"},
		{"v2", "compat=0.10"}, // no zero flag: qemu writes zeros as data
		{"extl2", "extended_l2=on"},
	} {
		t.Run(v.name, func(t *testing.T) {
			top := filepath.Join(dir, v.name+".qcow2")
			vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-o", v.opts, "-b", "base.qcow2", "-F", "qcow2", top)
			qemuIO(t, top, "write -z 0 64k", "write -P 0x11 128k 64k", "write -z 1m 8k",
				"write -P 0x5a 1540k 4k", "write -z 1600k 2k")
			d := check(t, top)
			buf := make([]byte, 64<<10)
			if _, err := d.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, make([]byte, len(buf))) {
				t.Errorf("zero cluster at 0 does not read as zeros (err %v)", err)
			}
			if v.name != "v2" {
				if a := d.Allocated(); len(a) > 0 && a[0].Off < 64<<10 {
					t.Errorf("Allocated() = %v...: the zero cluster at 0 is allocated", a[0])
				}
			}
		})
	}
}

// TestSubclusters: extended L2 entries with subclusters partly written,
// with and without a backing file.
func TestSubclusters(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	src := source(t, dir, mib, 3)
	vdisktest.Run(t, "convert", "-O", "raw", src, filepath.Join(dir, "base.raw"))
	for _, backing := range []bool{false, true} {
		t.Run(fmt.Sprint("backing=", backing), func(t *testing.T) {
			img := filepath.Join(dir, fmt.Sprintf("sub%v.qcow2", backing))
			args := []string{"create", "-q", "-f", "qcow2", "-o", "extended_l2=on"}
			if backing {
				args = append(args, "-b", "base.raw", "-F", "raw")
			}
			vdisktest.Run(t, append(args, img, "1M")...)
			qemuIO(t, img, "write -P 0x5a 4k 4k", "write -P 0x33 70k 2k", "write -z 80k 2k",
				"write -P 0x44 200k 64k", "write -z 300k 100k")
			check(t, img)
		})
	}
}

// TestUnallocated: a fresh image with a few writes, no backing file.
func TestUnallocated(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	for _, cs := range []string{"512", "64k", "2M"} {
		t.Run(cs, func(t *testing.T) {
			img := filepath.Join(dir, cs+".qcow2")
			vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-o", "cluster_size="+cs, img, "5M")
			qemuIO(t, img, "write -P 0x01 0 1k", "write -P 0x02 3m 100k", "write -z 4m 512k", "write -P 0x03 5119k 1k")
			d := check(t, img)
			if len(d.Allocated()) == 0 {
				t.Error("no allocation")
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		img := filepath.Join(dir, "empty.qcow2")
		vdisktest.Run(t, "create", "-q", "-f", "qcow2", img, "8M")
		d := check(t, img)
		if a := d.Allocated(); len(a) != 0 {
			t.Errorf("Allocated() = %v on an empty image", a)
		}
	})
	t.Run("thin-1T", func(t *testing.T) {
		// 1 TiB, 4 KiB written at 700 GiB: opened without reading much
		img := filepath.Join(dir, "thin.qcow2")
		vdisktest.Run(t, "create", "-q", "-f", "qcow2", img, "1T")
		qemuIO(t, img, "write -P 0x61 700g 4k")
		d, err := openImage(t, img)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		want := []vdisk.Extent{{Off: 700 << 30, End: 700<<30 + 64<<10}} // one cluster
		if got := d.Allocated(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Allocated() = %v, want %v", got, want)
		}
		if got := vdisktest.Map(t, img, "qcow2"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("qemu-img map = %v, want %v", got, want)
		}
		buf := make([]byte, 8192)
		n, err := d.ReadAt(buf, 700<<30-4096)
		if n != len(buf) || err != nil || buf[4095] != 0 || buf[4096] != 0x61 || buf[8191] != 0x61 {
			t.Errorf("ReadAt around 700 GiB = %d, %v, bytes %x %x %x", n, err, buf[4095], buf[4096], buf[8191])
		}
		if n, err := d.ReadAt(buf, 1<<40-100); n != 100 || err != io.EOF {
			t.Errorf("ReadAt at the end = %d, %v; want 100, EOF", n, err)
		}
	})
}

// TestChain: backing chains three deep, relative and absolute names,
// raw and qcow2 backing files, backing files smaller and larger than the
// image that uses them.
func TestChain(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	src := source(t, dir, 2*mib, 4)
	// base.raw (2 MiB, sparse) <- mid.qcow2 (3 MiB, absolute name) <-
	// sub/top.qcow2 (4 MiB, relative name "../mid.qcow2")
	base := filepath.Join(dir, "base.raw")
	if err := os.Rename(src, base); err != nil {
		t.Fatal(err)
	}
	mid := filepath.Join(dir, "mid.qcow2")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-o", "cluster_size=4k", "-b", base, "-F", "raw", mid, "3M")
	qemuIO(t, mid, "write -P 0x21 0 8k", "write -z 64k 64k", "write -P 0x22 1900k 300k")
	top := filepath.Join(sub, "top.qcow2")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-b", "../mid.qcow2", "-F", "qcow2", top, "4M")
	qemuIO(t, top, "write -P 0x31 4k 4k", "write -z 1m 64k", "write -P 0x32 3500k 100k")
	t.Run("top", func(t *testing.T) {
		d := check(t, top)
		if d.Size() != 4*mib {
			t.Errorf("Size() = %d", d.Size())
		}
	})
	t.Run("mid", func(t *testing.T) { check(t, mid) })
	// an image smaller than its backing file
	small := filepath.Join(dir, "small.qcow2")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-b", "mid.qcow2", "-F", "qcow2", small, "1536k")
	qemuIO(t, small, "write -P 0x41 1m 4k")
	t.Run("smaller", func(t *testing.T) { check(t, small) })
	// v2 image with a backing file and no backing format extension
	v2 := filepath.Join(dir, "v2.qcow2")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-o", "compat=0.10", "-b", "mid.qcow2", "-F", "qcow2", v2, "3M")
	qemuIO(t, v2, "write -P 0x51 2m 64k")
	t.Run("v2", func(t *testing.T) { check(t, v2) })
}

// TestConcurrent reads compressed images from several goroutines (reads
// of parts of clusters, so through the cluster cache) and compares with
// the source.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	src := source(t, dir, 2*mib, 5)
	want, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []string{"cluster_size=4k", "cluster_size=1M,compression_type=zstd"} {
		t.Run(opts, func(t *testing.T) {
			img := filepath.Join(dir, "c.qcow2")
			vdisktest.Run(t, "convert", "-c", "-O", "qcow2", "-o", opts, src, img)
			d, err := openImage(t, img)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			errs := make(chan error, 4)
			for g := range 4 {
				go func() {
					buf := make([]byte, 12345)
					for off := g * 777; off < len(want); off += len(buf) * 3 {
						n, err := d.ReadAt(buf, int64(off))
						if err != nil && n != min(len(buf), len(want)-off) {
							errs <- err
							return
						}
						if !bytes.Equal(buf[:n], want[off:off+n]) {
							errs <- fmt.Errorf("goroutine %d: bytes differ at %d", g, off)
							return
						}
					}
					errs <- nil
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// wantErr asserts err is a *vdisk.FormatError or wraps
// vdisk.ErrUnsupported (as unsupported says), and names the file.
func wantErr(t *testing.T, err error, file string, unsupported bool, contains string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one (%s)", contains)
	}
	var fe *vdisk.FormatError
	switch {
	case unsupported && !errors.Is(err, vdisk.ErrUnsupported):
		t.Errorf("error %q does not wrap ErrUnsupported", err)
	case !unsupported && !errors.As(err, &fe):
		t.Errorf("error %q (%T) is not a *vdisk.FormatError", err, err)
	}
	if !strings.Contains(err.Error(), file) {
		t.Errorf("error %q does not name %s", err, file)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Errorf("error %q does not say %q", err, contains)
	}
}

// TestSnapshot: an internal snapshot shares L2 tables and clusters with
// the active L1 table, which alone is the disk.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	src := source(t, dir, mib, 6)
	img := filepath.Join(dir, "snap.qcow2")
	vdisktest.Run(t, "convert", "-O", "qcow2", "-o", "cluster_size=4k", src, img)
	vdisktest.Run(t, "snapshot", "-c", "s1", img)
	qemuIO(t, img, "write -P 0x71 0 12k", "write -z 64k 64k", "discard 512k 128k")
	check(t, img)
}

func TestDataFile(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "d.qcow2")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-o", "data_file=d.raw", img, "1M")
	plain := filepath.Join(dir, "p.qcow2")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", plain, "1M")
	for p, want := range map[string]string{img: "d.raw", plain: ""} {
		head := make([]byte, 4096)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := f.ReadAt(head, 0)
		f.Close()
		if got, ok := DataFile(head[:n]); got != want || ok != (want != "") {
			t.Errorf("%s: DataFile = %q, %v; want %q", p, got, ok, want)
		}
	}
	for _, bad := range [][]byte{nil, []byte("QFI\xfb"), make([]byte, 200)} {
		if got, ok := DataFile(bad); ok {
			t.Errorf("DataFile(%q) = %q", bad, got)
		}
	}
}
