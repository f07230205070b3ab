package vhdx

import (
	"encoding/binary"
	"fmt"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

// readBAT reads the BAT region's entries into d.bat (payload entries)
// and d.sbOff (sector bitmap blocks of a differencing disk), checking
// every present block's place in the file.
//
// Present blocks must fit in the file side by side: a BAT whose entries
// share file space could otherwise make a small file describe terabytes
// of sector bitmaps (Allocated's extents, kept in memory).
func (d *disk) readBAT(r region) error {
	nb := d.blockCount()
	cr := d.chunkRatio
	var entries uint64
	if nb > 0 {
		if d.hasParent {
			// Every chunk's sector bitmap entry, the last one's too.
			entries = (nb + cr - 1) / cr * (cr + 1)
		} else {
			entries = nb + (nb-1)/cr
		}
	}
	if entries > r.length/8 {
		return d.ErrAt(r.entryOff, "BAT region of %d bytes holds %d entries; a %d-byte disk of %d-byte blocks needs %d",
			r.length, r.length/8, d.size, d.blockSize, entries)
	}
	d.bat = make([]uint64, nb)
	sb := make([]uint64, (entries+cr)/(cr+1))
	buf := make([]byte, min(entries*8, mib))
	for j := uint64(0); j < entries; {
		n := min(uint64(len(buf))/8, entries-j)
		if err := d.ReadStruct(buf[:n*8], int64(r.off+j*8), "BAT"); err != nil {
			return err
		}
		for k := range n {
			e := binary.LittleEndian.Uint64(buf[8*k:])
			idx := j + k
			if (idx+1)%(cr+1) == 0 {
				sb[idx/(cr+1)] = e
			} else if i := idx - idx/(cr+1); i < nb {
				d.bat[i] = e
			}
		}
		j += n
	}
	entryOff := func(i uint64) int64 { return int64(r.off + (i+i/cr)*8) }
	var used uint64 // bytes of the present blocks and sector bitmaps
	for i, e := range d.bat {
		i := uint64(i)
		switch state(e) {
		case stNotPresent, stUndefined, stZero, stUnmapped, stUnmapped095:
			continue
		case stFullyPresent:
		case stPartially:
			if !d.hasParent {
				return d.ErrAt(entryOff(i), "block %d partially present in a disk without a parent", i)
			}
			c := i / cr
			if d.sbOff == nil {
				d.sbOff = make([]int64, len(sb))
			}
			if d.sbOff[c] != 0 {
				break
			}
			s := sb[c]
			soff := int64(r.off + (c*(cr+1)+cr)*8)
			if state(s) != sbPresent {
				return d.ErrAt(soff, "sector bitmap of chunk %d not present (state %d) but block %d is partially present", c, state(s), i)
			}
			if err := d.checkInFile(soff, fileOff(s), mib, fmt.Sprintf("sector bitmap block %d", c)); err != nil {
				return err
			}
			d.sbOff[c] = fileOff(s)
			used += mib
		default:
			return d.ErrAt(entryOff(i), "block %d in reserved state %d", i, state(e))
		}
		if err := d.checkInFile(entryOff(i), fileOff(e), d.blockLen(i), fmt.Sprintf("block %d", i)); err != nil {
			return err
		}
		if used += d.blockLen(i); used > uint64(d.FileSize) {
			return d.ErrAt(entryOff(i), "present blocks up to block %d need %d bytes, more than the file's %d (blocks share file space)",
				i, used, d.FileSize)
		}
	}
	return nil
}

// bitmap returns the sector bitmap bits of block i for its sectors
// [s0, s1).
func (d *disk) bitmap(i, s0, s1 uint64) (vdisk.SectorBitmap, error) {
	off := d.sbOff[i/d.chunkRatio] + int64((i%d.chunkRatio)*d.sectorsPerBlock()/8)
	return d.ReadSectorBitmap(i, off, s0, s1, false)
}

// checkInFile checks that n bytes at off lie past the header section and
// within the file; at is the BAT entry to blame.
func (d *disk) checkInFile(at, off int64, n uint64, what string) error {
	if off < headerSection || uint64(off) > uint64(d.FileSize) || n > uint64(d.FileSize-off) {
		return d.ErrAt(at, "%s at file offset %d, %d bytes: outside the file's data (1 MiB to %d)", what, off, n, d.FileSize)
	}
	return nil
}

func (d *disk) blockLen(i uint64) uint64 { return min(d.blockSize, d.size-i*d.blockSize) }
func (d *disk) blockCount() uint64       { return (d.size + d.blockSize - 1) / d.blockSize }
func (d *disk) sectorsPerBlock() uint64  { return d.blockSize / d.sectorSize }
func state(e uint64) uint64              { return e & 7 }
func fileOff(e uint64) int64             { return int64(e >> 20 << 20) }

// buildAllocated sets d.alloc: this file's present blocks and sectors,
// and the parent's allocated ranges where this file defers to it.
func (d *disk) buildAllocated() error {
	var own, deferred []vdisk.Extent
	ss := d.sectorSize
	for i, e := range d.bat {
		i := uint64(i)
		lo := i * d.blockSize
		hi := lo + d.blockLen(i)
		switch state(e) {
		case stFullyPresent:
			own = vdisk.Merge(own, vdisk.Extent{Off: lo, End: hi})
		case stNotPresent:
			if d.parent != nil {
				deferred = vdisk.Merge(deferred, vdisk.Extent{Off: lo, End: hi})
			}
		case stPartially:
			n := (hi - lo) / ss
			bm, err := d.bitmap(i, 0, n)
			if err != nil {
				return err
			}
			own, deferred = bm.Split(own, deferred, lo, ss, n)
		}
	}
	if d.parent != nil {
		own = vdisk.DiffAllocated(own, deferred, d.parent, d.size)
	}
	d.alloc = own
	return nil
}

// ReadAt reads guest bytes; it only reads the files (no state changes),
// so it is safe for concurrent use.
func (d *disk) ReadAt(p []byte, off int64) (int, error) {
	return vdisk.ReadBlocks(p, off, d.size, d.blockSize, func(q []byte, i, in, g uint64) error {
		switch e := d.bat[i]; state(e) {
		case stFullyPresent:
			return d.ReadData(q, fileOff(e)+int64(in))
		case stPartially:
			return d.readPartial(q, i, in, fileOff(e))
		case stNotPresent:
			return vdisk.ReadParent(d.parent, q, g)
		default:
			clear(q)
			return nil
		}
	})
}

// readPartial reads q from block i, at byte in of the block, sector by
// sector as the bitmap says: from this file at data (the block's file
// offset) or from the parent.
func (d *disk) readPartial(q []byte, i, in uint64, data int64) error {
	ss := d.sectorSize
	bm, err := d.bitmap(i, in/ss, (in+uint64(len(q))+ss-1)/ss)
	if err != nil {
		return err
	}
	return bm.ReadRuns(q, in, ss,
		func(q []byte, in uint64) error { return d.ReadData(q, data+int64(in)) },
		func(q []byte, in uint64) error { return vdisk.ReadParent(d.parent, q, i*d.blockSize+in) })
}
