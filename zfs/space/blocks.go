package space

import "github.com/ddtsim/ddtsim/zfs/zio"

// Blocks sums blocks of one kind, one copy of each: the copies are the
// metadata policy's (Metadata).
type Blocks struct {
	Count    uint64 `json:"count"`    // blocks allocated (embedded ones not included)
	Embedded uint64 `json:"embedded"` // blocks stored in their block pointer: no allocation
	LSize    uint64 `json:"lsize"`    // logical size of all of them, bytes
	PSize    uint64 `json:"psize"`    // physical size, bytes (embedded: their payload); what LUSED counts of metadata
	ASize    uint64 `json:"asize"`    // allocated size of one copy, bytes: sectors, parity and padding included
}

// Add adds o to b.
func (b *Blocks) Add(o Blocks) {
	b.Count += o.Count
	b.Embedded += o.Embedded
	b.LSize += o.LSize
	b.PSize += o.PSize
	b.ASize += o.ASize
}

// Metadata returns the write policy of a dataset's metadata blocks
// (indirect blocks, dnodes, ZAPs) on the pool of p (dmu.c:
// dmu_write_policy() with ismd): compressed with lz4 whatever the
// dataset's compression (the lz4_compress feature is active on every pool
// this models), one copy more than the data's up to 3
// (redundant_metadata=all), never deduplicated.
func Metadata(p *zio.Policy) *zio.Policy {
	md := *p
	md.Compression, md.Level = zio.LZ4, 0
	md.Copies = min(p.Copies+1, 3)
	md.Dedup = false
	return &md
}

// block returns one metadata block of lsize bytes whose lz4 output is c
// bytes (header included), as md stores it (zio.Policy.Outcome).
func block(md *zio.Policy, lsize, c uint64) Blocks {
	fits := c <= md.MaxCompressedSize(lsize)
	b := md.Outcome(lsize, c, fits)
	if b.Kind == zio.Embedded {
		return Blocks{Embedded: 1, LSize: lsize, PSize: c}
	}
	return Blocks{Count: 1, LSize: lsize, PSize: b.PSize, ASize: md.Vdev.ASize(b.PSize)}
}
