package analyzer

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// work processes chunks until the channel closes: read each record, decide
// hole or block, and account the block in the table. Only the first
// reference of a content is compressed. After ctx is cancelled the chunks
// still queued are left undone, but a chunk already started is finished,
// so that Options.Done reports exactly what the result holds. Records are
// read outside the worker's accountant's lock and accounted under it
// (checkpoint.go).
func (s *run) work(ctx context.Context, in <-chan chunk, a *accountant) {
	var buf []byte // a record, made at the first chunk read
	st := s.opts.Stages
	lane := &Lane{Policy: s.opts.Policy, Table: s.table, Zero: s.zero, Sample: s.opts.Sample, Stages: st}
	bps := &bpTally{}
	a.bps = bps
	t := st.now()
	for ch := range in {
		st.since(StageIdle, t)
		buf = s.chunk(ctx, ch, buf, lane, a, bps)
		t = st.now()
	}
	st.since(StageIdle, t)
}

// chunk reads and accounts one chunk with buf for a record (made when
// nil), tallying its block pointers in bps; it returns buf.
func (s *run) chunk(ctx context.Context, ch chunk, buf []byte, lane *Lane, a *accountant, bps *bpTally) []byte {
	fl := ch.f
	if ctx.Err() != nil {
		a.mu.Lock()
		fl.incomplete.Store(true)
		fl.abandoned.Store(true)
		s.release(fl)
		a.mu.Unlock()
		return buf
	}
	if buf == nil {
		buf = make([]byte, s.opts.Policy.RecordSize)
	}
	a.mu.Lock()
	a.fl, a.first, a.next, a.end = fl, ch.first, ch.first, ch.end
	bps.start(fl)
	bps.resume(ch.open)
	a.mu.Unlock()
	i := ch.first
	for ; i < ch.end && !fl.failed.Load() && i < fl.limit.Load(); i++ {
		if fl.planned && !s.opts.Read.Reads(fl.planKey, i) && s.unread(fl, i, a, bps) {
			continue
		}
		data := buf[:fl.lsize]
		t := s.opts.Stages.now()
		r := s.read(fl, i, data)
		s.opts.Stages.since(StageRead, t)
		a.mu.Lock()
		a.c.ReadBytes += r.read
		if r.ok {
			k, o := s.account(fl, i, data, r, lane, &a.c)
			bps.add(i, k, o)
			a.next = i + 1
		}
		a.mu.Unlock()
		if !r.ok {
			break
		}
	}
	a.mu.Lock()
	bps.flush()
	if i > ch.first {
		fl.accounted(i)
	}
	s.done(fl, ch.first, i)
	if i < ch.end {
		fl.incomplete.Store(true)
	}
	t := s.opts.Stages.now()
	s.release(fl)
	s.opts.Stages.since(StageFinish, t)
	a.fl = nil
	a.mu.Unlock()
	return buf
}

// unread accounts record i of fl, which the plan (Options.Read) does not
// read, as unread, and returns true; it returns false for a record lying
// wholly in a hole of the source file that ZFS leaves a hole, which is
// known without reading and accounted as in a full scan (the plan samples
// only the records ZFS would store: storesZeros). Its block pointer is
// tallied as data of a content of its own.
func (s *run) unread(fl *file, i uint64, a *accountant, bps *bpTally) bool {
	if !s.unreadable(fl, i) {
		return false
	}
	a.mu.Lock()
	s.accountUnread(fl, i, &a.c, bps)
	a.next = i + 1
	a.mu.Unlock()
	return true
}

// unreadable reports whether record i of fl, which the plan does not
// read, is accounted as unread (unread): false for a record lying wholly
// in a hole of the source file that ZFS leaves a hole.
func (s *run) unreadable(fl *file, i uint64) bool {
	if fl.src.Data == nil {
		return true // all data
	}
	lsize := uint64(fl.lsize)
	off := i * lsize
	n := min(lsize, fl.src.Size-off)
	return fl.src.HasData(off, off+n) || s.storesZeros(fl)
}

