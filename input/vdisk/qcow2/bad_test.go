package qcow2

import (
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
)

var be = binary.BigEndian

// mutate writes a copy of the image src, changed by f, as name in dir.
func mutate(t *testing.T, dir, src, name string, f func(b []byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// firstL2 returns the file offset of the first L2 table and of its first
// nonzero entry.
func firstL2(t *testing.T, b []byte) (l2, ent uint64) {
	t.Helper()
	l1 := be.Uint64(b[40:])
	l2 = be.Uint64(b[l1:]) & offsetMask
	csize := uint64(1) << be.Uint32(b[20:])
	for i := l2; i < l2+csize; i += 8 {
		if be.Uint64(b[i:]) != 0 {
			return l2, i
		}
	}
	t.Fatal("no L2 entry")
	return
}

func TestBadImages(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	src := source(t, dir, 512<<10, 7)
	plain := filepath.Join(dir, "plain.qcow2")
	vdisktest.Run(t, "convert", "-O", "qcow2", src, plain)
	comp := filepath.Join(dir, "comp.qcow2")
	vdisktest.Run(t, "convert", "-c", "-O", "qcow2", "-o", "cluster_size=4k", src, comp)
	pb, _ := os.ReadFile(plain)
	l2, ent := firstL2(t, pb)
	lastData := uint64(0) // the data cluster furthest in the file
	for i := l2; i < l2+65536; i += 8 {
		lastData = max(lastData, be.Uint64(pb[i:])&offsetMask)
	}

	for _, c := range []struct {
		name, src   string
		f           func(b []byte) []byte
		unsupported bool
		says        string
	}{
		{"trunc-0", plain, func(b []byte) []byte { return b[:0] }, false, "truncated"},
		{"trunc-50", plain, func(b []byte) []byte { return b[:50] }, false, "truncated"},
		{"trunc-100", plain, func(b []byte) []byte { return b[:100] }, false, "truncated"},
		{"trunc-l1", plain, func(b []byte) []byte { return b[:be.Uint64(b[40:])+4] }, false, "L1 table"},
		{"trunc-l2", plain, func(b []byte) []byte { return b[:l2+100] }, false, "L2 table"},
		{"trunc-data", plain, func(b []byte) []byte { return b[:lastData] }, false, "past the end"},
		{"magic", plain, func(b []byte) []byte { b[3] = 0; return b }, false, "magic"},
		{"version-1", plain, func(b []byte) []byte { be.PutUint32(b[4:], 1); return b }, true, "version 1"},
		{"version-4", plain, func(b []byte) []byte { be.PutUint32(b[4:], 4); return b }, true, "version 4"},
		{"cluster-bits-8", plain, func(b []byte) []byte { be.PutUint32(b[20:], 8); return b }, false, "cluster_bits"},
		{"cluster-bits-30", plain, func(b []byte) []byte { be.PutUint32(b[20:], 30); return b }, true, "cluster size"},
		{"header-length", plain, func(b []byte) []byte { be.PutUint32(b[100:], 1<<30); return b }, false, "header_length"},
		{"size-2^63", plain, func(b []byte) []byte { be.PutUint64(b[24:], 1<<63); return b }, false, "virtual size"},
		{"l1-absurd", plain, func(b []byte) []byte { be.PutUint32(b[36:], 0xffffffff); return b }, false, "L1 table"},
		{"l1-too-small", plain, func(b []byte) []byte { be.PutUint64(b[24:], 1<<40); return b }, false, "L1 table"},
		{"l1-past-eof", plain, func(b []byte) []byte { be.PutUint64(b[40:], 1<<40); return b }, false, "L1 table"},
		{"l1-misaligned", plain, func(b []byte) []byte { be.PutUint64(b[40:], be.Uint64(b[40:])+8); return b }, false, "aligned"},
		{"l2-past-eof", plain, func(b []byte) []byte { l1 := be.Uint64(b[40:]); be.PutUint64(b[l1:], 1<<63|1<<40); return b }, false, "L2 table"},
		{"l2-shared", plain, func(b []byte) []byte {
			be.PutUint64(b[24:], 2<<29) // two L1 entries
			be.PutUint32(b[36:], 2)
			l1 := be.Uint64(b[40:])
			be.PutUint64(b[l1+8:], be.Uint64(b[l1:]))
			return b
		}, false, "used by L1 entries"},
		{"entry-past-eof", plain, func(b []byte) []byte { be.PutUint64(b[ent:], 1<<63|1<<40); return b }, false, "past the end"},
		{"entry-misaligned", plain, func(b []byte) []byte { be.PutUint64(b[ent:], be.Uint64(b[ent:])+512); return b }, false, "aligned"},
		{"compressed-past-eof", comp, func(b []byte) []byte {
			_, e := firstL2(t, b)
			be.PutUint64(b[e:], 1<<62|uint64(len(b))+10)
			return b
		}, false, "compressed cluster"},
		{"incompat-unknown", plain, func(b []byte) []byte { b[79] |= 1 << 6; return b }, true, "incompatible feature bit 6"},
		{"incompat-named", plain, func(b []byte) []byte { b[79] |= 1 << 2; return b }, true, ""},
		{"corrupt", plain, func(b []byte) []byte { b[79] |= incCorrupt; return b }, false, "corrupt"},
		{"crypt-aes", plain, func(b []byte) []byte { be.PutUint32(b[32:], 1); return b }, true, "encrypted qcow2 (aes)"},
		{"compression-type", plain, func(b []byte) []byte {
			b[79] |= incCompression
			return b
		}, false, "compression"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mutate(t, dir, c.src, c.name+".qcow2", c.f)
			d, err := openImage(t, p)
			if err == nil {
				d.Close()
			}
			if c.name == "incompat-named" {
				// bit 2 is known (external data file) but the image names
				// no data file
				wantErr(t, err, p, false, "data file")
				return
			}
			wantErr(t, err, p, c.unsupported, c.says)
		})
	}

	t.Run("decompress", func(t *testing.T) {
		p := mutate(t, dir, comp, "garbage.qcow2", func(b []byte) []byte {
			l2, _ := firstL2(t, b)
			e := l2
			for be.Uint64(b[e:])&l2Compr == 0 {
				e += 8
			}
			off := be.Uint64(b[e:]) & (1<<(62-(12-8)) - 1)
			for i := off; i < off+64; i++ {
				b[i] = 0xff
			}
			return b
		})
		d, err := openImage(t, p)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer d.Close()
		buf := make([]byte, d.Size())
		_, err = d.ReadAt(buf, 0)
		wantErr(t, err, p, false, "decompressing")
	})

	t.Run("dirty", func(t *testing.T) {
		// dirty images are read: the bit concerns refcounts only
		p := mutate(t, dir, plain, "dirty.qcow2", func(b []byte) []byte { b[79] |= incDirty; return b })
		d, err := openImage(t, p)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer d.Close()
		got := make([]byte, d.Size())
		if _, err := d.ReadAt(got, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(src)
		if string(got) != string(want) {
			t.Error("dirty image reads other bytes than its source")
		}
	})

	t.Run("luks", func(t *testing.T) {
		p := filepath.Join(dir, "luks.qcow2")
		// qemu times its key derivation with the thread's CPU clock and
		// fails, on a loaded machine, with "Unable to get accurate CPU
		// usage" (seen at 10 and 250 ms): then the image is made as qemu
		// would mark it, crypt_method 2 (LUKS) in a plain header.
		cmd := exec.Command(vdisktest.QemuImg(t), "create", "-q", "-f", "qcow2", "--object", "secret,id=sec0,data=abc",
			"-o", "encrypt.format=luks,encrypt.key-secret=sec0,encrypt.iter-time=250", p, "1M")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("qemu-img could not make a LUKS image (%v: %s); marking a plain one", err, out)
			vdisktest.Run(t, "create", "-q", "-f", "qcow2", p, "1M")
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteAt([]byte{0, 0, 0, 2}, 32) // crypt_method, big-endian
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		d, err := openImage(t, p)
		if err == nil {
			d.Close()
		}
		wantErr(t, err, p, true, "encrypted qcow2 (luks)")
	})

	t.Run("missing-backing", func(t *testing.T) {
		base := filepath.Join(dir, "gone.qcow2")
		vdisktest.Run(t, "create", "-q", "-f", "qcow2", base, "1M")
		top := filepath.Join(dir, "orphan.qcow2")
		vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-b", "gone.qcow2", "-F", "qcow2", top)
		os.Remove(base)
		d, err := openImage(t, top)
		if err == nil {
			d.Close()
		}
		wantErr(t, err, top, false, `backing file "gone.qcow2"`)

		// no Opener
		f, err := os.Open(top)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = Open(f, top, nil)
		if err == nil || !strings.Contains(err.Error(), top) || !strings.Contains(err.Error(), "gone.qcow2") || !strings.Contains(err.Error(), "Opener") {
			t.Errorf("Open with a nil Opener: %v", err)
		}
	})

	t.Run("backing-format", func(t *testing.T) {
		// the header says raw, the file is qcow2
		base := filepath.Join(dir, "fmt-base.qcow2")
		vdisktest.Run(t, "create", "-q", "-f", "qcow2", base, "1M")
		top := filepath.Join(dir, "fmt-top.qcow2")
		vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-u", "-b", "fmt-base.qcow2", "-F", "raw", top, "1M")
		d, err := openImage(t, top)
		if err == nil {
			d.Close()
		}
		wantErr(t, err, top, false, "the header says raw")
	})

	t.Run("chain-loop", func(t *testing.T) {
		a := filepath.Join(dir, "loop-a.qcow2")
		vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-u", "-b", "loop-a.qcow2", "-F", "qcow2", a, "1M")
		d, err := openImage(t, a)
		if err == nil {
			d.Close()
		}
		wantErr(t, err, a, false, "deeper than 8")
	})
}
