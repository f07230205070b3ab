package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ddtsim/ddtsim/zfs/nicenum"
	"github.com/ddtsim/ddtsim/zfs/zio"
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
	// Guest: images were read as their guests' disks (Settings.Guest).
	// Absent from scans saved before it existed, which read files as
	// they are.
	Guest bool `json:"guest,omitempty"`
}

// Zvol reports whether the model is that of a zvol scan.
func (m Model) Zvol() bool { return m.VolBlockSize != 0 }

// Records cuts a file of size bytes into the model's blocks: their LSIZE,
// bytes, and their number (zio.FileRecords; zio.ZvolRecords for a zvol).
func (m Model) Records(size uint64) (lsize uint32, n uint64) {
	if m.Zvol() {
		return zio.ZvolRecords(size, m.VolBlockSize)
	}
	return zio.FileRecords(size, m.RecordSize)
}

// Settings returns the settings the model describes, without going
// through their text: the release as resolved, dedup "on" or "off".
func (m Model) Settings() (Settings, error) {
	sparse, err := ParseSparse(m.Sparse)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{
		Release:     m.Release,
		RecordSize:  m.RecordSize,
		Zvol:        m.Zvol(),
		Compression: m.Compression,
		Copies:      m.Copies,
		Dedup:       onOff(m.Dedup),
		Vdevs:       append([]string(nil), m.Vdevs...),
		Ashift:      m.Ashift,
		Sparse:      sparse,
		Sample:      m.Sample,
		Guest:       m.Guest,
	}
	if s.Zvol {
		s.RecordSize, s.VolBlockSize = 0, m.VolBlockSize
	}
	return s, nil
}

// Policy rebuilds the write policy the model describes (for a zvol scan,
// its RecordSize is the volblocksize), and checks that this ddtsim
// describes it the same way (a release table that changed between the
// ddtsim that saved the scan and this one is an error).
func (m Model) Policy() (*zio.Policy, error) {
	s, err := m.Settings()
	if err != nil {
		return nil, err
	}
	p, err := s.Policy()
	if err != nil {
		return nil, err
	}
	if d := m.Diff(s.Model(p)); len(d) > 0 {
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
	add("guest", m.Guest, o.Guest)
	return d
}

// Equal reports whether the two models are the same, release and vdev
// layouts exactly as written included.
func (m Model) Equal(o Model) bool {
	return len(m.Diff(o)) == 0 && m.Release == o.Release && slices.Equal(m.Vdevs, o.Vdevs)
}

// size writes a block size for Diff: "none" for 0 (not set).
func size(n uint32) string {
	if n == 0 {
		return "none"
	}
	return nicenum.Format(uint64(n), false)
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
