// Package breakdown splits a scan's figures by group of files (`ddtsim
// --by dir|ext|size`): an Accumulator fed by the analyzer's callbacks
// during the scan, joined with the finished table into a Result whose
// groups add up exactly to the scan's totals (see AttributionRule).
//
// The columns are those of zdb -S (cmd/zdb/zdb.c: zdb_ddt_add_cb(),
// dump_simulated_ddt()): referenced counts every block as a pool without
// dedup stores it, allocated each unique block once; blocks embedded in
// their block pointer are not in zdb -S and are counted apart. How a
// block shared by several groups is split between them is ddtsim's own
// rule, not a ZFS figure.
package breakdown

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/text/escape"
	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// The kinds of breakdown (`ddtsim --by KIND`).
const (
	ByDir  = "dir"  // the path named a file came from; for one directory named, its entries
	ByExt  = "ext"  // the lower-cased extension of the file name
	BySize = "size" // the file's size class
	// ByFile makes every file a group: which VM images (with --guest,
	// which guests' disks) share blocks. For a few files, not millions:
	// each group costs memory for the whole scan.
	ByFile = "file"
)

// Kinds lists the accepted --by values.
var Kinds = []string{ByDir, ByExt, BySize, ByFile}

// AttributionRule says how a block shared by several groups is counted in
// each; --help, the text report, the HTML page and the JSON repeat it.
const AttributionRule = "Referenced figures (no dedup) are exact sums of each group's own blocks. " +
	"Allocated figures (with dedup) split every unique block between the groups that reference it, " +
	"in proportion to their references (a group holding 2 of its 3 references gets 2/3 of its blocks, " +
	"LSIZE, PSIZE and DSIZE); the fractions are rounded once per column by largest remainder, " +
	"so the groups add up exactly to the totals. " +
	"\"Only here\" (unique) is the allocated size of blocks no other group references: what removing the group would free. " +
	"\"Shared\" is the referenced size of the group's blocks that other groups reference too."

// Group is one row of a breakdown. Block counts are records; sizes are
// bytes.
type Group struct {
	Name string `json:"name"`
	// NameBase64 is, for a group named after a path that escape.Path had
	// to escape, the path's own bytes (escape.Base64); empty otherwise.
	NameBase64   string `json:"name_base64,omitempty"`
	Files        uint64 `json:"files"`
	LogicalBytes uint64 `json:"logical_bytes"` // sum of file sizes
	Records      uint64 `json:"records"`       // level-0 records, holes included
	Holes        uint64 `json:"holes"`         // records not written (all zeros)
	HoleLSize    uint64 `json:"hole_lsize"`    // the holes' LSIZE (a file's last record may reach past its end)
	ZeroBlocks   uint64 `json:"zero_blocks"`   // all-zero records stored as data (compression=off)
	Embedded     uint64 `json:"embedded"`      // records embedded in block pointers (not in zdb -S)
	// Referenced counts every block of the group that zdb -S counts, as a
	// pool without dedup stores them.
	Referenced ddt.Stat `json:"referenced"`
	// Allocated is the group's part of the deduplicated table (see
	// AttributionRule): the groups' parts add up to the table's total.
	Allocated ddt.Stat `json:"allocated"`
	// Unique is the allocated size of the contents that only this group
	// references.
	Unique ddt.Stat `json:"unique"`
	// Shared is the referenced size of the group's blocks whose content
	// another group references too.
	Shared ddt.Stat `json:"shared"`
}

// Zeros says how much of a scan is zeros: holes (never written) and
// all-zero blocks stored as data (only with compression=off), which dedup
// to one block per LSIZE.
type Zeros struct {
	Holes     uint64 `json:"holes"`      // records not written
	HoleLSize uint64 `json:"hole_lsize"` // their LSIZE, bytes
	// HoleBytes is the file data in them, bytes (a file's last record
	// ends with the file): what the summary credits to holes.
	HoleBytes  uint64   `json:"hole_bytes"`
	Referenced ddt.Stat `json:"referenced"` // all-zero blocks stored, every reference
	Allocated  ddt.Stat `json:"allocated"`  // their DDT entries (one per LSIZE)
	// Saved is the part of the scan's savings (file bytes minus allocated
	// DSIZE) that is zeros: the holes' file bytes (HoleBytes; their LSIZE
	// reached past files' ends and the total saved, found by a new user)
	// plus what dedup saves on the
	// all-zero blocks stored, bytes.
	Saved uint64 `json:"saved"`
}

