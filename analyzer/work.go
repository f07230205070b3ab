package analyzer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/ddt"
	"github.com/ddtsim/ddtsim/zio"
)

// StoreFirst settles the entry of a content whose first reference t.Ref just
// reported: it runs the compression step on data (LSIZE bytes) with w and
// records the resulting PSIZE in t, 0 for an embedded block. An all-zero
// block reaching the table is stored uncompressed (ZFS turns it into a hole
// whenever it compresses). It reports whether the compression step ran.
func StoreFirst(t *ddt.Table, w *zio.Writer, k ddt.Key, data []byte, zero bool) (compressed bool) {
	b := zio.Block{Kind: zio.Stored, PSize: uint64(len(data)), Compression: zio.Off}
	if !zero {
		b = w.Write(data)
	}
	if b.Kind == zio.Embedded {
		t.Set(k, 0)
	} else {
		t.Set(k, uint32(b.PSize))
	}
	return !zero
}

// work processes chunks until the channel closes: read each record, decide
// hole or block, and account the block in the table. Only the first
// reference of a content is compressed. After ctx is cancelled the chunks
// still queued are left undone, but a chunk already started is finished,
// so that Options.Done reports exactly what the result holds.
func (s *scan) work(ctx context.Context, in <-chan chunk, c *Counters) {
	p := s.opts.Policy
	buf := make([]byte, p.RecordSize)
	zeros := s.zeros
	w := zio.NewWriter(p)
	for ch := range in {
		fl := ch.f
		if ctx.Err() != nil {
			fl.incomplete.Store(true)
			s.release(fl)
			continue
		}
		i := ch.first
		for ; i < ch.end && !fl.failed.Load(); i++ {
			if !s.record(fl, i, buf[:fl.lsize], zeros, w, c) {
				break
			}
		}
		s.done(fl, ch.first, i)
		if i < ch.end {
			fl.incomplete.Store(true)
		}
		s.release(fl)
	}
}

// record handles record i of fl; data is an LSIZE-byte buffer. It returns
// false when the record could not be read (and is not accounted).
func (s *scan) record(fl *file, i uint64, data, zeros []byte, w *zio.Writer, c *Counters) bool {
	p := s.opts.Policy
	lsize := uint64(fl.lsize)
	off := i * lsize
	n := min(lsize, fl.src.Size-off)
	var zero bool
	if !fl.src.HasData(off, off+n) {
		zero = true
		c.SourceHoles++
	} else {
		got, err := fl.src.ReadAt(data[:n], int64(off))
		c.ReadBytes += uint64(got)
		if err != nil && !(errors.Is(err, io.EOF) && got < int(n)) {
			if fl.failed.CompareAndSwap(false, true) {
				s.warn(fl.src.Path, fmt.Errorf("read at offset %d: %w", off, err))
			}
			return false
		}
		if uint64(got) < n {
			if fl.failed.CompareAndSwap(false, true) {
				s.changed(fl.src.Path, errShrank)
			}
		}
		clear(data[got:])
		zero = bytes.Equal(data, zeros[:lsize])
	}
	c.Records++
	c.ScannedBytes += n
	if prog := s.opts.Progress; prog != nil {
		prog.BytesDone.Add(int64(n))
	}
	if zero && (p.ZeroIsHole() || fl.copyHoles) {
		c.Holes++
		if s.opts.OnBlock != nil {
			s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: i, LSize: fl.lsize, Hole: true, Zero: true, Tag: fl.tag, Count: 1})
		}
		return true
	}
	var k ddt.Key
	if zero {
		c.ZeroBlocks++
		k = s.zero.Get(fl.lsize)
	} else {
		k = ddt.KeyOf(data)
	}
	if !s.sampled(k) {
		c.Unsampled++
		return true
	}
	if s.table.Ref(k, fl.lsize) && StoreFirst(s.table, w, k, data, zero) && p.Compression != zio.Off {
		c.Compressed++
	}
	if s.opts.OnBlock != nil {
		s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: i, LSize: fl.lsize, Key: k, Zero: zero, Tag: fl.tag, Count: 1})
	}
	return true
}

// sampled reports whether key k falls in the sampled 1/Sample of the hash
// space (always true without sampling). The decision depends on the
// content only, so every copy of a sampled content is kept and its refcnt
// is exact.
func (s *scan) sampled(k ddt.Key) bool {
	return s.opts.Sample <= 1 || ddt.InSample(k, s.opts.Sample)
}
