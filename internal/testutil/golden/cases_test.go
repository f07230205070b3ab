package golden

import (
	"bufio"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestCases(t *testing.T) {
	t.Parallel()
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	// Every directory under cases/ is a case; the zvol ones hold zvols.tsv.
	ents, err := os.ReadDir(filepath.Join(Root(), "cases"))
	if err != nil {
		t.Fatal(err)
	}
	dirs, vols := 0, 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dirs++
		if _, err := os.Stat(filepath.Join(Root(), "cases", e.Name(), "zvols.tsv")); err == nil {
			vols++
		}
	}
	nvols := 0
	for _, c := range cases {
		if c.Input == "vols" {
			nvols++
		}
	}
	if len(cases) != dirs || nvols != vols || len(cases) < 46 {
		t.Errorf("Cases() found %d cases (%d on volumes); cases/ has %d directories, %d with zvols.tsv (at least 46: 2.3.2, 2.1.11, 2.4.4)",
			len(cases), nvols, dirs, vols)
	}
	if !sort.SliceIsSorted(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name }) {
		t.Error("Cases() not sorted by name")
	}
	byName := map[string]Case{}
	for _, c := range cases {
		byName[c.Name] = c
		if c.Dir != filepath.Join(Root(), "cases", c.Name) {
			t.Errorf("%s: Dir = %q", c.Name, c.Dir)
		}
		if c.Input == "vols" {
			if c.Zvol == "" || c.Release == "" || c.Vdevs == "" || c.Sparse != "never" || c.Props["compression"] == "" || c.Props["recordsize"] != "" {
				t.Errorf("%s: incomplete zvol case: %+v", c.Name, c)
			}
			continue
		}
		if c.Input != "all" || c.Zvol != "" || c.Release == "" || c.Vdevs == "" || c.Sparse == "" || c.Props["compression"] == "" || c.Props["recordsize"] == "" {
			t.Errorf("%s: incomplete: %+v", c.Name, c)
		}
	}
	// Values from the cases' case.env files.
	for _, want := range []Case{
		{Name: "lz4-128k-a9", Input: "all", Release: "2.3.2", Vdevs: "stripe 1", Ashift: 9, Sparse: "always",
			Props: map[string]string{"compression": "lz4", "recordsize": "128K"}},
		{Name: "lz4-draid2x8-a12", Input: "all", Release: "2.3.2", Vdevs: "draid2 8", Ashift: 12, Sparse: "always",
			Props: map[string]string{"compression": "lz4", "recordsize": "128K"}},
		{Name: "v21-lz4-128k-a12-dedup", Input: "all", Release: "2.1.11", Vdevs: "stripe 1", Ashift: 12, Sparse: "always",
			Props: map[string]string{"compression": "lz4", "recordsize": "128K", "dedup": "on"}},
		{Name: "off-128k-a12-auto", Input: "all", Release: "2.3.2", Vdevs: "stripe 1", Ashift: 12, Sparse: "auto",
			Props: map[string]string{"compression": "off", "recordsize": "128K"}},
		{Name: "off-raidz3x8-a12-never", Input: "all", Release: "2.3.2", Vdevs: "raidz3 8", Ashift: 12, Sparse: "never",
			Props: map[string]string{"compression": "off", "recordsize": "128K"}},
		{Name: "lz4-128k-a12-copies3", Input: "all", Release: "2.3.2", Vdevs: "stripe 1", Ashift: 12, Sparse: "always",
			Props: map[string]string{"compression": "lz4", "recordsize": "128K", "copies": "3"}},
		{Name: "zstdfast1-128k-a12", Input: "all", Release: "2.3.2", Vdevs: "stripe 1", Ashift: 12, Sparse: "always",
			Props: map[string]string{"compression": "zstd-fast-1", "recordsize": "128K"}},
		{Name: "zvol-lz4-default-raidz2x6-a12", Input: "vols", Release: "2.3.2", Vdevs: "raidz2 6", Ashift: 12, Sparse: "never",
			Props: map[string]string{"compression": "lz4"}, Zvol: "default"},
		{Name: "v24-zvol-lz4-default-a12", Input: "vols", Release: "2.4.4", Vdevs: "stripe 1", Ashift: 12, Sparse: "never",
			Props: map[string]string{"compression": "lz4"}, Zvol: "default"},
		{Name: "v24-lz4-128k-a12-dedup", Input: "all", Release: "2.4.4", Vdevs: "stripe 1", Ashift: 12, Sparse: "always",
			Props: map[string]string{"compression": "lz4", "recordsize": "128K", "dedup": "on"}},
		{Name: "zvol-zstd-64k-a12-dedup", Input: "vols", Release: "2.3.2", Vdevs: "stripe 1", Ashift: 12, Sparse: "never",
			Props: map[string]string{"compression": "zstd", "dedup": "on"}, Zvol: "64K"},
	} {
		got, ok := byName[want.Name]
		if !ok {
			t.Errorf("case %s not found", want.Name)
			continue
		}
		want.Dir = got.Dir
		want.Env = got.Env
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %s:\n got %+v\nwant %+v", want.Name, got, want)
		}
		keys := 6
		if want.Zvol != "" || want.Release == "2.4.4" {
			keys++ // zvol= (the 2.4.4 runs write it empty for a dataset case)
		}
		if got.Env["vdevs"] != want.Vdevs || len(got.Env) != keys {
			t.Errorf("case %s: Env = %q", want.Name, got.Env)
		}
		found, err := FindCase(want.Name)
		if err != nil || !reflect.DeepEqual(found, got) {
			t.Errorf("FindCase(%q) = %+v, %v", want.Name, found, err)
		}
	}
	for _, bad := range []string{"", "..", "../cases/lz4-128k-a9", "no-such-case"} {
		if _, err := FindCase(bad); err == nil {
			t.Errorf("FindCase(%q): no error", bad)
		}
	}
}

