package zio

import (
	"fmt"
	"strconv"
	"strings"
)

// Vdev is a top-level vdev's allocation model.
type Vdev interface {
	// MinAlloc is the smallest allocation, bytes (vdev.c: vdev_get_min_alloc()).
	MinAlloc() uint64
	// ASize is the allocated size of a PSIZE-byte block, bytes
	// (vdev_psize_to_asize()).
	ASize(psize uint64) uint64
	// DeflateRatio is vdev_deflate_ratio: floor(2^17 / (ASize(128K)/512))
	// (vdev.c: vdev_set_deflate_ratio()).
	DeflateRatio() uint64
	// String describes the vdev as zpool create would name it.
	String() string
}

// MinAshift and MaxAshift bound the ashift a pool accepts
// (include/sys/vdev_impl.h: ASHIFT_MIN, ASHIFT_MAX).
const (
	MinAshift = 9
	MaxAshift = 16
)

// Limits of the grouping vdevs, as cmd/zpool/zpool_vdev.c: is_grouping() and
// draid_config_by_type() enforce them.
const (
	MaxParity      = 3   // VDEV_RAIDZ_MAXPARITY, VDEV_DRAID_MAXPARITY
	MaxChildren    = 255 // raidz and dRAID children (VDEV_DRAID_MAX_CHILDREN)
	MaxDRAIDSpares = 100 // distributed spares
	DRAIDDataAuto  = 8   // data disks per dRAID group when not given
)

const (
	deflateBlock  = 1 << 17 // the block size vdev_set_deflate_ratio() uses
	minBlockShift = 9       // SPA_MINBLOCKSHIFT
	// maxDisks bounds the disk count of stripe and mirror (zpool has no
	// limit; the count does not change any number ddtsim prints).
	maxDisks        = 1 << 20
	vdevSyntaxHints = "disk, stripe N, mirror N, raidz N, raidz1 N, raidz2 N, raidz3 N, draid[P][:Dd][:Cc][:Ss] [N]"
)

func checkAshift(ashift int) error {
	if ashift < MinAshift || ashift > MaxAshift {
		return fmt.Errorf("invalid ashift %d (accepted: %d to %d)", ashift, MinAshift, MaxAshift)
	}
	return nil
}

// deflateRatio is vdev_set_deflate_ratio() for a vdev whose ASIZE function
// is asize.
func deflateRatio(asize func(uint64) uint64) uint64 {
	return deflateBlock / (asize(deflateBlock) >> minBlockShift)
}

// Disk is a single disk or file vdev (a stripe member) with 2^Ashift-byte
// sectors.
type Disk struct {
	Ashift int
}

// NewDisk returns a disk vdev; ashift outside 9..16 is an error.
func NewDisk(ashift int) (Disk, error) {
	if err := checkAshift(ashift); err != nil {
		return Disk{}, err
	}
	return Disk{Ashift: ashift}, nil
}

// MinAlloc returns 2^ashift bytes.
func (d Disk) MinAlloc() uint64 { return 1 << d.Ashift }

// ASize rounds psize up to a whole number of sectors (vdev.c:
// vdev_default_asize()).
func (d Disk) ASize(psize uint64) uint64 {
	s := uint64(1) << d.Ashift
	return (psize + s - 1) &^ (s - 1)
}

// DeflateRatio is 512 on a plain disk: DSIZE equals ASIZE.
func (d Disk) DeflateRatio() uint64 { return deflateRatio(d.ASize) }

func (d Disk) String() string { return "disk" }

// Mirror is an n-way mirror. Its ASIZE is that of one side
// (vdev.c: vdev_default_asize() takes the maximum over the children, which
// all have the top-level ashift): the redundant copies are not counted, in
// ASIZE, DSIZE or the deflate ratio.
type Mirror struct {
	Children int
	Ashift   int
}

// NewMirror returns an n-way mirror; zpool create requires n ≥ 2.
func NewMirror(n, ashift int) (Mirror, error) {
	if err := checkAshift(ashift); err != nil {
		return Mirror{}, err
	}
	if n < 2 {
		return Mirror{}, fmt.Errorf("invalid vdev \"mirror %d\": a mirror needs at least 2 disks (a single disk is \"disk\")", n)
	}
	if n > maxDisks {
		return Mirror{}, fmt.Errorf("invalid vdev \"mirror %d\": at most %d disks", n, maxDisks)
	}
	return Mirror{Children: n, Ashift: ashift}, nil
}

