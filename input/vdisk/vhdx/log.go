package vhdx

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

const logSector = 4 * kib

// checkLog refuses an image whose log holds entries to replay.
//
// A zero LogGuid in the current header means the log is empty (qemu and
// Hyper-V zero it once the log is flushed). Otherwise an entry counts
// when its header has the "loge" signature, the header's LogGuid, a
// non-zero sequence number, a length that is a whole number of 4 KiB
// sectors within the log, and a good CRC-32C over the whole entry; any
// such entry is refused (wrapping vdisk.ErrUnsupported), since its
// updates to the BAT and metadata would have to be replayed first. A
// non-zero LogGuid with no valid entry is an empty log, as for qemu.
func (d *disk) checkLog(h header) error {
	if h.logGUID == (guid{}) {
		return nil
	}
	ln, lo := uint64(h.logLength), h.logOffset
	if ln == 0 || ln%mib != 0 || lo%mib != 0 || lo < headerSection || lo > uint64(d.FileSize) || ln > uint64(d.FileSize)-lo {
		return d.ErrAt(h.off+68, "log at %d, %d bytes: not 1 MiB aligned past the header section within the file (%d bytes)",
			lo, ln, d.FileSize)
	}
	hdr := make([]byte, 64)
	// Entries of a sound log do not overlap: checksumming more than the
	// log twice over means headers claiming each other's sectors.
	budget := 2 * ln
	for s := uint64(0); s < ln; s += logSector {
		if err := d.ReadStruct(hdr, int64(lo+s), "log sector"); err != nil {
			return err
		}
		if string(hdr[:4]) != "loge" || guid(hdr[32:48]) != h.logGUID {
			continue
		}
		n := uint64(binary.LittleEndian.Uint32(hdr[8:]))
		seq := binary.LittleEndian.Uint64(hdr[16:])
		if n == 0 || n%logSector != 0 || n > ln || seq == 0 {
			continue
		}
		if n > budget {
			return d.ErrAt(int64(lo+s), "log entries overlap (more than twice the %d-byte log to checksum)", ln)
		}
		budget -= n
		ok, err := d.logEntryCRC(lo, ln, s, n, binary.LittleEndian.Uint32(hdr[4:]))
		if err != nil {
			return err
		}
		if ok {
			return vdisk.Unsupported(d.Path, "vhdx log with entries to replay (the image was not closed cleanly; "+
				"open it read-write once with Hyper-V or run qemu-img check -r all on it)")
		}
	}
	return nil
}

// logEntryCRC reports whether the n-byte log entry at s in the circular
// log (at file offset lo, ln bytes) has CRC-32C want, its own checksum
// field (bytes 4-7) taken as zero.
func (d *disk) logEntryCRC(lo, ln, s, n uint64, want uint32) (bool, error) {
	buf := make([]byte, logSector)
	var c uint32
	for k := uint64(0); k < n; k += logSector {
		if err := d.ReadStruct(buf, int64(lo+(s+k)%ln), "log entry"); err != nil {
			return false, err
		}
		if k == 0 {
			clear(buf[4:8])
		}
		c = crc32.Update(c, castagnoli, buf)
	}
	return c == want, nil
}
