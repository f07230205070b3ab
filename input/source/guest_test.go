package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// With Walker.Guest, a file the hook opens as a disk is yielded as that
// disk (size, data, always sparse; raw files sparse too), parts are
// skipped and counted, and a change to the image file is noticed.
func TestGuestHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// disk.img: 1 MiB with data in its second 64K only (a hole before).
	f, err := os.Create(filepath.Join(dir, "disk.img"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(randBytes(1, 64<<10), 64<<10); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	writeFile(t, filepath.Join(dir, "part.bin"), []byte("read through disk.img"))
	writeFile(t, filepath.Join(dir, "plain.txt"), []byte("a raw file"))
	w := &Walker{Paths: []string{dir},
		Guest: func(f *os.File, path string) (vdisk.Disk, error) {
			if strings.HasSuffix(path, ".img") {
				return vdisk.Raw(f)
			}
			return nil, nil
		},
		GuestParts: func(d string, names []string) map[string]string {
			if d != dir || len(names) != 3 {
				t.Errorf("GuestParts(%q, %q)", d, names)
			}
			return map[string]string{"part.bin": "disk.img"}
		},
	}
	var files []*File
	c := w.Walk(context.Background(), func(f *File) { files = append(files, f) }, func(p string, err error) { t.Errorf("%s: %v", p, err) })
	if len(files) != 2 || c.Files != 2 || c.ImageParts != 1 {
		t.Fatalf("%d files yielded, counters %+v; want disk.img and plain.txt, one part", len(files), c)
	}
	disk, plain := files[0], files[1]
	data := Extent{Off: 64 << 10, End: 128 << 10}
	if runtime.GOOS == "windows" {
		data = Extent{Off: 0, End: 1 << 20} // not marked sparse: no holes
	}
	if disk.Size != 1<<20 || !disk.LooksSparse || len(disk.Data) != 1 || disk.Data[0] != data {
		t.Errorf("disk.img: size %d, sparse %v, data %v", disk.Size, disk.LooksSparse, disk.Data)
	}
	// A raw file of a walk with Guest is copied as images are (sparse).
	if plain.Size != 10 || !plain.LooksSparse || len(plain.Data) != 1 || plain.Data[0] != (Extent{Off: 0, End: 10}) {
		t.Errorf("plain.txt: %+v", plain)
	}
	buf := make([]byte, 4)
	if n, err := disk.ReadAt(buf, 64<<10); n != 4 || err != nil || string(buf) != string(randBytes(1, 4)) {
		t.Errorf("ReadAt = %d, %v", n, err)
	}
	if err := disk.Changed(); err != nil {
		t.Errorf("unchanged image: %v", err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "disk.img"), later, later); err != nil {
		t.Fatal(err)
	}
	if err := disk.Changed(); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "image size 1048576") {
		t.Errorf("touched image: %v", err)
	}
	for _, f := range files {
		f.Close()
	}
}