// MinAlloc returns 2^ashift bytes.
func (m Mirror) MinAlloc() uint64 { return 1 << m.Ashift }

// ASize rounds psize up to a whole number of sectors, as on one disk.
func (m Mirror) ASize(psize uint64) uint64 { return Disk{Ashift: m.Ashift}.ASize(psize) }

// DeflateRatio is 512: DSIZE equals the ASIZE of one side.
func (m Mirror) DeflateRatio() uint64 { return deflateRatio(m.ASize) }

func (m Mirror) String() string { return fmt.Sprintf("mirror %d", m.Children) }

// RAIDZ is a raidz vdev with Parity parity disks out of Children
// (vdev_raidz.c). Raidz expansion is not modelled: the logical width is
// Children.
type RAIDZ struct {
	Parity   int
	Children int
	Ashift   int
}

// NewRAIDZ returns a raidz vdev; zpool create requires 1 ≤ parity ≤ 3 and
// parity+1 ≤ children ≤ 255.
func NewRAIDZ(parity, children, ashift int) (RAIDZ, error) {
	if err := checkAshift(ashift); err != nil {
		return RAIDZ{}, err
	}
	if parity < 1 || parity > MaxParity {
		return RAIDZ{}, fmt.Errorf("invalid raidz parity %d (accepted: raidz1, raidz2, raidz3; raidz = raidz1)", parity)
	}
	if children < parity+1 || children > MaxChildren {
		return RAIDZ{}, fmt.Errorf("invalid vdev \"raidz%d %d\": raidz%d needs %d to %d disks", parity, children, parity, parity+1, MaxChildren)
	}
	return RAIDZ{Parity: parity, Children: children, Ashift: ashift}, nil
}

// MinAlloc returns 2^ashift bytes: raidz has no vdev_op_min_alloc.
func (r RAIDZ) MinAlloc() uint64 { return 1 << r.Ashift }

// ASize is vdev_raidz_asize(): the data sectors, plus Parity sectors per
// row of Children−Parity data sectors, rounded up to a multiple of Parity+1
// sectors (the skip sectors that keep every free segment usable).
func (r RAIDZ) ASize(psize uint64) uint64 {
	if psize == 0 {
		return 0
	}
	p, w := uint64(r.Parity), uint64(r.Children)
	s := ((psize - 1) >> r.Ashift) + 1
	s += p * ((s + w - p - 1) / (w - p))
	s = (s + p) / (p + 1) * (p + 1)
	return s << r.Ashift
}

// DeflateRatio is floor(2^17 / (ASize(128K)/512)): 372 for raidz1 of 4
// disks at ashift 12, 341 for raidz2 of 6.
func (r RAIDZ) DeflateRatio() uint64 { return deflateRatio(r.ASize) }

func (r RAIDZ) String() string { return fmt.Sprintf("raidz%d %d", r.Parity, r.Children) }

// DRAID is a dRAID vdev: redundancy groups of Data data and Parity parity
// sectors, spread over Children disks of which Spares are distributed
// spare capacity (vdev_draid.c).
type DRAID struct {
	Parity   int
	Data     int
	Spares   int
	Children int
	Ashift   int
}

// NewDRAID returns a dRAID vdev, checked as cmd/zpool/zpool_vdev.c:
// draid_config_by_type() checks it. data 0 means "not given": min(children
// − spares − parity, 8).
func NewDRAID(parity, data, spares, children, ashift int) (DRAID, error) {
	if err := checkAshift(ashift); err != nil {
		return DRAID{}, err
	}
	name := fmt.Sprintf("draid%d", parity)
	if parity < 1 || parity > MaxParity {
		return DRAID{}, fmt.Errorf("invalid dRAID parity %d (accepted: draid1, draid2, draid3; draid = draid1)", parity)
	}
	if children < parity+1 || children > MaxChildren {
		return DRAID{}, fmt.Errorf("invalid vdev %q with %d children: %s needs %d to %d disks", name, children, name, parity+1, MaxChildren)
	}
	if spares < 0 || spares > MaxDRAIDSpares {
		return DRAID{}, fmt.Errorf("invalid number of dRAID spares %d (accepted: 0 to %d)", spares, MaxDRAIDSpares)
	}
	avail := children - spares - parity // disks left for data in a group
	if data == 0 {
		if avail < 1 {
			return DRAID{}, fmt.Errorf("invalid dRAID layout: %d spares and parity %d leave none of the %d disks for data", spares, parity, children)
		}
		data = min(avail, DRAIDDataAuto)
	}
	if avail < 1 {
		return DRAID{}, fmt.Errorf("invalid dRAID layout: %d spares and parity %d leave none of the %d children for data (need at least parity + spares + 1 children)", spares, parity, children)
	}
	if data < 1 || data > avail {
		return DRAID{}, fmt.Errorf("invalid dRAID layout: %d data disks per group is too many; with %d children, parity %d and %d spares at most %d are available (accepted: 1 to %d)",
			data, children, parity, spares, avail, avail)
	}
	return DRAID{Parity: parity, Data: data, Spares: spares, Children: children, Ashift: ashift}, nil
}