// Result splits a scan's figures by group. In JSON its fields appear at
// the top level of the scan document: breakdown_by, breakdown_rule,
// breakdown (the rows), breakdown_total and zeros.
type Result struct {
	By     string  `json:"breakdown_by"`   // dir, ext, size or file
	Basis  string  `json:"breakdown_of"`   // what the groups are, in words
	Rule   string  `json:"breakdown_rule"` // AttributionRule
	Groups []Group `json:"breakdown"`
	Sum    Group   `json:"breakdown_total"` // the column sums, named "(total)"; equal to the scan's totals
	Zeros  Zeros   `json:"zeros"`

	oneDir bool // by dir, one directory named: its entries are the groups
}

// TotalName names the sum row in text and CSV.
const TotalName = "(total)"

// Accumulator collects a breakdown during a scan, from the analyzer's
// OnFile and OnBlock callbacks (set Options.BlockRuns too): per group the
// files and, per unique content, how many references each group has. It
// needs memory per unique content, about as much as the table itself.
type Accumulator struct {
	by      string
	args    []string
	oneDir  bool           // by dir, one directory named
	ids     map[string]int // group key (the name's raw bytes) → id (walker only)
	names   []string       // by id: the name shown (escaped)
	raws    []string       // by id: the raw bytes of a name escaped, base64 ("" if none)
	files   []uint64
	logical []uint64
	shards  [256]accShard
}

type accShard struct {
	mu   sync.Mutex
	keys map[prefix]keyRefs
	// more holds the references of the keys' further groups, one node
	// per (content, group), linked from keyRefs.more: one arena per shard,
	// not one slice per content, so that a content met in many groups
	// costs 16 bytes a group (a slice per content cost about twice that,
	// and grew with each new group).
	more  nodeArena
	cnt   []blockCounts // by group id
	zeros map[prefix]struct{}
	_     [40]byte
}

// prefix is the first 128 bits of a key: what ddt.Table keeps of it (its
// Range yields keys whose other bytes are zero), and as unlikely to
// collide.
type prefix [16]byte

func prefixOf(k *ddt.Key) prefix { return prefix(k[:16]) }

// keyRefs holds the references of one content per group: the first group
// inline (most contents are in one group), the others in the shard's more,
// newest first.
type keyRefs struct {
	g    uint32
	more uint32 // 1 + index in accShard.more of the newest further group; 0: none
	n    uint64
}

// groupNode is one further group's references to a content.
type groupNode struct {
	g    uint32
	next uint32 // 1 + index of the group met before; 0: none
	n    uint64
}

// nodeArena holds groupNodes in chunks of nodeChunk that never move: it
// grows without copying and without the slack of a doubled slice (which
// on 10 million files in 100 directories held up to twice the nodes'
// 140 MB while it grew). Nodes are numbered from 1.
type nodeArena struct {
	chunks [][]groupNode
	n      uint32
}

const nodeShift = 10
const nodeChunk = 1 << nodeShift // 16 KiB of nodes

// at returns node i (1-based).
func (a *nodeArena) at(i uint32) *groupNode {
	i--
	return &a.chunks[i>>nodeShift][i&(nodeChunk-1)]
}

// add appends x and returns its number.
func (a *nodeArena) add(x groupNode) uint32 {
	switch {
	case a.n < nodeChunk:
		// The first chunk grows as a slice: most shards of a small scan
		// hold a few nodes or none.
		if a.n == 0 {
			a.chunks = append(a.chunks, nil)
		}
		a.chunks[0] = append(a.chunks[0], x)
		a.n++
		return a.n
	case a.n&(nodeChunk-1) == 0:
		a.chunks = append(a.chunks, make([]groupNode, nodeChunk))
	}
	a.chunks[a.n>>nodeShift][a.n&(nodeChunk-1)] = x
	a.n++
	return a.n
}

type groupRefs struct {
	g uint32
	n uint64
}

type blockCounts struct{ records, holes, holeLSize, holeBytes, zeroBlocks uint64 }

// NewAccumulator prepares a breakdown by kind (ByDir, ByExt, BySize) of a
// scan of paths (as given to analyzer.Scan).
func NewAccumulator(by string, paths []string) (*Accumulator, error) {
	switch by {
	case ByDir, ByExt, BySize, ByFile:
	default:
		return nil, fmt.Errorf("--by %s: invalid (accepted: %s)", by, strings.Join(Kinds, ", "))
	}
	a := &Accumulator{by: by, args: paths, ids: map[string]int{}}
	if by == ByDir && len(paths) == 1 {
		fi, err := os.Stat(paths[0])
		a.oneDir = err == nil && fi.IsDir()
	}
	for i := range a.shards {
		a.shards[i].keys = map[prefix]keyRefs{}
		a.shards[i].zeros = map[prefix]struct{}{}
	}
	if by == ByDir && len(paths) > 1 {
		// Every path named gets a row, in the order named, even one
		// without files.
		for _, p := range paths {
			a.id(p, escape.Path(p))
		}
	}
	return a, nil
}

