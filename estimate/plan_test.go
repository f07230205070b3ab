package estimate

import (
	"hash/fnv"
	"testing"
)

// FileKey is hash/fnv's FNV-1a of the path (with Groups, of 0xff and the
// size, for a file of more than one record), mixed with the seed: the
// keys, and so the records a plan reads, are those of the plans saved
// before it hashed inline.
func TestFileKeyIsFNV(t *testing.T) {
	want := func(p Plan, path string, size, records uint64) uint64 {
		h := fnv.New64a()
		if p.Groups && records > 1 {
			b := [9]byte{0xff}
			for i := range 8 {
				b[1+i] = byte(size >> (8 * i))
			}
			h.Write(b[:])
		} else {
			h.Write([]byte(path))
		}
		return mix(h.Sum64() ^ mix(p.Seed+0x9e3779b97f4a7c15))
	}
	for _, groups := range []bool{false, true} {
		for _, path := range []string{"", "a", "small/000/f00001.bin", "/x/\xff\x00\u00fc"} {
			for _, size := range []uint64{0, 1, 128 << 10, 1<<40 + 7, ^uint64(0)} {
				for _, records := range []uint64{0, 1, 2, 99} {
					p := Plan{Fraction: 0.01, Seed: size*3 + records, Groups: groups}
					if got, w := p.FileKey(path, size, records), want(p, path, size, records); got != w {
						t.Errorf("%+v: FileKey(%q, %d, %d) = %#x, want %#x", p, path, size, records, got, w)
					}
				}
			}
		}
	}
}