// MinAlloc is one full row of data: Data × 2^ashift bytes
// (vdev_draid_min_alloc()).
func (d DRAID) MinAlloc() uint64 { return uint64(d.Data) << d.Ashift }

// ASize is vdev_draid_asize(): whole rows of Data+Parity sectors, enough
// rows for psize.
func (d DRAID) ASize(psize uint64) uint64 {
	if psize == 0 {
		return 0
	}
	rows := (psize-1)/(uint64(d.Data)<<d.Ashift) + 1
	return rows * uint64(d.Data+d.Parity) << d.Ashift
}

// DeflateRatio is floor(2^17 / (ASize(128K)/512)).
func (d DRAID) DeflateRatio() uint64 { return deflateRatio(d.ASize) }

// String names the vdev in zpool's full form, draid2:6d:8c:0s.
func (d DRAID) String() string {
	return fmt.Sprintf("draid%d:%dd:%dc:%ds", d.Parity, d.Data, d.Children, d.Spares)
}

// ParseVdev parses one top-level vdev specification in the words of zpool
// create, with the disk count in place of the device names:
//
//	disk                     one plain disk
//	stripe N                 N plain disks, each its own top-level vdev
//	mirror N                 an N-way mirror (N ≥ 2)
//	raidz N, raidz1 N        single parity raidz (N ≥ 2)
//	raidz2 N, raidz3 N       double/triple parity raidz (N ≥ 3, 4)
//	draid[P][:Dd][:Cc][:Ss] [N]
//	                         dRAID with parity P (default 1), D data disks
//	                         per group (default min(C−P−S, 8)), C children
//	                         (":Cc" or N; both must agree), S distributed
//	                         spares (default 0)
//
// It returns the vdev and how many identical top-level vdevs the
// specification stands for (N for stripe, else 1). Invalid layouts are
// errors that say what is accepted.
func ParseVdev(spec string, ashift int) (Vdev, int, error) {
	if err := checkAshift(ashift); err != nil {
		return nil, 0, err
	}
	f := strings.Fields(strings.ToLower(spec))
	if len(f) == 0 || len(f) > 2 {
		return nil, 0, fmt.Errorf("invalid vdev %q (accepted: %s)", spec, vdevSyntaxHints)
	}
	typ := f[0]
	n := -1 // disk count, -1 when not given
	if len(f) == 2 {
		v, err := strconv.Atoi(f[1])
		if err != nil || v < 1 {
			return nil, 0, fmt.Errorf("invalid vdev %q: %q is not a number of disks (accepted: %s)", spec, f[1], vdevSyntaxHints)
		}
		n = v
	}
	needN := func() error {
		if n < 0 {
			return fmt.Errorf("invalid vdev %q: give the number of disks, as in \"%s 4\" (accepted: %s)", spec, typ, vdevSyntaxHints)
		}
		return nil
	}
	switch {
	case typ == "disk" || typ == "file":
		if n > 1 {
			return nil, 0, fmt.Errorf("invalid vdev %q: several plain disks are \"stripe %d\"", spec, n)
		}
		d, err := NewDisk(ashift)
		return d, 1, err
	case typ == "stripe":
		if err := needN(); err != nil {
			return nil, 0, err
		}
		if n > maxDisks {
			return nil, 0, fmt.Errorf("invalid vdev %q: at most %d disks", spec, maxDisks)
		}
		d, err := NewDisk(ashift)
		return d, n, err
	case typ == "mirror":
		if err := needN(); err != nil {
			return nil, 0, err
		}
		m, err := NewMirror(n, ashift)
		if err != nil {
			return nil, 0, err
		}
		return m, 1, nil
	case strings.HasPrefix(typ, "raidz"):
		p, ok := parseParity(typ[len("raidz"):])
		if !ok {
			return nil, 0, fmt.Errorf("invalid vdev %q: unknown raidz level %q (accepted: raidz, raidz1, raidz2, raidz3)", spec, typ)
		}
		if err := needN(); err != nil {
			return nil, 0, err
		}
		r, err := NewRAIDZ(p, n, ashift)
		if err != nil {
			return nil, 0, err
		}
		return r, 1, nil
	case strings.HasPrefix(typ, "draid"):
		d, err := parseDRAID(spec, typ, n, ashift)
		if err != nil {
			return nil, 0, err
		}
		return d, 1, nil
	}
	return nil, 0, fmt.Errorf("invalid vdev %q (accepted: %s)", spec, vdevSyntaxHints)
}