// id returns the id of the group whose key (its name as raw bytes: two
// names different on disk are two groups, however they print) is key,
// adding it, shown as name, if it is new.
func (a *Accumulator) id(key, name string) int {
	if id, ok := a.ids[key]; ok {
		return id
	}
	id := len(a.names)
	a.ids[key] = id
	a.names = append(a.names, name)
	raw := ""
	if name == escape.Path(key) && name != key {
		raw = escape.Base64(key) // a group named after a path
	}
	a.raws = append(a.raws, raw)
	a.files = append(a.files, 0)
	a.logical = append(a.logical, 0)
	return id
}

// File is the analyzer's Options.OnFile: it counts the file in its group
// and returns the group's id as the tag of its blocks.
func (a *Accumulator) File(ev analyzer.FileEvent) int {
	id := a.id(a.groupKey(ev))
	a.files[id]++
	a.logical[id] += ev.Size
	return id
}

// groupKey is the group of a file: its key (the raw bytes of the path, or
// the name of a size class or extension) and its name as shown.
func (a *Accumulator) groupKey(ev analyzer.FileEvent) (key, name string) {
	switch a.by {
	case BySize:
		c := SizeClass(ev.Size)
		return c, c
	case ByExt:
		x := Ext(ev.Path) // escape.Path is injective: the name is key enough
		return x, x
	case ByFile:
		return ev.Path, escape.Path(ev.Path)
	}
	path := ev.Path
	if ev.Arg >= 0 && ev.Arg < len(a.args) {
		path = a.args[ev.Arg]
		if a.oneDir && ev.Path != path {
			// One directory named: its entries are the groups. The walker
			// names files filepath.Join(arg, ...).
			root := filepath.Clean(path)
			rel, err := filepath.Rel(root, ev.Path)
			if err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
				first, _, sub := strings.Cut(rel, string(filepath.Separator))
				if !sub {
					// A key no path can be: paths hold no NUL.
					return "\x00direct", DirectFilesName(root)
				}
				path = filepath.Join(root, first)
			}
		}
	}
	return path, escape.Path(path)
}

// DirectFilesName names the group of the files that lie directly in the one
// directory named (ddtsim --by dir DIR).
func DirectFilesName(dir string) string {
	return "(files directly in " + escape.Path(filepath.Clean(dir)) + ")"
}

// sizeClasses are the upper bounds of the --by size classes, bytes.
var sizeClasses = []struct {
	max  uint64
	name string
}{
	{0, "empty"},
	{4 << 10, "<=4K"},
	{128 << 10, "<=128K"},
	{1 << 20, "<=1M"},
	{16 << 20, "<=16M"},
	{1 << 30, "<=1G"},
	{math.MaxUint64, ">1G"},
}

// SizeClass is the --by size group of a file of size bytes: empty, <=4K,
// <=128K, <=1M, <=16M, <=1G or >1G.
func SizeClass(size uint64) string {
	for _, c := range sizeClasses {
		if size <= c.max {
			return c.name
		}
	}
	return ">1G"
}

// Ext is the --by ext group of a file: the lower-cased extension of its
// name with the dot (".raw"), or "(none)" for a name without one (a leading
// dot, as in ".bashrc", does not start an extension).
func Ext(path string) string {
	base := filepath.Base(path)
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return "(none)"
	}
	return escape.Path(lower(base[i:]))
}

// lower lower-cases the UTF-8 of s and keeps its other bytes as they are
// (strings.ToLower would make them all U+FFFD, one extension).
func lower(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			b.WriteByte(s[i])
		} else {
			b.WriteRune(unicode.ToLower(r))
		}
		i += n
	}
	return b.String()
}

