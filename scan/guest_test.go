package scan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/internal/testutil/vdisktest"
	"github.com/ddtsim/ddtsim/report"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/scan"
	"github.com/ddtsim/ddtsim/zfs/model"
)

func guestSettings(t *testing.T, extra ...string) model.Settings {
	t.Helper()
	set, err := model.Parse(model.Text{Guest: true, VolBlockSize: "64K", Properties: append([]string{"compression=off", "dedup=on"}, extra...)})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func runGuest(t *testing.T, set model.Settings, opts scan.Options, paths ...string) *scan.Result {
	t.Helper()
	res, err := scan.Run(context.Background(), set, paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close() })
	return res
}

// A thin image reads nothing: its unallocated terabyte is holes.
func TestGuestThinImages(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	for _, f := range []string{"qcow2", "vmdk", "vhdx"} {
		vdisktest.Run(t, "create", "-q", "-f", f, filepath.Join(dir, "thin."+f), "1T")
	}
	vdisktest.Run(t, "create", "-q", "-f", "vpc", "-o", "force_size=on", filepath.Join(dir, "thin.vhd"), "1T")
	set, err := model.Parse(model.Text{Guest: true, Zvol: true})
	if err != nil {
		t.Fatal(err)
	}
	res := runGuest(t, set, scan.Options{}, dir)
	c := res.Analysis.Counters
	const records = 4 << 40 / (16 << 10) // four 1 TiB disks of 16K blocks
	if c.Files != 4 || c.ReadBytes != 0 || c.Records != records || c.Holes != records || c.Stored != 0 || c.LogicalBytes != 4<<40 {
		t.Errorf("four empty 1 TiB images: %+v", c)
	}
}

// Clones of one base image share its blocks: --by file shows which.
func TestGuestClonesByFile(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	base := testkit.Rand(1, 4<<20)
	raw := filepath.Join(t.TempDir(), "raw")
	testkit.Write(t, raw, base)
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", raw, filepath.Join(dir, "base.qcow2"))
	for i, name := range []string{"vm1.qcow2", "vm2.qcow2"} {
		// Each clone rewrites its own MiB (the second, the third) and
		// keeps the base's other three, in a qcow2 over base.qcow2
		// holding only what differs.
		guest := append([]byte(nil), base...)
		copy(guest[(i+1)<<20:], testkit.Rand(int64(10+i), 1<<20))
		testkit.Write(t, raw, guest)
		vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", "-B", "base.qcow2", "-F", "qcow2", raw, filepath.Join(dir, name))
	}
	res := runGuest(t, guestSettings(t), scan.Options{By: "file"}, filepath.Join(dir, "vm1.qcow2"), filepath.Join(dir, "vm2.qcow2"))
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %+v", res.Problems)
	}
	g := res.Breakdown.Groups
	if len(g) != 2 || !strings.HasSuffix(g[0].Name, "vm1.qcow2") || !strings.HasSuffix(g[1].Name, "vm2.qcow2") {
		t.Fatalf("groups %+v", g)
	}
	// 64 blocks of 64K each: the first and last MiB of the base are in
	// both (32 blocks shared), the rest is the clone's own MiB and the
	// base's MiB the other clone rewrote (32 only here).
	for _, x := range g {
		if x.Referenced.Blocks != 64 || x.Shared.Blocks != 32 || x.Unique.Blocks != 32 {
			t.Errorf("%s: referenced %d blocks, shared %d, only here %d; want 64, 32, 32", x.Name, x.Referenced.Blocks, x.Shared.Blocks, x.Unique.Blocks)
		}
	}
	if tot := res.Analysis.Histogram.Total(); tot.Allocated.Blocks != 96 || tot.Referenced.Blocks != 128 {
		t.Errorf("table: %d unique blocks of %d; want 96 of 128", tot.Allocated.Blocks, tot.Referenced.Blocks)
	}
}

