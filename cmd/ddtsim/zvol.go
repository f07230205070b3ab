package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ddtsim/ddtsim/zdb"
	"github.com/ddtsim/ddtsim/zio"
)

// volume applies --zvol, --volblocksize and -o volblocksize to p: each file
// is then a volume (zfs create -V) whose blocks are all volblocksize bytes,
// p.RecordSize holding the volblocksize. --zvol alone takes the default
// zfs create -V would give on this pool and release (zio.DefaultVolBlockSize).
// recordsize does not apply to volumes, as zfs create -V says.
func (s *scanCmd) volume(p *zio.Policy) error {
	value, given := s.Volblocksize, s.Volblocksize != ""
	recordsize := false
	for _, kv := range s.Property {
		name, v, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "volblocksize", "volblock":
			if given {
				a, errA := parseSize(v)
				b, errB := parseSize(value)
				if errA != nil || errB != nil || a != b {
					return fmt.Errorf("-o volblocksize=%s and --volblocksize %s disagree", v, value)
				}
			}
			value, given = v, true
		case "recordsize", "recsize":
			recordsize = true
		}
	}
	s.zvol = s.Zvol || given
	if !s.zvol {
		return nil
	}
	if recordsize {
		return errors.New("-o recordsize does not apply to volumes (--zvol, --volblocksize): their block size is the volblocksize")
	}
	bs := uint64(zio.DefaultVolBlockSize(p.Release, p.Vdev))
	if given {
		n, err := parseSize(value)
		if err == nil {
			err = zio.CheckVolBlockSize(n, p.Release)
		}
		if err != nil {
			large := "above 128K the pool needs large_blocks, which new pools have"
			if p.Release.MaxRecordSize <= 128<<10 {
				large = "release " + p.Version + " has no large blocks (they came with 0.6.5)"
			}
			return fmt.Errorf("--volblocksize %s: invalid (accepted: a power of two from 512 to %s, e.g. 8K, 16K, 64K; %s)",
				value, zdb.Nicenum(uint64(p.Release.MaxRecordSize), false), large)
		}
		bs = n
	}
	p.RecordSize = uint32(bs)
	return nil
}

// parseRAM parses --ram.
func (s *scanCmd) parseRAM() error {
	s.ram = 0
	if s.RAM == "" {
		return nil
	}
	n, err := parseSize(s.RAM)
	if err != nil || n < 64<<20 {
		return fmt.Errorf("--ram %s: invalid (accepted: the machine's memory, a whole number with an optional K, M, G, T suffix, at least 64M, e.g. 16G, 512G)", s.RAM)
	}
	s.ram = n
	return nil
}