// Block is the analyzer's Options.OnBlock. It may be called from several
// goroutines at once.
func (a *Accumulator) Block(ev analyzer.BlockEvent) {
	n := max(ev.Count, 1)
	g := uint32(ev.Tag)
	var sh *accShard
	if ev.Hole {
		sh = &a.shards[(uint64(g)*131+ev.BlkID)&255]
	} else {
		sh = &a.shards[ev.Key[0]]
	}
	sh.mu.Lock()
	for int(g) >= len(sh.cnt) {
		sh.cnt = append(sh.cnt, blockCounts{})
	}
	c := &sh.cnt[g]
	c.records += n
	if ev.Hole {
		c.holes += n
		c.holeLSize += n * uint64(ev.LSize)
		c.holeBytes += ev.Bytes
		sh.mu.Unlock()
		return
	}
	k := prefixOf(&ev.Key)
	if ev.Zero {
		c.zeroBlocks += n
		sh.zeros[k] = struct{}{}
	}
	r, ok := sh.keys[k]
	switch {
	case !ok:
		r = keyRefs{g: g, n: n}
	case r.g == g:
		r.n += n
	default:
		i := r.more
		for i != 0 && sh.more.at(i).g != g {
			i = sh.more.at(i).next
		}
		if i != 0 {
			sh.more.at(i).n += n
		} else {
			r.more = sh.more.add(groupNode{g: g, next: r.more, n: n})
		}
	}
	sh.keys[k] = r
	sh.mu.Unlock()
}

// split is one group's fractional allocated figures while they are summed:
// whole parts and the sum of the fractional parts, per column (blocks,
// LSIZE, PSIZE, DSIZE).
type split struct {
	whole [4]uint64
	frac  [4]float64
}

// Result joins what was accumulated with the finished table (one pass
// over it with Range) and returns the rows (see AttributionRule). Call it
// after the scan has returned.
func (a *Accumulator) Result(t *ddt.Table) *Result {
	ng := len(a.names)
	groups := make([]Group, ng)
	for i := range groups {
		groups[i].Name, groups[i].NameBase64 = a.names[i], a.raws[i]
		groups[i].Files = a.files[i]
		groups[i].LogicalBytes = a.logical[i]
	}
	var zeros Zeros
	splits := make([]split, ng)
	var total [4]uint64 // allocated: what the splits must add up to
	for si := range a.shards {
		for g, c := range a.shards[si].cnt {
			gr := &groups[g]
			gr.Records += c.records
			gr.Holes += c.holes
			gr.HoleLSize += c.holeLSize
			gr.ZeroBlocks += c.zeroBlocks
			zeros.Holes += c.holes
			zeros.HoleLSize += c.holeLSize
			zeros.HoleBytes += c.holeBytes
		}
	}
	var refs []groupRefs
	t.Range(func(k ddt.Key, e ddt.Entry) bool {
		sh := &a.shards[k[0]]
		p := prefixOf(&k)
		r, ok := sh.keys[p]
		if !ok {
			return true
		}
		refs = append(refs[:0], groupRefs{r.g, r.n})
		for i := r.more; i != 0; i = sh.more.at(i).next {
			nd := sh.more.at(i)
			refs = append(refs, groupRefs{nd.g, nd.n})
		}
		slices.Reverse(refs[1:]) // in the order met, as before
		var refcnt uint64
		for _, x := range refs {
			refcnt += x.n
		}
		if e.PSize == 0 { // embedded: not in zdb -S
			for _, x := range refs {
				groups[x.g].Embedded += x.n
			}
			return true
		}
		v := [4]uint64{1, uint64(e.LSize), uint64(e.PSize), e.DSize}
		alloc := ddt.Stat{Blocks: 1, LSize: v[1], PSize: v[2], DSize: v[3]}
		for f := range v {
			total[f] += v[f]
		}
		if _, z := sh.zeros[p]; z {
			zeros.Allocated.Add(alloc)
			zeros.Referenced.Add(alloc.Times(refcnt))
		}
		if len(refs) == 1 {
			gr := &groups[refs[0].g]
			gr.Referenced.Add(alloc.Times(refcnt))
			gr.Unique.Add(alloc)
			for f := range v {
				splits[refs[0].g].whole[f] += v[f]
			}
			return true
		}
		for _, x := range refs {
			gr := &groups[x.g]
			ref := alloc.Times(x.n)
			gr.Referenced.Add(ref)
			gr.Shared.Add(ref)
			sp := &splits[x.g]
			for f := range v {
				hi, lo := bits.Mul64(v[f], x.n)
				q, rem := bits.Div64(hi, lo, refcnt) // x.n ≤ refcnt: the quotient fits
				sp.whole[f] += q
				sp.frac[f] += float64(rem) / float64(refcnt)
			}
		}
		return true
	})
	for f := range total {
		parts := apportion(total[f], splits, f, groups)
		for g := range groups {
			st := &groups[g].Allocated
			switch f {
			case 0:
				st.Blocks = parts[g]
			case 1:
				st.LSize = parts[g]
			case 2:
				st.PSize = parts[g]
			case 3:
				st.DSize = parts[g]
			}
		}
	}
	zeros.Saved = zeros.HoleBytes + zeros.Referenced.DSize - zeros.Allocated.DSize
	b := &Result{By: a.by, Basis: a.basis(), Rule: AttributionRule, Groups: groups, Zeros: zeros, oneDir: a.oneDir}
	b.sortGroups()
	b.Sum = SumGroups(b.Groups)
	return b
}

