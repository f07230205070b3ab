//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
)

// A scan drops from the page cache what it read of files of 64 KiB or
// more (--no-cache, the default), and leaves it there with --cache; the
// report is the same either way, and the files scanned are not written
// (their size, mtime and ctime, and bytes, are what they were).
func TestCacheFlag(t *testing.T) {
	if emu := os.Getenv("DDTSIM_TEST_EXEC"); emu != "" {
		// Under qemu-user (linux/arm64 in .ci/run) the 200 KiB file was
		// still wholly cached after the scan (50 pages), the 24 MiB one
		// not; not investigated (the pagecache tool's mincore and fadvise
		// behave under it as natively).
		t.Skipf("under the emulator %s the small file's pages stay cached: not investigated (docs/platforms.md)", emu)
	}
	dir := t.TempDir()
	testkit.NeedDroppableCache(t, dir)
	// 24 MiB, records repeated (dedup) and compressible: three chunks
	// of the scan's workers.
	rec := testkit.Rand(7, 128<<10)
	var big []byte
	for i := range 192 {
		if i%3 == 0 {
			big = append(big, rec...)
		} else {
			big = append(big, testkit.Rand(int64(i), 64<<10)...)
			big = append(big, make([]byte, 64<<10)...)
		}
	}
	files := map[string][]byte{
		"big":    big,
		"medium": testkit.Rand(8, 200<<10),
		"small":  testkit.Rand(9, 1000),
	}
	type stamp struct {
		size         int64
		mtime, ctime unix.Timespec
	}
	stamps := map[string]stamp{}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		testkit.Evict(t, p)
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		stamps[name] = stamp{st.Size, st.Mtim, st.Ctim}
	}
	scan := func(flags ...string) string {
		t.Helper()
		for name := range files {
			testkit.Evict(t, filepath.Join(dir, name))
		}
		code, out, errs := runT(append(append([]string{"--zdb"}, flags...), dir)...)
		if code != 0 {
			t.Fatalf("ddtsim --zdb %v: exit %d, %s", flags, code, errs)
		}
		return out
	}

	def := scan()
	for _, name := range []string{"big", "medium"} {
		if n := testkit.ResidentPages(t, filepath.Join(dir, name)); n != 0 {
			t.Errorf("default: %d pages of %s cached after the scan; want none", n, name)
		}
	}
	if n := testkit.ResidentPages(t, filepath.Join(dir, "small")); n == 0 {
		t.Errorf("default: the small file's page was dropped (files under 64 KiB are left alone)")
	}
	if out := scan("--no-cache"); out != def {
		t.Errorf("--no-cache printed\n%s\nthe default\n%s", out, def)
	}
	kept := scan("--cache")
	if kept != def {
		t.Errorf("--cache printed\n%s\nthe default\n%s", kept, def)
	}
	for _, name := range []string{"big", "medium"} {
		p := filepath.Join(dir, name)
		if n, all := testkit.ResidentPages(t, p), len(testkit.Resident(t, p)); n < all/2 {
			t.Errorf("--cache: %d of %d pages of %s cached after the scan; want them kept", n, all, name)
		}
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		if got := (stamp{st.Size, st.Mtim, st.Ctim}); got != stamps[name] {
			t.Errorf("%s: size, mtime, ctime %+v after the scans; before %+v", name, got, stamps[name])
		}
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, data) {
			t.Errorf("%s: its bytes changed (%v)", name, err)
		}
	}
}

// sweep drops what it read from the page cache as scan does, and keeps it
// with --cache.
func TestSweepCacheFlag(t *testing.T) {
	dir := t.TempDir()
	testkit.NeedDroppableCache(t, dir)
	p := filepath.Join(dir, "big")
	if err := os.WriteFile(p, testkit.Rand(3, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{nil, {"--cache"}} {
		testkit.Evict(t, p)
		args := append(append([]string{"sweep", "-o", "recordsize=64K,128K", "-o", "compression=off,lz4"}, flags...), dir)
		if code, _, errs := runT(args...); code != 0 {
			t.Fatalf("%q: exit %d, %s", args, code, errs)
		}
		n, all := testkit.ResidentPages(t, p), len(testkit.Resident(t, p))
		switch {
		case flags == nil && n != 0:
			t.Errorf("sweep: %d of %d pages cached after it; want none", n, all)
		case flags != nil && n < all/2:
			t.Errorf("sweep --cache: %d of %d pages cached after it; want them kept", n, all)
		}
	}
}