func TestParseEnv(t *testing.T) {
	t.Parallel()
	in := `# comment
  # indented comment

a=plain
b="two words"   # trailing comment
c='single $quoted'
export d=x"y z"'w'
e=
f=""
g="esc \" \\ \$ \n"
h=a\ b
i=x#y
`
	got, err := parseEnv(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a": "plain", "b": "two words", "c": "single $quoted", "d": "xy zw", "e": "", "f": "",
		"g": `esc " \ $ \n`, "h": "a b", "i": "x#y",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseEnv:\n got %q\nwant %q", got, want)
	}
	for _, bad := range []string{"novalue", "1a=x", "a b=c", `a="open`, "a='open", "a=$HOME", `a="$x"`, "a=x y", "a=x\\"} {
		if m, err := parseEnv(strings.NewReader(bad)); err == nil {
			t.Errorf("parseEnv(%q) = %q, want an error", bad, m)
		}
	}
}

func TestZdbS(t *testing.T) {
	t.Parallel()
	c, err := FindCase("lz4-128k-a12")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.ZdbS()
	if err != nil {
		t.Fatal(err)
	}
	// From testdata/golden/cases/lz4-128k-a12/zdb-S.txt.
	if !strings.HasPrefix(s, "Simulated DDT histogram:\n") ||
		!strings.Contains(s, " Total      518   31.6M   21.4M   21.6M      755   52.4M   40.7M   41.0M\n") ||
		!strings.HasSuffix(s, "dedup = 1.90, compress = 1.29, copies = 1.01, dedup * compress / copies = 2.43\n\n") {
		t.Errorf("ZdbS() = %q", s)
	}
}

func TestObjectsLz4(t *testing.T) {
	t.Parallel()
	c, err := FindCase("lz4-128k-a12")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := c.Objects()
	if err != nil {
		t.Fatal(err)
	}
	// Expected values read from testdata/golden/cases/lz4-128k-a12/zdb-ddddd-objects.txt.gz.
	if len(objs) != 390 {
		t.Errorf("%d objects, want 390", len(objs))
	}
	want := map[string][]Block{
		"/synthetic/tiny-100":  {{Offset: 0, LSize: 0x200, PSize: 0x5d, Embedded: true}},
		"/binaries/LICENSE":    {{Offset: 0, LSize: 0x600, PSize: 0x600}},
		"/synthetic/empty":     {},
		"/synthetic/zeros-2m":  {},
		"/synthetic/one-byte":  {{Offset: 0, LSize: 0x200, PSize: 0x11, Embedded: true}},
		"/synthetic/rec-exact": {{Offset: 0, LSize: 0x20000, PSize: 0x20000}},
	}
	for path, w := range want {
		got, ok := objs[path]
		if !ok || got == nil || !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %+v (present %v), want %+v", path, got, ok, w)
		}
	}
	asm := objs["/binaries/asm"]
	if len(asm) != 39 {
		t.Fatalf("/binaries/asm: %d L0 blocks, want 39", len(asm))
	}
	for i, w := range map[int]Block{
		0:  {Offset: 0, LSize: 0x20000, PSize: 0x15000},
		1:  {Offset: 0x20000, LSize: 0x20000, PSize: 0x17000},
		23: {Offset: 0x2e0000, LSize: 0x20000, PSize: 0x20000},
		38: {Offset: 0x4c0000, LSize: 0x20000, PSize: 0x4000},
	} {
		if asm[i] != w {
			t.Errorf("/binaries/asm block %d = %+v, want %+v", i, asm[i], w)
		}
	}
	// sparse-4m: 8 records, the 2 MiB hole, 8 records.
	sp := objs["/synthetic/sparse-4m"]
	if len(sp) != 16 || sp[7].Offset != 0xe0000 || sp[8].Offset != 0x300000 || sp[15].Offset != 0x3e0000 {
		t.Errorf("/synthetic/sparse-4m: %+v", sp)
	}
}

