// Command genscans writes synthetic saved scans (package saved, format 2) for
// the benchmark of ddtsim merge (scripts/bench-merge.sh):
//
//	go run ./internal/benchdata/genscans -o DIR [-scans 64] [-entries 100000000] [-shared 0.3]
//
// It writes DIR/scan-00 … DIR/scan-NN (DIR must be missing or empty),
// holding -entries DDT entries in all, spread evenly. Of each scan's
// entries, the fraction -shared is drawn from a pool of keys every scan
// draws from (a tenth of all entries), so that merging adds refcnts across
// scans; the rest are keys of that scan alone. The model is ddtsim's
// default (lz4, recordsize 128K, one disk, ashift 12); sizes are drawn
// per key. The output depends only on the flags.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/ddtsim/ddtsim/analyzer"
	"github.com/ddtsim/ddtsim/saved"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
)

func main() {
	out := flag.String("o", "", "output directory (missing or empty)")
	scans := flag.Int("scans", 64, "saved scans to write")
	entries := flag.Int64("entries", 100_000_000, "DDT entries in all the scans together")
	shared := flag.Float64("shared", 0.3, "fraction of each scan's entries drawn from keys all scans share")
	flag.Parse()
	if *out == "" || *scans < 1 || *entries < 1 || *shared < 0 || *shared > 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: genscans -o DIR [-scans N] [-entries N] [-shared F]")
		os.Exit(2)
	}
	if err := run(*out, *scans, *entries, *shared); err != nil {
		fmt.Fprintln(os.Stderr, "genscans:", err)
		os.Exit(1)
	}
}

func run(out string, scans int, entries int64, shared float64) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if ls, _ := os.ReadDir(out); len(ls) > 0 {
		return fmt.Errorf("%s is not empty", out)
	}
	set := model.Settings{}
	p, err := set.Policy()
	if err != nil {
		return err
	}
	m := set.Model(p)
	pool := uint64(max(1, entries/10))
	per := entries / int64(scans)
	start := time.Now()
	for s := range scans {
		n := per
		if s == scans-1 {
			n = entries - per*int64(scans-1)
		}
		rng := rand.New(rand.NewPCG(uint64(s), 0x5eed))
		t := ddt.NewTable(p.DSize)
		var refs uint64
		for have := int64(0); have < n; {
			var k ddt.Key
			if rng.Float64() < shared {
				i := rng.Uint64N(pool)
				kr := rand.New(rand.NewPCG(i, 0xb10c)) // the same key in every scan
				binary.BigEndian.PutUint64(k[0:], kr.Uint64())
				binary.BigEndian.PutUint64(k[8:], kr.Uint64())
			} else {
				binary.BigEndian.PutUint64(k[0:], rng.Uint64())
				binary.BigEndian.PutUint64(k[8:], rng.Uint64())
			}
			ref := uint64(1)
			if rng.IntN(8) == 0 {
				ref += rng.Uint64N(16)
			}
			refs += ref
			if t.RefN(k, 128<<10, ref) {
				have++
				// The size is a function of the key: equal in every scan.
				t.Set(k, uint32(1+k[15]%32)*4096)
			}
		}
		sc := &saved.Scan{
			Header: saved.Header{
				Ddtsim: "genscans", Created: time.Unix(1700000000, 0).UTC(), Host: fmt.Sprintf("host%02d", s), Dir: "/",
				Model: m, Paths: []saved.Path{saved.Path(fmt.Sprintf("/srv/host%02d", s))}, Complete: true,
			},
			Table: t,
			Counters: analyzer.Counters{Files: refs / 64, Records: refs, Stored: refs,
				LogicalBytes: refs << 17, ScannedBytes: refs << 17, ReadBytes: refs << 17},
		}
		if err := saved.Write(filepath.Join(out, fmt.Sprintf("scan-%02d", s)), sc); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "genscans: scan %d of %d: %d entries (%.0fs)\n", s+1, scans, n, time.Since(start).Seconds())
	}
	return nil
}
