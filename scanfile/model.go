package scanfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/zio"
)

// Model is everything that decides how a block is accounted: two scans
// with equal models give tables that can be added (Merge), and a scan can
// only be continued with its own model (Resume).
type Model struct {
	Release string `json:"release"`       // the OpenZFS release modelled, resolved: "2.1.16"
	Rules   string `json:"release_rules"` // the row of the release table applied: "2.1"
	// RecordSize is the recordsize of files in a file system, bytes; 0
	// for a zvol scan.
	RecordSize uint32 `json:"recordsize"`
	// VolBlockSize is the volblocksize of a zvol scan (each file a
	// volume, analyzer.Options.Zvol), bytes; 0 for files in a file system.
	VolBlockSize uint32   `json:"volblocksize,omitempty"`
	Compression  string   `json:"compression"` // resolved, as zfs get prints it: "lz4", "gzip-6", "zstd-fast-1", "off"
	Copies       int      `json:"copies"`
	Dedup        bool     `json:"dedup"`
	Vdevs        []string `json:"vdevs"` // the --vdev layouts as given; empty: one disk
	Pool         string   `json:"pool"`  // the layout they make: "disk", "3 × disk", "raidz2 8 + mirror 2"
	Ashift       int      `json:"ashift"`
	Sparse       string   `json:"sparse"` // auto, always, never
	Sample       uint64   `json:"sample"` // N: 1/N of the contents kept (1: all)
}

// ModelOf describes policy p with the scan's other settings: the --vdev
// layouts as given, the ashift, the sparse mode, the sampling rate, and
// whether the files are scanned as volumes (p.RecordSize then being the
// volblocksize).
func ModelOf(p *zio.Policy, vdevs []string, ashift int, sparse analyzer.Sparse, sample uint64, zvol bool) Model {
	version := p.Version
	if version == "" {
		version = p.Release.Name
	}
	pl, ok := p.Vdev.(*zio.Pool)
	if !ok {
		pl = zio.PoolOf(p.Vdev)
	}
	m := Model{
		Release:     version,
		Rules:       p.Release.Name,
		RecordSize:  p.RecordSize,
		Compression: zio.CompressionName(p.Compression, p.Level),
		Copies:      p.Copies,
		Dedup:       p.Dedup,
		Vdevs:       append([]string{}, vdevs...),
		Pool:        pl.String(),
		Ashift:      ashift,
		Sparse:      sparse.String(),
		Sample:      max(sample, 1),
	}
	if zvol {
		m.RecordSize, m.VolBlockSize = 0, p.RecordSize
	}
	return m
}

// Zvol reports whether the model is that of a zvol scan.
func (m Model) Zvol() bool { return m.VolBlockSize != 0 }

// Policy rebuilds the write policy the model describes (for a zvol scan,
// its RecordSize is the volblocksize), and checks that
// this ddtsim describes it the same way (a release table that changed
// between the ddtsim that saved the scan and this one is an error).
func (m Model) Policy() (*zio.Policy, error) {
	rel, version, err := zio.ResolveRelease(m.Release)
	if err != nil {
		return nil, err
	}
	pool, err := zio.NewPool(m.Vdevs, m.Ashift)
	if err != nil {
		return nil, err
	}
	comp, level, err := zio.ParseCompression(m.Compression, rel)
	if err != nil {
		return nil, err
	}
	p := &zio.Policy{
		Release:     rel,
		Version:     version,
		RecordSize:  max(m.RecordSize, m.VolBlockSize),
		Compression: comp,
		Level:       level,
		Copies:      m.Copies,
		Dedup:       m.Dedup,
		Vdev:        pool,
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sparse, err := analyzer.ParseSparse(m.Sparse)
	if err != nil {
		return nil, err
	}
	again := ModelOf(p, m.Vdevs, m.Ashift, sparse, m.Sample, m.Zvol())
	if d := m.Diff(again); len(d) > 0 {
		return nil, fmt.Errorf("this ddtsim models the saved settings differently: %s", strings.Join(d, "; "))
	}
	return p, nil
}

// Diff lists the properties in which m and o differ, as "name: m's value
// vs o's value". Releases of one row of the release table follow the same
// rules and are not a difference; the vdev layouts are compared as the
// pool they make ("stripe 2" is two disks).
func (m Model) Diff(o Model) []string {
	var d []string
	add := func(name string, a, b any) {
		if a != b {
			d = append(d, fmt.Sprintf("%s: %v vs %v", name, a, b))
		}
	}
	if m.Rules != o.Rules {
		d = append(d, fmt.Sprintf("release: %s (rules of %s) vs %s (rules of %s)", m.Release, m.Rules, o.Release, o.Rules))
	}
	add("recordsize", size(m.RecordSize), size(o.RecordSize))
	add("volblocksize", size(m.VolBlockSize), size(o.VolBlockSize))
	add("compression", m.Compression, o.Compression)
	add("copies", m.Copies, o.Copies)
	add("dedup", onOff(m.Dedup), onOff(o.Dedup))
	add("vdevs", m.Pool, o.Pool)
	add("ashift", m.Ashift, o.Ashift)
	add("sparse", m.Sparse, o.Sparse)
	add("sample", sample(m.Sample), sample(o.Sample))
	return d
}

// Equal reports whether the two models are the same, release and vdev
// layouts exactly as written included.
func (m Model) Equal(o Model) bool {
	return len(m.Diff(o)) == 0 && m.Release == o.Release && slices.Equal(m.Vdevs, o.Vdevs)
}

func size(n uint32) string {
	switch {
	case n == 0:
		return "none"
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func sample(n uint64) string {
	if n <= 1 {
		return "none"
	}
	return fmt.Sprintf("1/%d", n)
}