// rawListing reads a case's listing with no parsing beyond line matching.
func rawListing(t *testing.T, c Case) (l0, embedded int) {
	t.Helper()
	f, err := os.Open(filepath.Join(c.Dir, "zdb-ddddd-objects.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if l := sc.Text(); strings.Contains(l, " L0 ") && !strings.Contains(l, "[L0 ") {
			l0++
			if strings.Contains(l, " EMBEDDED ") {
				embedded++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return l0, embedded
}

// filesTSV returns the pool-relative paths of the regular files in a case's
// files.tsv.
func filesTSV(t *testing.T, c Case) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Dir, "files.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("files.tsv line %d: %q", i+1, line)
		}
		if i > 0 && f[1] == "f" {
			paths = append(paths, "/"+f[4])
		}
	}
	return paths
}

// zdbSRefBlocks returns the referenced blocks of zdb -S's Total line: exact,
// or a value and its rounding tolerance when printed as "3.45K" or "13.1K".
func zdbSRefBlocks(t *testing.T, c Case) (float64, float64) {
	t.Helper()
	s, err := c.ZdbS()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 9 && f[0] == "Total" {
			v := f[5]
			if k, ok := strings.CutSuffix(v, "K"); ok {
				x, err := strconv.ParseFloat(k, 64)
				if err != nil {
					t.Fatal(err)
				}
				dec := 0
				if _, frac, ok := strings.Cut(k, "."); ok {
					dec = len(frac)
				}
				return x * 1024, 0.5 * math.Pow(10, -float64(dec)) * 1024
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return x, 0
		}
	}
	t.Fatalf("%s: no Total line in zdb-S.txt", c.Name)
	return 0, 0
}

func TestObjectsAllCases(t *testing.T) {
	t.Parallel()
	cases, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Zvol != "" {
			// zdb -ddddd of the pool's datasets: a volume's blocks are
			// not in the listing (it is empty for the zvol cases).
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			objs, err := c.Objects()
			if err != nil {
				t.Fatal(err)
			}
			// Every regular file of files.tsv, and nothing else, is listed.
			paths := filesTSV(t, c)
			if len(objs) != len(paths) {
				t.Errorf("%d objects, files.tsv has %d regular files", len(objs), len(paths))
			}
			for _, p := range paths {
				if _, ok := objs[p]; !ok {
					t.Errorf("%s: in files.tsv, not in Objects()", p)
				}
			}
			// Every L0 line is parsed.
			l0, emb := rawListing(t, c)
			n, e := 0, 0
			for path, blocks := range objs {
				for i, b := range blocks {
					n++
					if b.Embedded {
						e++
					}
					if b.LSize == 0 || b.PSize == 0 || b.PSize > b.LSize {
						t.Errorf("%s block %d: %+v", path, i, b)
					}
					if i > 0 && b.Offset <= blocks[i-1].Offset {
						t.Errorf("%s block %d: offset %#x not ascending", path, i, b.Offset)
					}
				}
			}
			if n != l0 || e != emb {
				t.Errorf("parsed %d L0 blocks (%d embedded), listing has %d (%d)", n, e, l0, emb)
			}
			// zdb -S counts the non-embedded L0 blocks.
			want, tol := zdbSRefBlocks(t, c)
			if got := float64(n - e); math.Abs(got-want) > tol {
				t.Errorf("%v non-embedded L0 blocks, zdb -S Total references %v", got, want)
			}
		})
	}
}

