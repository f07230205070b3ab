package golden

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Case is one golden case: one run of real OpenZFS on a fresh pool, stored in
// testdata/golden/cases/<Name>. The fields come from the case's case.env (see
// testdata/golden/README.md).
type Case struct {
	// Name is the case directory's name, such as "lz4-128k-a12".
	Name string
	// Dir is the absolute path of the case directory.
	Dir string
	// Input names the input tree that was copied into the pool ("all": the
	// three roots returned by Inputs).
	Input string
	// Release is the OpenZFS kernel module version, such as "2.3.2".
	Release string
	// Vdevs is the pool layout as given to zpool create, such as "stripe 1",
	// "mirror 2", "raidz2 6" or "draid2 8".
	Vdevs string
	// Sparse is the cp --sparse= mode of the copy: "always", "never" or "auto".
	Sparse string
	// Ashift is the pool's ashift (9 or 12 here).
	Ashift int
	// Props holds the dataset properties that were set, such as
	// {"compression": "lz4", "recordsize": "128K"}; unlisted ones are ZFS
	// defaults.
	Props map[string]string
	// Zvol is "" for a dataset case; for a zvol case (Input "vols") the
	// volblocksize each volume was created with, such as "16K", or
	// "default" when zfs create -V chose it.
	Zvol string
	// Env holds every key of case.env with its unquoted value, including the
	// ones above.
	Env map[string]string
}

// caseKeys are the case.env keys every case must set.
var caseKeys = []string{"input", "release", "vdevs", "ashift", "sparse", "props"}

// Cases parses testdata/golden/cases/*/case.env and returns every case,
// sorted by name.
func Cases() ([]Case, error) {
	dirs, err := filepath.Glob(filepath.Join(Root(), "cases", "*", "case.env"))
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("golden: no cases under %s", filepath.Join(Root(), "cases"))
	}
	var cases []Case
	for _, env := range dirs {
		c, err := loadCase(filepath.Dir(env))
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, nil
}

// SpaceCases parses testdata/golden/space/*/case.env: the cases made for
// the space model (zfs list, zpool list), whose input is SpaceTree or
// SpaceBig (GenerateSpaceInput), sorted by name.
func SpaceCases() ([]Case, error) {
	dirs, err := filepath.Glob(filepath.Join(Root(), "space", "*", "case.env"))
	if err != nil {
		return nil, err
	}
	var cases []Case
	for _, env := range dirs {
		c, err := loadCase(filepath.Dir(env))
		if err != nil {
			return nil, err
		}
		if c.Input != SpaceTree && c.Input != SpaceBig {
			return nil, fmt.Errorf("golden: %s: input %q is not a space input", env, c.Input)
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases, nil
}

// FindCase returns the case called name (a directory of testdata/golden/cases).
func FindCase(name string) (Case, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return Case{}, fmt.Errorf("golden: bad case name %q", name)
	}
	return loadCase(filepath.Join(Root(), "cases", name))
}

// loadCase reads dir/case.env.
func loadCase(dir string) (Case, error) {
	p := filepath.Join(dir, "case.env")
	f, err := os.Open(p)
	if err != nil {
		return Case{}, fmt.Errorf("golden: %w", err)
	}
	defer f.Close()
	env, err := parseEnv(f)
	if err != nil {
		return Case{}, fmt.Errorf("golden: %s: %w", p, err)
	}
	for _, k := range caseKeys {
		if _, ok := env[k]; !ok {
			return Case{}, fmt.Errorf("golden: %s: no %s", p, k)
		}
	}
	c := Case{
		Name:    filepath.Base(dir),
		Dir:     dir,
		Input:   env["input"],
		Release: env["release"],
		Vdevs:   env["vdevs"],
		Sparse:  env["sparse"],
		Props:   map[string]string{},
		Zvol:    env["zvol"],
		Env:     env,
	}
	if c.Ashift, err = strconv.Atoi(env["ashift"]); err != nil {
		return Case{}, fmt.Errorf("golden: %s: ashift: %w", p, err)
	}
	for _, kv := range strings.Fields(env["props"]) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return Case{}, fmt.Errorf("golden: %s: props: %q is not key=value", p, kv)
		}
		c.Props[k] = v
	}
	return c, nil
}

var envKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseEnv parses shell-like assignments, one a line: KEY=value, KEY="a b",
// KEY='a b' (quoted and unquoted parts may be joined, as in the shell; a
// backslash escapes the next character outside single quotes, and only $ ` "
// \ inside double quotes). Empty lines and lines starting with # are skipped, a
// # after whitespace starts a comment, and an "export " prefix is allowed.
// Expansions ($, `) are refused. A later assignment of a key wins.
func parseEnv(r io.Reader) (map[string]string, error) {
	env := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export "); ok {
			line = strings.TrimLeft(rest, " \t")
		}
		key, rest, ok := strings.Cut(line, "=")
		if !ok || !envKey.MatchString(key) {
			return nil, fmt.Errorf("line %d: not KEY=value: %q", n, line)
		}
		val, err := shellWord(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", n, key, err)
		}
		env[key] = val
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return env, nil
}

// shellWord unquotes the shell word at the start of s; what follows it must be
// empty or a comment.
func shellWord(s string) (string, error) {
	var b strings.Builder
	i := 0
loop:
	for i < len(s) {
		switch c := s[i]; c {
		case ' ', '\t':
			break loop
		case '$', '`':
			return "", fmt.Errorf("expansion %q not supported", c)
		case '\\':
			if i+1 >= len(s) {
				return "", errors.New("trailing backslash")
			}
			b.WriteByte(s[i+1])
			i += 2
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", errors.New("unterminated single quote")
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case '"':
			i++
			for {
				if i >= len(s) {
					return "", errors.New("unterminated double quote")
				}
				c := s[i]
				if c == '"' {
					i++
					break
				}
				if c == '$' || c == '`' {
					return "", fmt.Errorf("expansion %q not supported", c)
				}
				if c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					c = s[i+1]
					i++
				}
				b.WriteByte(c)
				i++
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	if rest := strings.TrimLeft(s[i:], " \t"); rest != "" && rest[0] != '#' {
		return "", fmt.Errorf("unexpected %q after the value", rest)
	}
	return b.String(), nil
}

// ZdbS returns the case's zdb-S.txt: what zdb -S printed, exactly.
func (c Case) ZdbS() (string, error) {
	b, err := os.ReadFile(filepath.Join(c.Dir, "zdb-S.txt"))
	if err != nil {
		return "", fmt.Errorf("golden: %w", err)
	}
	return string(b), nil
}

// Block is one level-0 block of a file, as listed by zdb -ddddd.
type Block struct {
	// Offset is the block's logical offset in the file (the first column of
	// the zdb line), not a DVA offset.
	Offset uint64
	// LSize is the logical size: the "<hex>L" of "<hex>L/<hex>P".
	LSize uint64
	// PSize is the physical (compressed) size: the "<hex>P". For an embedded
	// block it is the length of the payload embedded in the block pointer.
	PSize uint64
	// Embedded is set for a block embedded in its block pointer ("EMBEDDED";
	// it has no DVA).
	Embedded bool
	// Level is the block's level: 0 for data, 1 for an L1 indirect block...
	Level int
	// Fill is the F= field: the non-hole level-0 blocks beneath (1 for a
	// level-0 block; 0 when the line has none). Tree only.
	Fill uint64
	// Checksum is the cksum= field as printed ("" when absent: embedded).
	// Tree only.
	Checksum string
}

// sizeToken matches zdb's "<lsize>L/<psize>P" token, both in hex.
var sizeToken = regexp.MustCompile(`^([0-9a-f]+)L/([0-9a-f]+)P$`)

// Objects parses the case's zdb-ddddd-objects.txt.gz and returns, for every
// file object, its level-0 blocks in listing order (ascending offset), keyed by
// the pool-relative path zdb printed ("/binaries/asm"). Files without any L0
// block (empty, or all holes) map to an empty, non-nil slice. Holes do not
// appear; indirect (L1, L2, ...) blocks are skipped. Every DVA present is
// accepted (zdb -ddddd prints only the first one, even with copies > 1).
func (c Case) Objects() (map[string][]Block, error) {
	return c.objects(false)
}

// Tree is Objects with every level: each file's L0, L1, ... blocks in
// listing order (an indirect block before the blocks beneath it).
func (c Case) Tree() (map[string][]Block, error) {
	return c.objects(true)
}

func (c Case) objects(all bool) (map[string][]Block, error) {
	p := filepath.Join(c.Dir, "zdb-ddddd-objects.txt.gz")
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("golden: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("golden: %s: %w", p, err)
	}
	objs, err := parseObjects(zr, all)
	if err != nil {
		return nil, fmt.Errorf("golden: %s: %w", p, err)
	}
	return objs, nil
}

// parseObjects implements Objects (and with all, Tree) on the
// uncompressed listing.
func parseObjects(r io.Reader, all bool) (map[string][]Block, error) {
	objs := map[string][]Block{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var (
		path       string // current object's path, "" before its path line
		inIndirect bool   // inside the current object's "Indirect blocks:" list
	)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 2 && fields[0] == "Object" && fields[1] == "lvl":
			path, inIndirect = "", false
		case strings.HasPrefix(line, "\tpath\t"):
			path = strings.TrimPrefix(line, "\tpath\t")
			if _, dup := objs[path]; dup {
				return nil, fmt.Errorf("line %d: path %s listed twice", n, path)
			}
			objs[path] = []Block{}
		case line == "Indirect blocks:":
			if path == "" {
				return nil, fmt.Errorf("line %d: block list before the object's path line", n)
			}
			inIndirect = true
		case !inIndirect, len(fields) == 0, fields[0] == "segment":
			// Object header, dnode details, segment summary, blank line.
		default:
			lvl := ""
			if len(fields) >= 3 {
				lvl = fields[1]
			}
			if len(lvl) < 2 || lvl[0] != 'L' || strings.Trim(lvl[1:], "0123456789") != "" {
				return nil, fmt.Errorf("line %d: unexpected line in block list: %q", n, line)
			}
			if lvl != "L0" && !all {
				continue
			}
			b, err := parseL0(fields)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w: %q", n, err, line)
			}
			if all {
				b.Level, _ = strconv.Atoi(lvl[1:])
			} else {
				b.Fill, b.Checksum = 0, "" // Objects: sizes only
			}
			objs[path] = append(objs[path], b)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return objs, nil
}

// parseL0 parses the fields of a block's line (any level; the name is
// historical): "<offset> L0 <DVA>... <l>L/<p>P
// F=.. B=.. cksum=..", or "<offset> L0 EMBEDDED et=<type> <l>L/<p>P B=..".
func parseL0(fields []string) (Block, error) {
	var b Block
	var err error
	if b.Offset, err = strconv.ParseUint(fields[0], 16, 64); err != nil {
		return b, fmt.Errorf("bad offset: %w", err)
	}
	found := false
	for _, f := range fields[2:] {
		if f == "EMBEDDED" {
			b.Embedded = true
			continue
		}
		if v, ok := strings.CutPrefix(f, "F="); ok {
			b.Fill, _ = strconv.ParseUint(v, 10, 64)
			continue
		}
		if v, ok := strings.CutPrefix(f, "cksum="); ok {
			b.Checksum = v
			continue
		}
		m := sizeToken.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		if found {
			return b, errors.New("two size tokens")
		}
		found = true
		if b.LSize, err = strconv.ParseUint(m[1], 16, 64); err != nil {
			return b, err
		}
		if b.PSize, err = strconv.ParseUint(m[2], 16, 64); err != nil {
			return b, err
		}
	}
	if !found {
		return b, errors.New("no <lsize>L/<psize>P token")
	}
	return b, nil
}

// ForScanTest returns the golden dataset cases (input "all") and their
// input set for a test that scans the inputs (55 MB): it skips the test
// with -short, and ends it on an error. The zvol cases are ForZvolTest's.
func ForScanTest(t testing.TB) ([]Case, []string) {
	t.Helper()
	return forTest(t, "all", Inputs)
}

// ForZvolTest returns the golden zvol cases (input "vols") and their
// input, the directory Vols builds, as ForScanTest does.
func ForZvolTest(t testing.TB) ([]Case, []string) {
	t.Helper()
	return forTest(t, "vols", func() ([]string, error) {
		dir, err := Vols()
		return []string{dir}, err
	})
}

func forTest(t testing.TB, input string, paths func() ([]string, error)) ([]Case, []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("golden cases scan 30 to 55 MB each")
	}
	all, err := Cases()
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	for _, c := range all {
		if c.Input == input {
			cases = append(cases, c)
		}
	}
	inputs, err := paths()
	if err != nil {
		t.Fatal(err)
	}
	return cases, inputs
}

// Properties are the dataset properties the case set, as "name=value",
// sorted by name: what ddtsim takes as -o (model.Text.Properties).
func (c Case) Properties() []string {
	out := make([]string, 0, len(c.Props))
	for k, v := range c.Props {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// SkipWithoutSourceHoles skips t when Unscannable says so.
func (c Case) SkipWithoutSourceHoles(t testing.TB) {
	t.Helper()
	if c.Unscannable() {
		t.Skip("windows: the case needs the inputs' holes (sparse=auto, compression=off); files there have none unless marked sparse")
	}
}

// Unscannable reports whether the case's result cannot be had from the
// inputs on this system: on Windows a case whose result depends on the
// holes of the input files (copied with cp --sparse=auto and
// compression=off, where no zero record becomes a hole but by the
// source's), as there a file has holes only once marked sparse, and the
// inputs are not.
func (c Case) Unscannable() bool {
	return runtime.GOOS == "windows" && c.Sparse == "auto" && c.Props["compression"] == "off"
}