// oneRecord counts n records of the population in files of one record of
// LSIZE lsize, bytes (Counters.OneRecordPopulation, and OneRecordSizes
// with a group plan).
func (s *run) oneRecord(c *Counters, lsize, n uint64) {
	c.OneRecordPopulation += n
	if s.opts.Read.Groups {
		if c.OneRecordSizes == nil {
			c.OneRecordSizes = map[uint64]uint64{}
		}
		c.OneRecordSizes[lsize] += n
	}
}

// accountUnread accounts record i of fl as unread (see unread) in c and
// bps, under the lock of c's accountant.
func (s *run) accountUnread(fl *file, i uint64, c *Counters, bps *bpTally) {
	lsize := uint64(fl.lsize)
	n := min(lsize, fl.src.Size-i*lsize)
	c.Records++
	c.Unread++
	c.Population++
	if fl.nrec == 1 {
		s.oneRecord(c, lsize, 1)
	}
	c.DataLSize += lsize
	c.DataMaxDSize += s.opts.Policy.DSize(lsize)
	c.MaxLSize = max(c.MaxLSize, lsize)
	c.ScannedBytes += n
	if prog := s.opts.Progress; prog != nil {
		prog.BytesDone.Add(int64(n))
	}
	var k ddt.Key
	binary.LittleEndian.PutUint64(k[:8], fl.planKey^i*0x9e3779b97f4a7c15)
	bps.add(i, k, New)
}

// unreadChunk accounts, on the walk's goroutine, the chunk of records
// [first, end) of fl (open: as for a worker's chunk) when the plan reads
// none of them and each is accounted as unread (unread), and returns
// true; it returns false, having done nothing, when some record is to be
// read or looked at: the chunk then goes to the workers. It accounts the
// chunk as a worker would (the same counters, block pointers, Done and
// release), under the walk's accountant's lock held throughout, so that a
// checkpoint finds it either not begun or done. With --read most chunks
// of a tree of small files read nothing (their files are not opened,
// Walker.Opens): handing each to a worker cost a channel send and,
// the workers being idle, a goroutine's wake-up a file.
func (s *run) unreadChunk(fl *file, first, end uint64, open *OpenChunk) bool {
	if !fl.planned {
		return false
	}
	for i := first; i < end; i++ {
		if s.opts.Read.Reads(fl.planKey, i) || !s.unreadable(fl, i) {
			return false
		}
	}
	a := s.walkAcct
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.walkBPs == nil {
		s.walkBPs = &bpTally{}
	}
	bps := s.walkBPs
	bps.start(fl)
	bps.resume(open)
	i := first
	for ; i < end && !fl.failed.Load() && i < fl.limit.Load(); i++ {
		s.accountUnread(fl, i, &a.c, bps)
	}
	bps.flush()
	if i > first {
		fl.accounted(i)
	}
	s.done(fl, first, i)
	if i < end {
		fl.incomplete.Store(true)
	}
	s.release(fl)
	return true
}

// storesZeros reports whether ZFS would store an all-zero record of fl
// as a block (compression=off, copied without holes: Lane.Record) rather
// than leave a hole. With --read such records, those lying wholly in a
// hole of the source file among them, are records to sample like any
// other: before, the source's holes were accounted in full while the
// estimator took the table for a sample, and the range of USED missed a
// sparse file copied with --sparse never (TestReadSparseNever).
func (s *run) storesZeros(fl *file) bool {
	return !s.opts.Policy.ZeroIsHole() && !fl.copyHoles
}

// readRecord is what reading one record gave.
type readRecord struct {
	n          uint64 // bytes the record holds (its LSIZE but for the file's last)
	zero       bool   // all zeros
	sourceHole bool   // wholly in a hole of the source file: not read
	read       uint64 // bytes read from the file
	ok         bool   // false: not read (an error, or past the end of a file that shrank): not to be accounted
}