// parseParity parses the level after "raidz" or "draid": "" is 1, else one
// of 1, 2, 3 without leading zeros (zpool_vdev.c: get_parity()).
func parseParity(s string) (int, bool) {
	switch s {
	case "":
		return 1, true
	case "1", "2", "3":
		return int(s[0] - '0'), true
	}
	return 0, false
}

// parseDRAID parses draid[P][:Dd][:Cc][:Ss] (fields in any order) with n
// children from the count word (-1: not given).
func parseDRAID(spec, typ string, n, ashift int) (DRAID, error) {
	const form = "draid[P][:Dd][:Cc][:Ss] [N], e.g. draid2:4d:1s:11c or draid2 8"
	parts := strings.Split(typ, ":")
	parity, ok := parseParity(parts[0][len("draid"):])
	if !ok {
		return DRAID{}, fmt.Errorf("invalid vdev %q: unknown dRAID level %q (accepted: draid, draid1, draid2, draid3)", spec, parts[0])
	}
	data, spares, children := 0, 0, -1
	seen := map[byte]bool{}
	for _, p := range parts[1:] {
		if len(p) < 2 || p[0] < '0' || p[0] > '9' {
			return DRAID{}, fmt.Errorf("invalid vdev %q: %q is not <number><d|c|s> (accepted: %s)", spec, p, form)
		}
		suffix := p[len(p)-1]
		v, err := strconv.Atoi(p[:len(p)-1])
		if err != nil || (suffix != 'd' && suffix != 'c' && suffix != 's') {
			return DRAID{}, fmt.Errorf("invalid vdev %q: %q is not <number><d|c|s> (accepted: %s)", spec, p, form)
		}
		if seen[suffix] {
			return DRAID{}, fmt.Errorf("invalid vdev %q: :%c given twice", spec, suffix)
		}
		seen[suffix] = true
		switch suffix {
		case 'd':
			if v < 1 {
				return DRAID{}, fmt.Errorf("invalid vdev %q: at least 1 data disk per group", spec)
			}
			data = v
		case 's':
			spares = v
		case 'c':
			children = v
		}
	}
	switch {
	case children < 0 && n < 0:
		return DRAID{}, fmt.Errorf("invalid vdev %q: give the number of children, as :Cc or a count (accepted: %s)", spec, form)
	case children < 0:
		children = n
	case n >= 0 && n != children:
		return DRAID{}, fmt.Errorf("invalid vdev %q: %d children required by :%dc but %d given", spec, children, children, n)
	}
	return NewDRAID(parity, data, spares, children, ashift)
}

// Pool is the normal class of a pool: its top-level vdevs in zpool create
// order, like ZFS's root vdev. It is itself a Vdev:
//
//   - MinAlloc is spa_min_alloc, the smallest MinAlloc of the top-level
//     vdevs, and GCDAlloc is spa_gcd_alloc, their greatest common divisor
//     (vdev.c: vdev_spa_set_alloc()); these decide PSIZE rounding.
//   - ASize and DeflateRatio are those of the first top-level vdev. Which
//     top-level vdev a block lands on is decided at run time by the
//     metaslab allocator (roughly in proportion to free space); when all
//     top-level vdevs have the same shape it does not matter, and when
//     they differ ddtsim assumes every block (every copy) is written to the
//     first one.
type Pool struct {
	top      []topLevel
	minAlloc uint64
	gcdAlloc uint64
	ratio    uint64
}

// topLevel is a run of n identical top-level vdevs.
type topLevel struct {
	v Vdev
	n int
}

// NewPool parses the --vdev specifications (see ParseVdev), each adding one
// top-level vdev (or N for "stripe N"). No specification means one disk.
func NewPool(specs []string, ashift int) (*Pool, error) {
	if len(specs) == 0 {
		specs = []string{"disk"}
	}
	p := &Pool{}
	for _, s := range specs {
		v, n, err := ParseVdev(s, ashift)
		if err != nil {
			return nil, err
		}
		p.add(v, n)
	}
	return p, nil
}