// A VMDK descriptor and its extent files, met in a directory or named
// together (a shell glob of *.vmdk), make one disk: the extents are read
// through the descriptor only. Without --guest they are three files.
func TestGuestVMDKExtentsOnce(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	raw := filepath.Join(t.TempDir(), "raw")
	testkit.Write(t, raw, testkit.Rand(3, 3<<20))
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "vmdk", "-o", "subformat=monolithicFlat", raw, filepath.Join(dir, "disk.vmdk"))
	testkit.Write(t, filepath.Join(dir, "other.raw"), testkit.Rand(4, 1<<20))
	named, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(named) != 3 {
		t.Fatalf("%q, %v: want disk.vmdk, disk-flat.vmdk and other.raw", named, err)
	}
	for _, paths := range [][]string{{dir}, named} {
		res := runGuest(t, guestSettings(t), scan.Options{}, paths...)
		c := res.Analysis.Counters
		if c.Files != 2 || c.ImageParts != 1 || c.LogicalBytes != 4<<20 || res.Analysis.Histogram.Total().Referenced.Blocks != 64 {
			t.Errorf("%q: %d files, %d extent files, %d bytes, %d blocks; want 2, 1, 4 MiB, 64", paths, c.Files, c.ImageParts, c.LogicalBytes, res.Analysis.Histogram.Total().Referenced.Blocks)
		}
	}
	set := guestSettings(t)
	set.Guest = false
	if c := runGuest(t, set, scan.Options{}, dir).Analysis.Counters; c.Files != 3 || c.ImageParts != 0 {
		t.Errorf("without --guest: %d files, %d extent files; want 3, 0", c.Files, c.ImageParts)
	}
}