// read reads record i of fl into data, an LSIZE-byte buffer, zero-padded.
func (s *run) read(fl *file, i uint64, data []byte) readRecord {
	lsize := uint64(fl.lsize)
	off := i * lsize
	r := readRecord{n: min(lsize, fl.src.Size-off), ok: true}
	if !fl.src.HasData(off, off+r.n) {
		r.zero, r.sourceHole = true, true
		return r
	}
	got, err := fl.src.ReadAt(data[:r.n], int64(off))
	r.read = uint64(got)
	if err != nil && !(errors.Is(err, io.EOF) && got < int(r.n)) {
		if fl.failed.CompareAndSwap(false, true) {
			s.warn(fl.src.Path, fmt.Errorf("read at offset %d: %w", off, err))
		}
		r.ok = false
		return r
	}
	if uint64(got) < r.n {
		// The file ends at off+got now: it has records up to this one
		// if it still holds some of its bytes (they are what the
		// record covers), else up to the one before. The records past
		// that end are left out.
		if got == 0 {
			fl.shrink(fl.recordsNow(i))
			r.ok = false
			return r
		}
		fl.shrink(i + 1)
		r.n = uint64(got)
	}
	clear(data[got:])
	r.zero = bytes.Equal(data, s.zeros[:lsize])
	return r
}

// account accounts record i of fl, read (r) into data, in the table and
// in c; it returns the record's key and outcome (Lane.Record).
func (s *run) account(fl *file, i uint64, data []byte, r readRecord, lane *Lane, c *Counters) (ddt.Key, Outcome) {
	p := s.opts.Policy
	if r.sourceHole {
		c.SourceHoles++
	}
	sampled := fl.planned && (!r.sourceHole || s.storesZeros(fl))
	grouped := fl.planned && s.opts.Read.Groups
	var g uint64
	if sampled {
		l := uint64(fl.lsize)
		c.Population++
		if fl.nrec == 1 {
			s.oneRecord(c, l, 1)
		}
		c.DataLSize += l
		c.DataMaxDSize += p.DSize(l)
		c.MaxLSize = max(c.MaxLSize, l)
		c.ReadLSize += l
		c.ReadLSizeSq += (l >> 9) * (l >> 9)
		if grouped {
			g = s.opts.Read.TableGroup(fl.planKey, i, fl.nrec)
		}
	}
	if grouped && !sampled && r.sourceHole && fl.nrec > 1 {
		c.addSizeHoles(fl.src.Size, 1) // of no group's population
	}
	c.Records++
	c.ScannedBytes += r.n
	if prog := s.opts.Progress; prog != nil {
		prog.BytesDone.Add(int64(r.n))
	}
	var k ddt.Key
	var o Outcome
	if grouped && sampled {
		k, o = lane.RecordInGroup(data, r.zero, fl.copyHoles, g)
	} else {
		k, o = lane.Record(data, r.zero, fl.copyHoles)
	}
	if o == Hole {
		c.Holes++
		c.HoleBytes += r.n
		if sampled {
			c.ReadHoles++
			c.ReadHoleBytes += r.n
			if grouped {
				lane.HoleInGroup(fl.lsize, g) // a record of its group
			}
		}
		if s.opts.OnBlock != nil {
			s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: i, LSize: fl.lsize, Hole: true, Zero: true, Tag: fl.tag, Count: 1, Bytes: r.n})
		}
		return k, o
	}
	if r.zero {
		c.ZeroBlocks++
	} else if pad := uint64(fl.lsize) - r.n; pad > 0 && lane.Embedded(data, k, o) {
		c.EmbeddedPad += pad
	}
	switch o {
	case Unsampled:
		c.Unsampled++
		return k, o
	case New:
		if !r.zero && p.Compression != zio.Off {
			c.Compressed++
		}
	}
	if s.opts.OnBlock != nil {
		s.opts.OnBlock(BlockEvent{Path: fl.src.Path, BlkID: i, LSize: fl.lsize, Key: k, Zero: r.zero, Tag: fl.tag, Count: 1, Bytes: r.n})
	}
	return k, o
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