// PoolOf returns a pool of the given top-level vdevs (a *Pool among them
// adds its own top-level vdevs); it panics when given none.
func PoolOf(vdevs ...Vdev) *Pool {
	p := &Pool{}
	for _, v := range vdevs {
		if q, ok := v.(*Pool); ok {
			for _, t := range q.top {
				p.add(t.v, t.n)
			}
			continue
		}
		p.add(v, 1)
	}
	if len(p.top) == 0 {
		panic("zio: PoolOf with no vdev")
	}
	return p
}

// add appends n top-level vdevs v and updates spa_min_alloc and
// spa_gcd_alloc as vdev_spa_set_alloc() does when each is opened.
func (p *Pool) add(v Vdev, n int) {
	m := v.MinAlloc()
	if len(p.top) == 0 {
		p.minAlloc, p.gcdAlloc, p.ratio = m, m, v.DeflateRatio()
	} else {
		p.minAlloc = min(p.minAlloc, m)
		p.gcdAlloc = gcd(p.gcdAlloc, m)
	}
	if k := len(p.top); k > 0 && p.top[k-1].v == v {
		p.top[k-1].n += n
	} else {
		p.top = append(p.top, topLevel{v, n})
	}
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// MinAlloc is spa_min_alloc: the smallest allocation of any top-level vdev.
func (p *Pool) MinAlloc() uint64 { return p.minAlloc }

// GCDAlloc is spa_gcd_alloc: the greatest common divisor of the top-level
// vdevs' minimum allocations.
func (p *Pool) GCDAlloc() uint64 { return p.gcdAlloc }

// ASize is the ASIZE of a block on the first top-level vdev (see Pool).
func (p *Pool) ASize(psize uint64) uint64 { return p.top[0].v.ASize(psize) }

// DeflateRatio is the first top-level vdev's vdev_deflate_ratio.
func (p *Pool) DeflateRatio() uint64 { return p.ratio }

// First is the top-level vdev DSIZE is computed on.
func (p *Pool) First() Vdev { return p.top[0].v }

// Mixed reports whether some top-level vdev allocates a block differently
// from the first (another ASIZE function: raidz/dRAID geometry or ashift),
// so that the first-vdev assumption of ASize matters. A mirror and a plain
// disk of the same ashift allocate alike, as do two dRAIDs that differ only
// in children or spares.
func (p *Pool) Mixed() bool {
	first := allocShape(p.top[0].v)
	for _, t := range p.top[1:] {
		if allocShape(t.v) != first {
			return true
		}
	}
	return false
}

// allocShape reduces v to what its ASIZE depends on.
func allocShape(v Vdev) any {
	switch v := v.(type) {
	case Disk:
		return v
	case Mirror:
		return Disk{Ashift: v.Ashift}
	case RAIDZ:
		return v
	case DRAID:
		return DRAID{Parity: v.Parity, Data: v.Data, Ashift: v.Ashift}
	}
	return v
}

// TopLevel returns the number of top-level vdevs.
func (p *Pool) TopLevel() int {
	n := 0
	for _, t := range p.top {
		n += t.n
	}
	return n
}

// String lists the top-level vdevs, runs of identical ones counted:
// "disk", "3 × disk", "2 × mirror 2", "raidz2 8 + mirror 2".
func (p *Pool) String() string {
	var parts []string
	for _, t := range p.top {
		if t.n > 1 {
			parts = append(parts, fmt.Sprintf("%d × %s", t.n, t.v))
		} else {
			parts = append(parts, t.v.String())
		}
	}
	return strings.Join(parts, " + ")
}

// hasDRAID reports whether v is or contains a dRAID vdev.
func hasDRAID(v Vdev) bool {
	switch v := v.(type) {
	case DRAID:
		return true
	case *Pool:
		for _, t := range v.top {
			if _, ok := t.v.(DRAID); ok {
				return true
			}
		}
	}
	return false
}

// GCDAlloc is spa_gcd_alloc for a pool laid out as v: the Pool's GCDAlloc,
// or v's MinAlloc for a single top-level vdev.
func GCDAlloc(v Vdev) uint64 {
	if p, ok := v.(*Pool); ok {
		return p.GCDAlloc()
	}
	return v.MinAlloc()
}
