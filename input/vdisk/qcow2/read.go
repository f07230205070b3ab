package qcow2

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// ReadAt reads guest bytes at guest offset off: data clusters from the
// data file, compressed clusters decompressed, zero clusters as zeros,
// unallocated ones from the backing file (zeros past its end, or without
// one). It returns io.EOF for bytes at or past Size. It is safe for
// concurrent use. A data cluster that the file ends inside reads as
// zeros past the end, as QEMU reads it; an entry that turns out invalid
// (the file changed since Open) gives a *vdisk.FormatError.
func (d *image) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegative
	}
	if uint64(off) >= d.size {
		return 0, io.EOF
	}
	n := len(p)
	var eof error
	if rest := d.size - uint64(off); uint64(n) > rest {
		n, eof = int(rest), io.EOF
	}
	if err := d.read(p[:n], uint64(off)); err != nil {
		return 0, err
	}
	return n, eof
}

// pending is a read not yet issued: consecutive pieces of p that come
// from consecutive bytes of the data file (normal) or of the backing disk
// (unallocated), read with one call.
type pending struct {
	k        kind
	src      uint64
	dst, end int
}

func (d *image) read(p []byte, g uint64) error {
	var pend pending
	sub := uint64(1) << d.subBits
	for pos := 0; pos < len(p); {
		at := g + uint64(pos)
		ci := at >> d.bits
		in := at & (d.csize - 1) // offset in the cluster
		t, l2Off, err := d.table(ci / d.l2n)
		if err != nil {
			return err
		}
		k, runEnd := unallocated, d.csize
		var e entry
		if t != nil {
			if e, err = d.decode(t, l2Off, ci%d.l2n); err != nil {
				return err
			}
			s := in >> d.subBits
			k = e.kind(uint(s))
			if k != compressed {
				// extend over the following subclusters of the same kind
				for runEnd = (s + 1) * sub; runEnd < d.csize && e.kind(uint(runEnd/sub)) == k; runEnd += sub {
				}
			}
		}
		m := int(min(runEnd-in, uint64(len(p)-pos)))
		var src uint64
		switch k {
		case normal:
			src = e.host + in
		case unallocated:
			src = at
			if d.backing == nil {
				k = zero
			}
		}
		if pend.end > pend.dst && (pend.k != k || pend.src+uint64(pend.end-pend.dst) != src || k == zero || k == compressed) {
			if err := d.issue(p, pend); err != nil {
				return err
			}
			pend.end = pend.dst
		}
		switch k {
		case zero:
			clear(p[pos : pos+m])
		case compressed:
			if err := d.readCompressed(p[pos:pos+m], e, in, l2Off, ci%d.l2n); err != nil {
				return err
			}
		default:
			if pend.end == pend.dst {
				pend = pending{k: k, src: src, dst: pos}
			}
			pend.end = pos + m
		}
		pos += m
	}
	if pend.end > pend.dst {
		return d.issue(p, pend)
	}
	return nil
}

// issue reads a pending run.
func (d *image) issue(p []byte, r pending) error {
	b := p[r.dst:r.end]
	if r.k == unallocated {
		return d.readBacking(b, r.src)
	}
	n, err := d.data.ReadAt(b, int64(r.src))
	if n < len(b) {
		if err != io.EOF {
			return err
		}
		clear(b[n:]) // past the end of the file: zeros, as QEMU reads it
	}
	return nil
}

