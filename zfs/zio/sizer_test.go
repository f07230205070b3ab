package zio

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/compresstest"
	"github.com/ddtsim/ddtsim/internal/testutil/golden"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := golden.Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	os.Exit(code)
}

// sizeOnly are the compressions whose compressors are Sizers.
var sizeOnly = []Compression{LZ4, LZJB, ZLE}

func TestSizers(t *testing.T) {
	t.Parallel()
	for _, c := range sizeOnly {
		comp, err := NewCompressor(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := comp.(Sizer); !ok {
			t.Errorf("%v: compressor %T is not a Sizer", c, comp)
		}
	}
}

// compressOutcome is Write done the way it was before Sizer: the block
// compressed into a buffer of capacity D (no zstd here).
func compressOutcome(t *testing.T, p *Policy, data []byte) Block {
	t.Helper()
	lsize := uint64(len(data))
	d := p.MaxCompressedSize(lsize)
	if d == 0 {
		return Block{Kind: Stored, PSize: lsize, Compression: Off}
	}
	comp, err := NewCompressor(p.Compression, p.Level)
	if err != nil {
		t.Fatal(err)
	}
	c, err := comp.Compress(make([]byte, d), data)
	return p.Outcome(lsize, uint64(c), err == nil && uint64(c) <= d)
}

// TestWriteSizeOnly checks that Write, which only sizes lz4, lzjb and zle
// output, decides as compressing would, for releases of every capacity
// band and both ashifts, on the generators' blocks of several sizes.
func TestWriteSizeOnly(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(31, 32))
	var blocks [][]byte
	for _, n := range []int{512, 1024, 4096, 4608, 5120, 16384, 131072} {
		for _, g := range compresstest.Generators {
			blocks = append(blocks, g.Gen(r, n))
		}
		// Compressible to around the embedding limit and the capacity.
		blocks = append(blocks, append(make([]byte, n-100), compresstest.Random(r, 100)...))
		blocks = append(blocks, append(compresstest.Random(r, n-n/8-40), make([]byte, n/8+40)...))
	}
	for _, rel := range []string{"0.6.4", "0.6.5", "2.1.11", "2.3.2"} {
		for _, ashift := range []int{9, 12} {
			for _, c := range sizeOnly {
				if c == LZ4 && rel == "0.6.4" {
					c = LZJB
				}
				p := policy(t, ashift, c, 1)
				var err error
				if p.Release, err = LookupRelease(rel); err != nil {
					t.Fatal(err)
				}
				w := NewWriter(p)
				if w.sizer == nil || w.out != nil {
					t.Fatalf("%s %v: Writer sizer %v, buffer of %d bytes", rel, c, w.sizer, len(w.out))
				}
				for _, data := range blocks {
					if got, want := w.Write(data), compressOutcome(t, p, data); got != want {
						t.Fatalf("%s ashift %d %v, %d bytes: Write = %+v, compressing gives %+v", rel, ashift, c, len(data), got, want)
					}
				}
			}
		}
	}
}

// goldenBlockSize returns the block size of a golden case: its volblocksize
// for a zvol case, else its recordsize.
func goldenBlockSize(t *testing.T, c golden.Case, r *Release, v Vdev) uint32 {
	t.Helper()
	if c.Zvol == "default" {
		return DefaultVolBlockSize(r, v)
	}
	v2, ok := c.Props["recordsize"]
	if c.Zvol != "" {
		v2, ok = c.Zvol, true
	}
	if !ok {
		return 128 << 10
	}
	n, err := strconv.Atoi(strings.TrimRight(v2, "KM"))
	if err != nil {
		t.Fatalf("%s: block size %q", c.Name, v2)
	}
	switch {
	case strings.HasSuffix(v2, "K"):
		n <<= 10
	case strings.HasSuffix(v2, "M"):
		n <<= 20
	}
	return uint32(n)
}

// goldenFiles returns the contents of every regular file under roots,
// sorted by path.
func goldenFiles(t *testing.T, roots []string) [][]byte {
	t.Helper()
	var paths []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(paths)
	files := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	return files
}