// Images that cannot be read are problems naming the image and the
// reason; the other files are scanned.
func TestGuestBadImages(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.raw")
	testkit.Write(t, good, testkit.Rand(5, 1<<20))
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", filepath.Join(dir, "gone.qcow2"), "1M")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-b", "gone.qcow2", "-F", "qcow2", filepath.Join(dir, "orphan.qcow2"))
	if err := os.Remove(filepath.Join(dir, "gone.qcow2")); err != nil {
		t.Fatal(err)
	}
	// a ← b, then a rebased onto b: a loop.
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", filepath.Join(dir, "loop-a.qcow2"), "1M")
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-b", "loop-a.qcow2", "-F", "qcow2", filepath.Join(dir, "loop-b.qcow2"))
	vdisktest.Run(t, "rebase", "-q", "-u", "-b", "loop-b.qcow2", "-F", "qcow2", filepath.Join(dir, "loop-a.qcow2"))
	// A backing file that is a FIFO must not hang the scan.
	if err := testkit.Mkfifo(t, filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-u", "-b", "fifo", "-F", "raw", filepath.Join(dir, "on-fifo.qcow2"), "1M")
	// A backing name holding a newline and an escape code: it is printed
	// escaped, never raw to a terminal.
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-u", "-b", "no\n\x1b[31mred", "-F", "raw", filepath.Join(dir, "hostile.qcow2"), "1M")
	vdisktest.Run(t, "create", "-q", "-f", "vdi", filepath.Join(dir, "disk.vdi"), "1M") // qemu's banner, not VirtualBox's
	trunc, err := os.ReadFile(filepath.Join(dir, "orphan.qcow2"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Write(t, filepath.Join(dir, "truncated.qcow2"), trunc[:100])

	res := runGuest(t, guestSettings(t), scan.Options{}, dir)
	want := map[string]string{
		"orphan.qcow2":    "gone.qcow2: no such file or directory",
		"loop-a.qcow2":    "loops",
		"loop-b.qcow2":    "loops",
		"on-fifo.qcow2":   "not a regular file or a block device",
		"disk.vdi":        "VirtualBox VDI",
		"truncated.qcow2": "at byte 0: truncated",
		"hostile.qcow2":   `no\n\x1b[31mred: no such file or directory`,
	}
	got := map[string]string{}
	for _, p := range res.Problems {
		got[filepath.Base(p.Path)] = p.Reason
		if strings.ContainsAny(p.Reason, "\n\x1b") {
			t.Errorf("%s: reason %q holds control characters", p.Path, p.Reason)
		}
		if p.Kind != "error" {
			t.Errorf("%s: kind %q", p.Path, p.Kind)
		}
	}
	for name, frag := range want {
		if !strings.Contains(got[name], frag) {
			t.Errorf("%s: problem %q, want one saying %q", name, got[name], frag)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems %q, want %d", got, len(want))
	}
	c := res.Analysis.Counters
	if c.Errors != uint64(len(want)) || res.Analysis.Histogram.Total().Referenced.Blocks != 16 {
		t.Errorf("%d errors, %d blocks; want %d errors and good.raw's 16 blocks", c.Errors, res.Analysis.Histogram.Total().Referenced.Blocks, len(want))
	}
}

// A guest scan interrupted half way and resumed gives the uninterrupted
// scan's table, byte for byte; the saved scan says it read guests' disks.
func TestGuestSaveResume(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	raw := filepath.Join(t.TempDir(), "raw")
	for i, f := range []string{"a.qcow2", "b.vmdk", "c.vhdx"} {
		data := testkit.Rand(int64(20+i%2), 6<<20) // a and c alike
		copy(data[1<<20:], make([]byte, 1<<20))    // a zero MiB
		testkit.Write(t, raw, data)
		args := map[string][]string{"a.qcow2": {"-c", "-O", "qcow2"}, "b.vmdk": {"-O", "vmdk", "-o", "subformat=streamOptimized"}, "c.vhdx": {"-O", "vhdx"}}[f]
		vdisktest.Run(t, append(append([]string{"convert", "-q", "-f", "raw"}, args...), raw, filepath.Join(dir, f))...)
	}
	set := guestSettings(t)
	set.Compression = "lz4"
	whole := runGuest(t, set, scan.Options{Jobs: 1}, dir)
	want, err := whole.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	save := filepath.Join(t.TempDir(), "scan.ddts")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	part, err := scan.Run(ctx, set, []string{dir}, scan.Options{Jobs: 1, Save: save, Done: func(f analyzer.FileInfo, first, end uint64) {
		if filepath.Base(f.Path) == "b.vmdk" {
			cancel() // in the second image
		}
	}})
	if !errors.Is(err, context.Canceled) || !part.Partial {
		t.Fatalf("interrupted scan: %v", err)
	}
	part.Close()
	sc, err := saved.Read(save, saved.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Model.Guest || sc.Complete {
		t.Errorf("saved: guest %v, complete %v; want true, false", sc.Model.Guest, sc.Complete)
	}
	again, err := scan.Resumable(sc, save)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Guest {
		t.Error("the resumed settings lost --guest")
	}
	res := runGuest(t, again, scan.Options{Save: save, Resume: sc}, dir)
	got, err := res.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Guest || !strings.Contains(textOf(t, got), ", images read as guest disks (--guest)\n") {
		t.Error("the resumed report does not say it read guest disks")
	}
	if got.Zdb != want.Zdb || got.Counters.Files != 3 || got.Counters.ReadBytes != want.Counters.ReadBytes {
		t.Errorf("resumed:\n%s\nuninterrupted:\n%s\ncounters %+v", got.Zdb, want.Zdb, got.Counters)
	}
}

func textOf(t *testing.T, rep *report.Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A backing file named "../base/base.qcow2" is found through a symlinked
// directory as qemu finds it: "link/.." is where the kernel takes it, not
// what cleaning the text gives.
func TestGuestBackingThroughSymlink(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	root := t.TempDir()
	for _, d := range []string{"store/base", "store/vms"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	raw := filepath.Join(t.TempDir(), "raw")
	testkit.Write(t, raw, testkit.Rand(8, 1<<20))
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", raw, filepath.Join(root, "store/base/base.qcow2"))
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-b", "../base/base.qcow2", "-F", "qcow2", filepath.Join(root, "store/vms/web1.qcow2"))
	if err := os.Symlink(filepath.Join(root, "store/vms"), filepath.Join(root, "vms")); err != nil {
		t.Fatal(err)
	}
	res := runGuest(t, guestSettings(t), scan.Options{}, filepath.Join(root, "vms", "web1.qcow2"))
	if len(res.Problems) > 0 || res.Analysis.Counters.ReadBytes != 1<<20 {
		t.Errorf("problems %+v, %d bytes read; want the base's 1 MiB", res.Problems, res.Analysis.Counters.ReadBytes)
	}
}

// A backing file written to while its clone is read, or between a save
// and its resume, is noticed as the image itself would be.
func TestGuestBackingFileChanged(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	raw := filepath.Join(t.TempDir(), "raw")
	testkit.Write(t, raw, testkit.Rand(9, 20<<20)) // three chunks of reading
	base, clone := filepath.Join(dir, "base.qcow2"), filepath.Join(dir, "clone.qcow2")
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", raw, base)
	vdisktest.Run(t, "create", "-q", "-f", "qcow2", "-b", "base.qcow2", "-F", "qcow2", clone)
	touch := func() {
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(base, later, later); err != nil {
			t.Fatal(err)
		}
	}
	set := guestSettings(t)
	// While read: the first run of records done, the base is modified.
	once := false
	res := runGuest(t, set, scan.Options{Jobs: 1, Done: func(analyzer.FileInfo, uint64, uint64) {
		if !once {
			once = true
			touch()
		}
	}}, clone)
	if len(res.Problems) != 1 || res.Problems[0].Kind != "changed" || !strings.Contains(res.Problems[0].Reason, "base.qcow2: size") {
		t.Errorf("base modified while read: problems %+v", res.Problems)
	}
	// Between a save and its resume.
	save := filepath.Join(t.TempDir(), "scan.ddts")
	ctx, cancel := context.WithCancel(context.Background())
	part, err := scan.Run(ctx, set, []string{clone}, scan.Options{Jobs: 1, Save: save, Done: func(analyzer.FileInfo, uint64, uint64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted scan: %v", err)
	}
	part.Close()
	touch()
	sc, err := saved.Read(save, saved.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res = runGuest(t, set, scan.Options{Save: save, Resume: sc}, clone)
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Reason, "changed since the scan was saved") {
		t.Errorf("base modified before the resume: problems %+v", res.Problems)
	}
}

// With --guest a raw disk and the same disk as qcow2 are imported alike:
// the same figures, compression=off included (zeros skipped).
func TestGuestRawLikeQcow2(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	data := testkit.Rand(11, 4<<20)
	copy(data[1<<20:], make([]byte, 1<<20)) // zeros, stored as data by cp
	testkit.Write(t, filepath.Join(dir, "disk.raw"), data)
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", filepath.Join(dir, "disk.raw"), filepath.Join(dir, "disk.qcow2"))
	res := runGuest(t, guestSettings(t), scan.Options{By: "file"}, dir)
	g := res.Breakdown.Groups
	if len(g) != 2 || g[0].Holes != 16 || g[0].Holes != g[1].Holes || g[0].Referenced != g[1].Referenced || g[0].ZeroBlocks != 0 || g[1].ZeroBlocks != 0 {
		t.Errorf("raw and qcow2 differ: %+v", g)
	}
}

// A qcow2 and its external data file in one directory make one disk.
func TestGuestQcow2DataFileOnce(t *testing.T) {
	t.Parallel()
	vdisktest.QemuImg(t)
	dir := t.TempDir()
	raw := filepath.Join(t.TempDir(), "raw")
	testkit.Write(t, raw, testkit.Rand(12, 2<<20))
	vdisktest.Run(t, "convert", "-q", "-f", "raw", "-O", "qcow2", "-o", "data_file="+filepath.Join(dir, "disk.data"), raw, filepath.Join(dir, "disk.qcow2"))
	res := runGuest(t, guestSettings(t), scan.Options{}, dir)
	c := res.Analysis.Counters
	if len(res.Problems) > 0 || c.Files != 1 || c.ImageParts != 1 || c.LogicalBytes != 2<<20 {
		t.Errorf("problems %+v, %d files, %d parts, %d bytes; want one 2 MiB disk and its data file as a part", res.Problems, c.Files, c.ImageParts, c.LogicalBytes)
	}
}
