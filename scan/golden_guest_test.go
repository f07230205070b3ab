package scan_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
	"github.com/ddtsim/ddtsim/zfs/model"
)

// guestImages converts every file of the zvol cases' input into an image
// of each format (qemu-img convert, which leaves zero runs unallocated),
// one directory per format.
func guestImages(t *testing.T, vols string) map[string]string {
	t.Helper()
	formats := map[string][]string{
		"qcow2-v3-compressed-zstd": {"-c", "-O", "qcow2", "-o", "compression_type=zstd"},
		"qcow2-v2-compressed-zlib": {"-c", "-O", "qcow2", "-o", "compat=0.10"},
		"qcow2-subclusters":        {"-O", "qcow2", "-o", "extended_l2=on,cluster_size=128k"},
		"vmdk-streamoptimized":     {"-O", "vmdk", "-o", "subformat=streamOptimized"},
		"vmdk-monolithicsparse":    {"-O", "vmdk"},
		"vhdx-dynamic":             {"-O", "vhdx", "-o", "block_size=1M"},
		"vhd-dynamic":              {"-O", "vpc", "-o", "force_size=on"},
	}
	names, err := os.ReadDir(vols)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	root := t.TempDir()
	qemuImg := vdisktest.QemuImg(t)
	var jobs [][]string
	for f, args := range formats {
		dir := filepath.Join(root, f)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			a := append([]string{"convert", "-f", "raw"}, args...)
			jobs = append(jobs, append(a, filepath.Join(vols, n.Name()), filepath.Join(dir, n.Name()+".img")))
		}
		dirs[f] = dir
	}
	// One qemu-img a CPU at once: most of the formats compress.
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	next := make(chan []string)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range next {
				if out, err := exec.Command(qemuImg, a...).CombinedOutput(); err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("qemu-img %s: %v: %s", strings.Join(a, " "), err, out))
					mu.Unlock()
				}
			}
		}()
	}
	for _, a := range jobs {
		next <- a
	}
	close(next)
	wg.Wait()
	if len(failed) > 0 {
		t.Fatal(strings.Join(failed, "\n"))
	}
	return dirs
}

// TestGoldenZvolGuest converts the zvol cases' input files into qcow2
// (v2, v3, zlib and zstd compressed clusters, subclusters), VMDK
// (streamOptimized, monolithicSparse), VHDX and VHD images, scans them
// with --guest as the golden cases wrote the raw files (dd to one volume
// each: --sparse never), each format under two cases' settings, and
// compares with what real zdb -S printed, byte for byte: the guests'
// disks are the files, whatever holds them.
func TestGoldenZvolGuest(t *testing.T) {
	cases, inputs := golden.ForZvolTest(t)
	vdisktest.QemuImg(t)
	dirs := guestImages(t, inputs[0])
	var formats []string
	for f := range dirs {
		formats = append(formats, f)
	}
	sort.Strings(formats)
	var exact []golden.Case
	for _, c := range cases {
		if _, approx := zvolApprox[c.Name]; approx && zstd.LibraryVersion == 0 {
			continue // an approximation in this build (TestGoldenZvol)
		}
		exact = append(exact, c)
	}
	// Each format on two cases, each case in several formats: the
	// readers give the files' bytes whatever the case (TestGoldenZvol
	// holds every case to zdb -S on the raw files).
	scans := map[string][]string{}
	for j, f := range formats {
		for _, i := range []int{j, j + 1} {
			c := exact[i%len(exact)].Name
			scans[c] = append(scans[c], f)
		}
	}
	offTried := false
	for _, c := range exact {
		if c.Props["compression"] == "off" && !slices.Contains(scans[c.Name], "qcow2-v3-compressed-zstd") {
			scans[c.Name] = append(scans[c.Name], "qcow2-v3-compressed-zstd")
		}
		offTried = offTried || c.Props["compression"] == "off"
	}
	if !offTried {
		t.Error("no zvol case with compression=off: the zeros dd writes are not tried")
	}
	for _, c := range exact {
		want, err := c.ZdbS()
		if err != nil {
			t.Fatal(err)
		}
		set, _ := zvolSettings(t, c, true)
		for _, f := range scans[c.Name] {
			dir := dirs[f]
			t.Run(c.Name+"/"+f, func(t *testing.T) {
				res, err := scan.Run(context.Background(), set, []string{dir}, scan.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer res.Close()
				if len(res.Problems) > 0 {
					t.Fatalf("problems: %+v", res.Problems)
				}
				if res.Analysis.Counters.Files != 18 {
					t.Errorf("%d files, want 18", res.Analysis.Counters.Files)
				}
				rep, err := res.Report(0)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Zdb != want {
					t.Errorf("differs from real zdb -S (-real +ddtsim):\n%s",
						cmp.Diff(strings.Split(want, "\n"), strings.Split(rep.Zdb, "\n")))
				}
				if c.Props["compression"] != "off" || f != "qcow2-v3-compressed-zstd" {
					return
				}
				// dd writes the zeros, and compression=off stores them;
				// qemu-img convert (--sparse auto with --guest) skips them.
				auto := set
				auto.Sparse = model.SparseAuto
				res2, err := scan.Run(context.Background(), auto, []string{dir}, scan.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer res2.Close()
				dd, qemu := res.Analysis.Counters, res2.Analysis.Counters
				if dd.ZeroBlocks == 0 || qemu.ZeroBlocks != 0 || qemu.Holes != dd.Holes+dd.ZeroBlocks || qemu.Stored != dd.Stored-dd.ZeroBlocks {
					t.Errorf("dd: %d zero blocks stored, %d holes; qemu-img convert: %d, %d", dd.ZeroBlocks, dd.Holes, qemu.ZeroBlocks, qemu.Holes)
				}
			})
		}
	}
}