// TestSizeGolden checks, for lz4, lzjb and zle, that Size returns what
// Compress returns on every record of every golden input file, cut as each
// golden case cuts it (its recordsize, or as volumes of its volblocksize),
// with the capacity ZFS gives it under the case's release and pool, and
// with the capacity at which the output just fits and one byte less.
func TestSizeGolden(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sizes the golden inputs (about 55 MB) several times")
	}
	cases, err := golden.Cases()
	if err != nil {
		t.Fatal(err)
	}
	// The policies of the cases, by input and block size: blocks are cut
	// the same way within a group, only the capacities differ.
	type group struct {
		zvol bool
		bs   uint32
	}
	policies := map[group][]*Policy{}
	for _, c := range cases {
		rel, err := LookupRelease(c.Release)
		if err != nil {
			t.Fatal(err)
		}
		pool, err := NewPool([]string{c.Vdevs}, c.Ashift)
		if err != nil {
			t.Fatal(err)
		}
		g := group{zvol: c.Zvol != "", bs: goldenBlockSize(t, c, rel, pool)}
		for _, comp := range sizeOnly {
			policies[g] = append(policies[g], &Policy{Release: rel, RecordSize: g.bs, Compression: comp, Copies: 1, Vdev: pool})
		}
	}
	roots, err := golden.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	vols, err := golden.Vols()
	if err != nil {
		t.Fatal(err)
	}
	files := map[bool][][]byte{false: goldenFiles(t, roots), true: goldenFiles(t, []string{vols})}
	comps := map[Compression]Compressor{}
	for _, c := range sizeOnly {
		if comps[c], err = NewCompressor(c, 0); err != nil {
			t.Fatal(err)
		}
	}
	groups := make([]group, 0, len(policies))
	for g := range policies {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b group) int {
		if a.zvol != b.zvol {
			return map[bool]int{false: -1, true: 1}[a.zvol]
		}
		return int(a.bs) - int(b.bs)
	})
	dst := make([]byte, 16<<20)
	for _, g := range groups {
		name := fmt.Sprintf("files-%d", g.bs)
		if g.zvol {
			name = fmt.Sprintf("zvols-%d", g.bs)
		}
		t.Run(name, func(t *testing.T) {
			checked := 0
			buf := make([]byte, g.bs)
			for _, f := range files[g.zvol] {
				if len(f) == 0 {
					continue // no block
				}
				lsize, nrec := FileRecords(uint64(len(f)), g.bs)
				if g.zvol {
					lsize, nrec = ZvolRecords(uint64(len(f)), g.bs)
				}
				for i := range nrec {
					off := i * uint64(lsize)
					data := buf[:lsize]
					clear(data[copy(data, f[min(off, uint64(len(f))):]):])
					for _, c := range sizeOnly {
						comp := comps[c]
						var limits []int
						for _, p := range policies[g] {
							if p.Compression == c {
								if d := int(p.MaxCompressedSize(uint64(lsize))); d > 0 && !slices.Contains(limits, d) {
									limits = append(limits, d)
								}
							}
						}
						for k, d := range limits {
							n, err := comp.Compress(dst[:d], data)
							checkSize(t, comp, data, d, n, err)
							if k == 0 && err == nil {
								for _, d := range []int{n, max(n-1, 0)} {
									n, err := comp.Compress(dst[:d], data)
									checkSize(t, comp, data, d, n, err)
								}
							}
							checked++
						}
					}
				}
			}
			t.Logf("%d blocks and capacities checked", checked)
		})
	}
}

// checkSize fails the test unless comp's Size of data with limit d agrees
// with n, err, what its Compress returned.
func checkSize(t *testing.T, comp Compressor, data []byte, d, n int, err error) {
	t.Helper()
	got, ok := comp.(Sizer).Size(data, d)
	if ok != (err == nil) || got != n {
		t.Fatalf("%T, %d bytes, capacity %d: Size = %d, %v; Compress = %d, %v", comp, len(data), d, got, ok, n, err)
	}
}
