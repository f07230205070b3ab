package sweep

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		os.Stderr.WriteString("cleanup: " + err.Error() + "\n")
	}
	os.Exit(code)
}

func lanes(t *testing.T, sizes []uint32, comps []zio.Compression) []*zio.Policy {
	t.Helper()
	rel, version, err := zio.ResolveRelease("2.3.2")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := zio.NewPool(nil, 12)
	if err != nil {
		t.Fatal(err)
	}
	var out []*zio.Policy
	for _, rs := range sizes {
		for _, c := range comps {
			out = append(out, &zio.Policy{Release: rel, Version: version, RecordSize: rs, Compression: c, Copies: 1, Vdev: pool})
		}
	}
	return out
}

// sumSizes adds up the sizes of the regular files below paths, an inode
// once, symlinks inside directories not followed.
func sumSizes(t *testing.T, paths []string) (n uint64) {
	seen := map[[2]uint64]bool{}
	for _, root := range paths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			st := testkit.Stat(t, p, true)
			id := [2]uint64{st.Dev, st.Ino}
			if !seen[id] {
				seen[id] = true
				n += uint64(fi.Size())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// Every lane equals the analyzer's scan of the same policy, and every byte
// is read once.
func TestSweepEqualsScans(t *testing.T) {
	t.Parallel()
	paths, err := golden.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	for _, sparse := range []model.Sparse{model.SparseAlways, model.SparseNever, model.SparseAuto} {
		ls := lanes(t, []uint32{4 << 10, 128 << 10, 1 << 20}, []zio.Compression{zio.Off, zio.LZ4})
		res, err := Run(context.Background(), paths, Options{Lanes: ls, Sparse: sparse,
			Warn: func(p string, err error) { t.Errorf("%s: %v", p, err) }})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Counters
		// Every byte read once, but for the source holes (the golden
		// inputs' sparse files), which are not read at all; on Windows
		// none, as the files are not marked sparse.
		if want := sumSizes(t, paths); c.ReadBytes+c.HoleBytes != want || c.LogicalBytes != want || (c.HoleBytes == 0) != (runtime.GOOS == "windows") || c.HoleBytes > 4<<20 {
			t.Errorf("sparse=%v: read %d bytes + %d in holes, logical %d; the files hold %d", sparse, c.ReadBytes, c.HoleBytes, c.LogicalBytes, want)
		}
		for i, l := range res.Lanes {
			one, err := analyzer.Run(context.Background(), paths, analyzer.Options{Policy: ls[i], Sparse: sparse})
			if err != nil {
				t.Fatal(err)
			}
			if *one.Histogram != *l.Histogram {
				t.Errorf("sparse=%v recordsize=%d compression=%v: histogram differs from the scan's", sparse, ls[i].RecordSize, ls[i].Compression)
			}
			if one.Counters.Records != l.Records || one.Counters.Holes != l.Holes {
				t.Errorf("sparse=%v lane %d: records/holes %d/%d, scan %d/%d", sparse, i, l.Records, l.Holes, one.Counters.Records, one.Counters.Holes)
			}
			if one.Counters.Files != c.Files || one.Counters.LogicalBytes != c.LogicalBytes {
				t.Errorf("files %d/%d bytes %d/%d", c.Files, one.Counters.Files, c.LogicalBytes, one.Counters.LogicalBytes)
			}
		}
	}
}

func TestSweepRejectsMixedLanes(t *testing.T) {
	t.Parallel()
	ls := lanes(t, []uint32{4 << 10, 8 << 10}, []zio.Compression{zio.Off})
	ls[1].Copies = 2
	if _, err := Run(context.Background(), []string{t.TempDir()}, Options{Lanes: ls}); err == nil {
		t.Error("lanes with different copies accepted")
	}
	if _, err := Run(context.Background(), nil, Options{}); err == nil {
		t.Error("no lanes accepted")
	}
}

// Options.Progress follows the sweep as it follows a scan: every file
// found and its size, and every byte done (read, or skipped in a source
// hole) once for all lanes.
func TestSweepProgress(t *testing.T) {
	t.Parallel()
	paths, err := golden.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	var prog analyzer.Progress
	res, err := Run(context.Background(), paths, Options{Lanes: lanes(t, []uint32{4 << 10, 1 << 20}, []zio.Compression{zio.LZ4}), Progress: &prog})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Counters
	if c.HoleBytes == 0 && runtime.GOOS != "windows" || c.Files == 0 { // on Windows no holes: not marked sparse
		t.Fatalf("counters %+v: the test needs files and source holes", c)
	}
	if uint64(prog.Files.Load()) != c.Files || uint64(prog.BytesPending.Load()) != c.LogicalBytes || uint64(prog.BytesDone.Load()) != c.ReadBytes+c.HoleBytes {
		t.Errorf("progress: %d files, %d bytes found, %d done; counters %+v", prog.Files.Load(), prog.BytesPending.Load(), prog.BytesDone.Load(), c)
	}
}

// With Guest, every lane equals the scan of guest disks: a qcow2 over a
// backing file and a streamOptimized VMDK, compression off and lz4.
func TestSweepGuestEqualsScans(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	raw := filepath.Join(t.TempDir(), "raw")
	data := testkit.Rand(7, 3<<20)
	copy(data[1<<20:], make([]byte, 512<<10))
	testkit.Write(t, raw, data)
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", raw, filepath.Join(dir, "base.qcow2"))
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "vmdk", "-o", "subformat=streamOptimized", raw, filepath.Join(dir, "copy.vmdk"))
	paths := []string{filepath.Join(dir, "base.qcow2"), filepath.Join(dir, "copy.vmdk")}
	ls := lanes(t, []uint32{16 << 10, 128 << 10}, []zio.Compression{zio.Off, zio.LZ4})
	res, err := Run(context.Background(), paths, Options{Lanes: ls, Guest: true,
		Warn: func(p string, err error) { t.Errorf("%s: %v", p, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Counters; c.LogicalBytes != 6<<20 || c.Files != 2 {
		t.Errorf("%d files, %d bytes; want the two 3 MiB guest disks", c.Files, c.LogicalBytes)
	}
	for i, l := range res.Lanes {
		one, err := analyzer.Run(context.Background(), paths, analyzer.Options{Policy: ls[i], Guest: true})
		if err != nil {
			t.Fatal(err)
		}
		if *one.Histogram != *l.Histogram || one.Counters.Holes != l.Holes {
			t.Errorf("lane %d: differs from the scan's", i)
		}
		if l.Histogram.Total().Allocated.Blocks*2 != l.Histogram.Total().Referenced.Blocks {
			t.Errorf("lane %d: the two disks do not share every block: %+v", i, l.Histogram.Total())
		}
	}
}