// readBacking reads b from the backing disk at guest offset g, zeros
// past its end.
func (d *image) readBacking(b []byte, g uint64) error {
	bs := d.backing.Size()
	want := 0
	if g < bs {
		want = int(min(uint64(len(b)), bs-g))
		n, err := d.backing.ReadAt(b[:want], int64(g))
		if n < want {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	clear(b[want:])
	return nil
}

// decoder holds one decompression's buffers and state, reused through
// the image's pool.
type decoder struct {
	in  []byte        // compressed bytes, up to 2 clusters
	out []byte        // one cluster
	br  bytes.Reader  // over in, for flate
	fl  io.ReadCloser // raw deflate, created on first use
}

func (d *image) newDecoder() any {
	return &decoder{}
}

// readCompressed fills b with the bytes at in.. of the compressed cluster
// e (spec: Cluster mapping, Compressed Clusters Descriptor): its data is
// csize bytes from host (less at the end of the file), a raw deflate
// stream (compression_type 0) or a zstd frame (1); decompression stops
// after one cluster, and a stream that ends short of it is an error.
//
// A read of a whole cluster decompresses into b; a read of part of one
// goes through the cache of decompressed clusters, so that reading a
// 2 MiB cluster in small pieces decompresses it once.
func (d *image) readCompressed(b []byte, e entry, in uint64, l2Off, i uint64) error {
	if c, ok := d.clusters.get(e.host); ok {
		copy(b, c[in:])
		return nil
	}
	at := int64(l2Off + i*8)
	if d.extL2 {
		at = int64(l2Off + i*16)
	}
	dec := d.pool.Get().(*decoder)
	defer d.pool.Put(dec)
	whole := uint64(len(b)) == d.csize
	out := b
	if !whole {
		out = make([]byte, d.csize) // kept by the cache
	}
	n := min(e.csize, uint64(d.fileSize)-e.host)
	if uint64(cap(dec.in)) < n {
		dec.in = make([]byte, n)
	}
	src := dec.in[:n]
	if _, err := d.f.ReadAt(src, int64(e.host)); err != nil && err != io.EOF {
		return err
	}
	dec.br.Reset(src)
	// Decompression stops after one cluster: what follows in the last
	// sector may be the next compressed cluster.
	if d.zstd {
		frame, err := zstdFrame(src)
		if err == nil {
			var got []byte
			got, err = d.zd.DecodeAll(frame, out[:0])
			if err == nil && len(got) != len(out) {
				err = fmt.Errorf("%d bytes, not one cluster", len(got))
			}
		}
		if err != nil {
			return &vdisk.FormatError{File: d.path, Off: at, Reason: "compressed cluster: decompressing zstd", Err: err}
		}
	} else {
		if dec.fl == nil {
			dec.fl = flate.NewReader(&dec.br)
		} else if err := dec.fl.(flate.Resetter).Reset(&dec.br, nil); err != nil {
			return err
		}
		if _, err := io.ReadFull(dec.fl, out); err != nil {
			return &vdisk.FormatError{File: d.path, Off: at, Reason: "compressed cluster: decompressing deflate", Err: err}
		}
	}
	if !whole {
		copy(b, out[in:])
		d.clusters.put(e.host, out)
	}
	return nil
}

// zstdFrame returns the zstd frame at the start of b without the bytes
// after it (the rest of the last sector), by walking its block headers
// (RFC 8878, section 3.1.1): DecodeAll would take those bytes for the
// start of another frame.
func zstdFrame(b []byte) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(b); err != nil {
		return nil, err
	}
	if h.Skippable {
		return nil, errors.New("skippable frame")
	}
	n := h.HeaderSize
	for last := false; !last; {
		if len(b)-n < 3 {
			return nil, io.ErrUnexpectedEOF
		}
		bh := int(b[n]) | int(b[n+1])<<8 | int(b[n+2])<<16
		n += 3
		last = bh&1 != 0
		size := bh >> 3
		switch (bh >> 1) & 3 {
		case 1: // RLE: one byte
			size = 1
		case 3:
			return nil, errors.New("reserved block type")
		}
		if size > len(b)-n {
			return nil, io.ErrUnexpectedEOF
		}
		n += size
	}
	if h.HasCheckSum {
		if len(b)-n < 4 {
			return nil, io.ErrUnexpectedEOF
		}
		n += 4
	}
	return b[:n], nil
}