// apportion turns the fractional shares of column f into integers that add
// up to total: each group gets the whole part of its share, and the units
// left go one each to the groups with the largest fractional parts (ties:
// more references, then name). The fractional sums are floating point; the
// result is exact whatever their rounding.
func apportion(total uint64, splits []split, f int, groups []Group) []uint64 {
	parts := make([]uint64, len(splits))
	rems := make([]float64, len(splits))
	var sum uint64
	for g, sp := range splits {
		fl := math.Floor(sp.frac[f])
		parts[g] = sp.whole[f] + uint64(fl)
		// Quantized so that the order does not depend on summation order.
		rems[g] = math.Round((sp.frac[f]-fl)*1e9) / 1e9
		sum += parts[g]
	}
	if len(parts) == 0 || sum == total {
		return parts
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if rems[a] != rems[b] {
			return rems[a] > rems[b]
		}
		if groups[a].Referenced.Blocks != groups[b].Referenced.Blocks {
			return groups[a].Referenced.Blocks > groups[b].Referenced.Blocks
		}
		return groups[a].Name < groups[b].Name
	})
	for i := 0; sum < total; i = (i + 1) % len(order) {
		parts[order[i]]++
		sum++
	}
	// Floating point may have overshot by a unit: take it back from the
	// smallest fractional parts (never below a group's whole part).
	for i, n := len(order)-1, 0; sum > total && n < 4*len(order); i, n = (i-1+len(order))%len(order), n+1 {
		if g := order[i]; parts[g] > splits[g].whole[f] {
			parts[g]--
			sum--
		}
	}
	return parts
}

// SumGroups adds up the columns of groups into a row named TotalName.
func SumGroups(groups []Group) Group {
	s := Group{Name: TotalName}
	for _, g := range groups {
		s.Files += g.Files
		s.LogicalBytes += g.LogicalBytes
		s.Records += g.Records
		s.Holes += g.Holes
		s.HoleLSize += g.HoleLSize
		s.ZeroBlocks += g.ZeroBlocks
		s.Embedded += g.Embedded
		s.Referenced.Add(g.Referenced)
		s.Allocated.Add(g.Allocated)
		s.Unique.Add(g.Unique)
		s.Shared.Add(g.Shared)
	}
	return s
}

// basis says in words what the groups are.
func (a *Accumulator) basis() string {
	switch a.by {
	case BySize:
		return "file size class"
	case ByExt:
		return "file name extension (lower-cased)"
	case ByFile:
		return "file"
	}
	if a.oneDir {
		return "subdirectory of " + escape.Path(a.args[0]) + " (the files directly in it form one row)"
	}
	return "path named"
}

// sortGroups orders the rows: size classes from small to large, paths as
// named (or, for one directory, by name), extensions by referenced LSIZE,
// largest first.
func (b *Result) sortGroups() {
	g := b.Groups
	switch b.By {
	case BySize:
		rank := map[string]int{}
		for i, c := range sizeClasses {
			rank[c.name] = i
		}
		sort.SliceStable(g, func(i, j int) bool { return rank[g[i].Name] < rank[g[j].Name] })
	case ByExt:
		sort.SliceStable(g, func(i, j int) bool {
			if g[i].LogicalBytes != g[j].LogicalBytes {
				return g[i].LogicalBytes > g[j].LogicalBytes
			}
			return g[i].Name < g[j].Name
		})
	case ByFile:
		sort.SliceStable(g, func(i, j int) bool { return g[i].Name < g[j].Name })
	default:
		if !b.oneDir {
			return // paths named, in order
		}
		sort.SliceStable(g, func(i, j int) bool {
			di, dj := strings.HasPrefix(g[i].Name, "(files directly in "), strings.HasPrefix(g[j].Name, "(files directly in ")
			if di != dj {
				return di
			}
			return g[i].Name < g[j].Name
		})
	}
}