func TestParseObjectsFormats(t *testing.T) {
	t.Parallel()
	// Hand-written listing: DVA forms that zdb prints with more d's (several
	// DVAs) or other vdev ids, nested levels, embedded and empty files.
	in := "Dataset tank [ZPL], ID 54, cr_txg 1, 41.4M, 422 objects, rootbp DVA[0]=<0:2299a000:1000> [L0 DMU objset] size=1000L/1000P\n" +
		"\n" +
		"    Object  lvl   iblk   dblk  dsize  dnsize  lsize   %full  type\n" +
		"         4    3   128K   128K  2.77M     512  4.88M  100.00  ZFS plain file\n" +
		"\tpath\t/dir/with space\n" +
		"\tsize\t5020684\n" +
		"Indirect blocks:\n" +
		"               0 L2  0:1000:1000 20000L/400P F=3 B=9/9 cksum=1:2:3:4\n" +
		"               0  L1  0:2000:1000 0:3000:1000 20000L/400P F=3 B=9/9 cksum=1:2:3:4\n" +
		"               0   L0 0:21dc8000:15000 1:21ddd000:15000 2:3:15000 20000L/15000P F=1 B=9/9 cksum=1:2:3:4\n" +
		"           20000   L0 0:1034a8000:20000 20000L/18000P F=1 B=9/9 cksum=1:2:3:4\n" +
		"           40000   L0 EMBEDDED et=0 20000L/5dP B=10\n" +
		"\n" +
		"\t\tsegment [0000000000000000, 0000000000060000) size  384K\n" +
		"\n" +
		"    Object  lvl   iblk   dblk  dsize  dnsize  lsize   %full  type\n" +
		"         5    1   128K    512      0     512    512    0.00  ZFS plain file\n" +
		"\tpath\t/empty\n" +
		"Indirect blocks:\n" +
		"\n"
	got, err := parseObjects(strings.NewReader(in), false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Block{
		"/dir/with space": {
			{Offset: 0, LSize: 0x20000, PSize: 0x15000},
			{Offset: 0x20000, LSize: 0x20000, PSize: 0x18000},
			{Offset: 0x40000, LSize: 0x20000, PSize: 0x5d, Embedded: true},
		},
		"/empty": {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseObjects:\n got %+v\nwant %+v", got, want)
	}
	tree, err := parseObjects(strings.NewReader(in), true)
	if err != nil {
		t.Fatal(err)
	}
	wantTree := []Block{
		{Offset: 0, LSize: 0x20000, PSize: 0x400, Level: 2, Fill: 3, Checksum: "1:2:3:4"},
		{Offset: 0, LSize: 0x20000, PSize: 0x400, Level: 1, Fill: 3, Checksum: "1:2:3:4"},
		{Offset: 0, LSize: 0x20000, PSize: 0x15000, Fill: 1, Checksum: "1:2:3:4"},
		{Offset: 0x20000, LSize: 0x20000, PSize: 0x18000, Fill: 1, Checksum: "1:2:3:4"},
		{Offset: 0x40000, LSize: 0x20000, PSize: 0x5d, Embedded: true},
	}
	if !reflect.DeepEqual(tree["/dir/with space"], wantTree) {
		t.Errorf("parseObjects, all levels:\n got %+v\nwant %+v", tree["/dir/with space"], wantTree)
	}

	head := "    Object  lvl\n\tpath\t/f\nIndirect blocks:\n"
	for name, bad := range map[string]string{
		"no size":     head + "  0 L0 0:1:1000 F=1 B=9/9\n",
		"two sizes":   head + "  0 L0 0:1:1000 200L/200P 200L/200P\n",
		"bad offset":  head + "  zz L0 0:1:1000 200L/200P\n",
		"junk":        head + "  something else\n",
		"no path":     "    Object  lvl\nIndirect blocks:\n  0 L0 0:1:1000 200L/200P\n",
		"dup path":    head + "    Object  lvl\n\tpath\t/f\n",
		"huge offset": head + "  10000000000000000 L0 0:1:1000 200L/200P\n",
	} {
		if m, err := parseObjects(strings.NewReader(bad), false); err == nil {
			t.Errorf("%s: parseObjects = %+v, want an error", name, m)
		}
	}
}
