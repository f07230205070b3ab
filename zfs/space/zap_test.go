package space

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
)

// nameList is a Names of strings.
type nameList []string

func (l nameList) Len() int          { return len(l) }
func (l nameList) Name(i int) []byte { return []byte(l[i]) }

// goldenDirs reads c's files.tsv: every directory's entries (names, in
// byte order) and the bytes its object uses on the pool (st_blocks less
// the 512 of the dnode itself: dmu_object_size_from_db()).
func goldenDirs(t *testing.T, c golden.Case) (entries map[string][]string, used map[string]uint64) {
	b, err := os.ReadFile(filepath.Join(c.Dir, "files.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	entries, used = map[string][]string{}, map[string]uint64{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 {
			continue
		}
		if len(f) != 5 {
			t.Fatalf("%s: files.tsv line %d: %q", c.Name, i+1, line)
		}
		p := f[4]
		dir := path.Dir(p)
		entries[dir] = append(entries[dir], path.Base(p))
		if f[1] == "d" {
			n, err := strconv.ParseUint(f[3], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			used[p] = (n - 1) * 512
			if _, ok := entries[p]; !ok {
				entries[p] = nil
			}
		}
	}
	for _, e := range entries {
		sort.Strings(e)
	}
	return entries, used
}

// TestDirGolden predicts the space of every directory of the golden pools
// (their ZAP objects: microzaps from 2 to 220 entries) and compares it with
// what its object uses on the real pool: all within an allocation unit
// (of all copies) but where the block compresses to about 112 bytes (the
// directory's salt, random, decides whether it is embedded), 95% exact.
func TestDirGolden(t *testing.T) {
	t.Parallel()
	var all, off int
	for _, c := range fileSystemCases(t) {
		p := casePolicy(t, c)
		md := Metadata(p)
		entries, used := goldenDirs(t, c)
		for dir, u := range used {
			b := Dir(md, nameList(entries[dir]))
			// st_blocks rounds the deflated size to 512 bytes.
			dsize := (uint64(md.Copies) * b.ASize >> 9) * p.Vdev.DeflateRatio()
			got := (dsize + 256) >> 9 << 9
			all++
			if got != u {
				off++
				t.Logf("%s: %s (%d entries): %d bytes, real %d (%+v)", c.Name, dir, len(entries[dir]), got, u, b)
				unit := (uint64(md.Copies) * p.Vdev.ASize(p.Vdev.MinAlloc()) >> 9) * p.Vdev.DeflateRatio()
				// At the embedding limit the salt (random) decides.
				boundary := b.Embedded == 1 && b.PSize > 100 || u == 0
				if d := int64(got) - int64(u); (d > int64(unit) || -d > int64(unit)) && !boundary {
					t.Errorf("%s: %s: more than one allocation unit off", c.Name, dir)
				}
			}
		}
	}
	t.Logf("%d directories, %d differ", all, off)
	if off > all/20 {
		t.Errorf("%d of %d directories differ", off, all)
	}
}
