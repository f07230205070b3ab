package zio

import (
	"github.com/ddtsim/ddtsim/compress/lz4"
)

// Kind says how a block ends up on disk.
type Kind uint8

const (
	// Stored blocks are allocated and counted by zdb -S.
	Stored Kind = iota
	// Embedded blocks live inside their block pointer; zdb -S skips them.
	Embedded
	// Hole blocks are not allocated at all.
	Hole
)

func (k Kind) String() string {
	switch k {
	case Stored:
		return "stored"
	case Embedded:
		return "embedded"
	case Hole:
		return "hole"
	}
	return "?"
}

// Block is the outcome of writing one non-hole level-0 block.
type Block struct {
	Kind        Kind
	PSize       uint64      // bytes; LSIZE when stored uncompressed; 0 unless Stored
	Compression Compression // Off when stored uncompressed
}

// Writer runs the compression step for one goroutine; it holds the
// compressor state and output buffer so that the per-block path allocates
// nothing. Not safe for concurrent use.
type Writer struct {
	p   *Policy
	lz4 lz4.Compressor
	out []byte
}

// NewWriter returns a Writer for p. p must be valid.
func NewWriter(p *Policy) *Writer {
	return &Writer{p: p, out: make([]byte, p.RecordSize)}
}

// Write decides how a non-hole block is stored: data holds exactly LSIZE
// bytes (zero-padded). It models zio_write_compress() for release band P6:
// compress with the capacity of MaxCompressedSize, embed output of at most
// 112 bytes when allowed, round to PSIZE, and store uncompressed when that
// does not save space. All-zero blocks are the caller's business (see
// ZeroIsHole).
func (w *Writer) Write(data []byte) Block {
	lsize := uint64(len(data))
	uncompressed := Block{Kind: Stored, PSize: lsize, Compression: Off}
	if w.p.Compression == Off {
		return uncompressed
	}
	d := w.p.MaxCompressedSize(lsize)
	if uint64(len(w.out)) < d {
		w.out = make([]byte, d)
	}
	var c int
	var err error
	switch w.p.Compression {
	case LZ4:
		c, err = w.lz4.Compress(w.out[:d], data)
	default:
		panic("zio: unmodelled compression " + w.p.Compression.String())
	}
	if err != nil || uint64(c) > d {
		return uncompressed
	}
	if c <= EmbeddedMax && w.p.EmbedAllowed() {
		return Block{Kind: Embedded, Compression: w.p.Compression}
	}
	r := w.p.RoundPSize(uint64(c))
	if r >= lsize {
		return uncompressed
	}
	return Block{Kind: Stored, PSize: r, Compression: w.p.Compression}
}
