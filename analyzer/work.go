package analyzer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/zio"
)

// work processes chunks until the channel closes: read each record, decide
// hole or block, and account the block in the table. Only the first
// reference of a content is compressed. After ctx is cancelled the chunks
// still queued are left undone, but a chunk already started is finished,
// so that Options.Done reports exactly what the result holds.
func (s *scan) work(ctx context.Context, in <-chan chunk, c *Counters) {
	var buf []byte // a record, made at the first chunk read
	lane := &Lane{Policy: s.opts.Policy, Table: s.table, Zero: s.zero, Sample: s.opts.Sample}
	for ch := range in {
		s.gate.RLock()
		buf = s.chunk(ctx, ch, buf, lane, c)
		s.gate.RUnlock()
	}
}

// chunk reads and accounts one chunk, under the gate (shared), with buf
// for a record (made when nil); it returns buf.
func (s *scan) chunk(ctx context.Context, ch chunk, buf []byte, lane *Lane, c *Counters) []byte {
	fl := ch.f
	if ctx.Err() != nil {
		fl.incomplete.Store(true)
		fl.abandoned.Store(true)
		s.release(fl)
		return buf
	}
	if buf == nil {
		buf = make([]byte, s.opts.Policy.RecordSize)
	}
	i := ch.first
	for ; i < ch.end && !fl.failed.Load() && i < fl.limit.Load(); i++ {
		if !s.record(fl, i, buf[:fl.lsize], s.zeros, lane, c) {
			break
		}
	}
	if i > ch.first {
		fl.accounted(i)
	}
	s.done(fl, ch.first, i)
	if i < ch.end {
		fl.incomplete.Store(true)
	}
	s.release(fl)
	return buf
}

// record handles record i of fl; data is an LSIZE-byte buffer. It returns
// false when the record could not be read, or lies past the end of a file
// that shrank (and is not accounted).
func (s *scan) record(fl *file, i uint64, data, zeros []byte, lane *Lane, c *Counters) bool {
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
			// The file ends at off+got now: it has records up to
			// this one if it still holds some of its bytes (they
			// are what the record covers), else up to the one
			// before. The records past that end are left out.
			if got == 0 {
				fl.shrink(fl.recordsNow(i))
				return false
			}
			fl.shrink(i + 1)
			n = uint64(got)
		}
		clear(data[got:])
		zero = bytes.Equal(data, zeros[:lsize])
	}
	c.Records++
	c.ScannedBytes += n
	if prog := s.opts.Progress; prog != nil {
		prog.BytesDone.Add(int64(n))
	}
	k, o := lane.Record(data, zero, fl.copyHoles)
	if o == Hole {
		c.Holes++
		if s.opts.OnBlock != nil {
			s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: i, LSize: fl.lsize, Hole: true, Zero: true, Tag: fl.tag, Count: 1})
		}
		return true
	}
	if zero {
		c.ZeroBlocks++
	}
	switch o {
	case Unsampled:
		c.Unsampled++
		return true
	case New:
		if !zero && p.Compression != zio.Off {
			c.Compressed++
		}
	}
	if s.opts.OnBlock != nil {
		s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: i, LSize: fl.lsize, Key: k, Zero: zero, Tag: fl.tag, Count: 1})
	}
	return true
}

// recordsNow returns how many records fl holds now, at most i, when a read
// of record i found nothing there: the file ends at or before the record's
// start, maybe well before. Found by TestFileTruncatedBehindTheReads: a
// file cut back to 40 records while its record 72 was read was taken to
// end at 72, and the warning said that the records past its new end were
// left out, when 32 of them read before the cut were counted. The end is
// found by reading a byte at the start of records, in a binary search; a
// record whose byte cannot be read for another reason than the end (an
// I/O error) counts as there.
func (fl *file) recordsNow(i uint64) uint64 {
	var b [1]byte
	lsize := uint64(fl.lsize)
	// has(r): record r-1 holds a byte, so the file has r records.
	has := func(r uint64) bool {
		got, err := fl.src.ReadAt(b[:], int64((r-1)*lsize))
		return got == 1 || err != nil && !errors.Is(err, io.EOF)
	}
	lo, hi := uint64(0), i // has(lo) (0 records: always); answer in [lo, hi]
	for lo < hi {
		m := lo + (hi-lo+1)/2
		if has(m) {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}
