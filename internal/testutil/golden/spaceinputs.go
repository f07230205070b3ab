package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The inputs of the space cases (testdata/golden/space/), generated
// deterministically (rnd, textLike), so that a test can rebuild exactly
// what the oracle copied:
//
//   - "tree": 4,662 files in 370 directories: directories of 10, 100,
//     1,000 and 3,000 entries (the last a fat ZAP), 40 names of 60 bytes
//     (a fat ZAP too), 100 directories of 20 files, a chain 40 deep, 250
//     symlinks (50 with targets of 220 bytes), 100 hard links, 30 empty
//     files; file sizes cycle through 100 B to 140 KB, text-like or
//     random;
//   - "big": four large files: 160 MiB random, 96 MiB of one random 128K
//     block repeated, 64 MiB alternating between that block and random
//     ones, and a 1 GiB sparse file with 300,000-byte islands every 37 MiB.
const (
	SpaceTree = "tree"
	SpaceBig  = "big"
)

// GenerateSpaceInput writes the space input named name (SpaceTree or
// SpaceBig) into dir, which must be empty or missing.
func GenerateSpaceInput(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	switch name {
	case SpaceTree:
		return spaceTree(dir)
	case SpaceBig:
		return spaceBig(dir)
	}
	return fmt.Errorf("golden: no space input %q", name)
}

// spaceTree writes input "tree".
func spaceTree(dir string) error {
	sizes := []int{100, 700, 3000, 9000, 1500, 200, 20000, 5000}
	seed := uint64(1)
	file := func(path string, i int) error {
		seed++
		n := sizes[i%len(sizes)]
		if i%23 == 0 {
			n = 140000
		}
		data := textLike(seed, n)
		if i%3 == 0 {
			data = rnd(seed, n)
		}
		return os.WriteFile(path, data, 0o644)
	}
	flat := func(d string, count, nameLen int) error {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for i := range count {
			name := fmt.Sprintf("f%d_", i)
			name += strings.Repeat("x", max(0, nameLen-len(name)))
			if err := file(filepath.Join(d, name), i); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range []struct {
		name       string
		count, len int
	}{{"d10", 10, 8}, {"d100", 100, 12}, {"d1000", 1000, 12}, {"d3000", 3000, 10}, {"long60", 40, 60}} {
		if err := flat(filepath.Join(dir, d.name), d.count, d.len); err != nil {
			return err
		}
	}
	for i := range 100 {
		if err := flat(filepath.Join(dir, "tree", fmt.Sprintf("%03d", i)), 20, 14); err != nil {
			return err
		}
	}
	links := filepath.Join(dir, "links")
	if err := os.MkdirAll(links, 0o755); err != nil {
		return err
	}
	for i := range 200 {
		if err := os.Symlink(fmt.Sprintf("../d10/f%d_xxxx", i%10), filepath.Join(links, fmt.Sprintf("l%d", i))); err != nil {
			return err
		}
	}
	for i := range 50 {
		if err := os.Symlink("/"+strings.Repeat("very/long/target/", 12)+fmt.Sprint(i), filepath.Join(links, fmt.Sprintf("long%d", i))); err != nil {
			return err
		}
	}
	for i := range 100 {
		name := fmt.Sprintf("f%d_", i)
		name += strings.Repeat("x", max(0, 12-len(name)))
		if err := os.Link(filepath.Join(dir, "d100", name), filepath.Join(links, fmt.Sprintf("h%d", i))); err != nil {
			return err
		}
	}
	d := filepath.Join(dir, "deep")
	for i := range 40 {
		d = filepath.Join(d, fmt.Sprintf("level%02d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := file(filepath.Join(d, "file"), i); err != nil {
			return err
		}
	}
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("empty%d", i)), nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// spaceBig writes input "big", a record (128 KiB) at a time.
func spaceBig(dir string) error {
	const rec = 128 << 10
	block := rnd(1000, rec)
	write := func(name string, records int, pick func(i int) []byte) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		for i := range records {
			if _, err := f.Write(pick(i)); err != nil {
				f.Close()
				return err
			}
		}
		return f.Close()
	}
	if err := write("rand", 160*8, func(i int) []byte { return rnd(uint64(2000+i), rec) }); err != nil {
		return err
	}
	if err := write("repeat", 96*8, func(int) []byte { return block }); err != nil {
		return err
	}
	if err := write("mixed", 64*8, func(i int) []byte {
		if rnd(uint64(9000+i), 1)[0]&1 == 0 {
			return block
		}
		return rnd(uint64(5000+i), rec)
	}); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		return err
	}
	defer f.Close()
	for i := int64(0); i < 1024; i += 37 {
		if _, err := f.WriteAt(rnd(uint64(7000+i), 300000), i<<20); err != nil {
			return err
		}
	}
	return f.Truncate(1 << 30)
}
