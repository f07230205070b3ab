package vhdx

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/ddtsim/ddtsim/input/vdisk"
)

var testLogGUID = mustGUID("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")

// setHeader rewrites a header field (8 bytes at off in the header at h)
// and its checksum.
func setHeader(img []byte, h, off int, v []byte) {
	copy(img[h+off:], v)
	putCRC(img[h : h+headerSize])
}

// setRegionLen sets the BAT region's length in both region tables.
func setRegionLen(img []byte, n uint32) {
	for _, r := range []int{region1Off, region2Off} {
		binary.LittleEndian.PutUint32(img[r+40:], n)
		putCRC(img[r : r+regionSize])
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	data := guestData(6*mib+1024, 3)
	base := func() *builder { return mixed(512, data) }
	for _, c := range []struct {
		name        string
		build       func(b *builder)
		edit        func(img []byte) []byte
		unsupported bool
		reason      string
		off         int64 // the FormatError's Off, -2 for any
	}{
		{name: "not vhdx", edit: func(img []byte) []byte { img[0] = 'V'; return img }, reason: "no vhdxfile signature", off: 0},
		{name: "empty", edit: func(img []byte) []byte { return nil }, reason: "past the end of the file", off: 0},
		{name: "truncated header section", edit: func(img []byte) []byte { return img[:512*kib] }, reason: "shorter than the 1 MiB header section", off: 0},
		{name: "truncated metadata", edit: func(img []byte) []byte { return img[:bBATOff+mib+100] }, reason: "within the file", off: region1Off + 16 + 32},
		{name: "truncated last block", edit: func(img []byte) []byte { return img[:len(img)-mib+512] }, reason: "block 6 at file offset", off: bBATOff + 6*8},
		{name: "both headers bad", edit: func(img []byte) []byte {
			img[header1Off+100]++
			img[header2Off+100]++
			return img
		}, reason: "no valid header", off: header1Off},
		{name: "headers same sequence", edit: func(img []byte) []byte {
			setHeader(img, header1Off, 8, le64(11))
			setHeader(img, header1Off, 32, []byte("other-data-guid!"))
			return img
		}, reason: "both headers have sequence number 11 but differ", off: header1Off},
		{name: "both region tables bad", edit: func(img []byte) []byte {
			img[region1Off+9]++
			img[region2Off+9]++
			return img
		}, reason: "region table: checksum", off: region1Off},
		{name: "BAT entry past EOF", build: func(b *builder) { b.rawBAT = map[uint64]uint64{2: 64*mib | stFullyPresent} },
			reason: "block 2 at file offset 67108864, 1048576 bytes: outside", off: bBATOff + 2*8},
		{name: "BAT entry in header section", build: func(b *builder) { b.rawBAT = map[uint64]uint64{2: 0 | stFullyPresent} },
			reason: "block 2 at file offset 0", off: bBATOff + 2*8},
		{name: "reserved state", build: func(b *builder) { b.rawBAT = map[uint64]uint64{3: 4} }, reason: "reserved state 4", off: bBATOff + 3*8},
		{name: "partial without parent", build: func(b *builder) { b.rawBAT = map[uint64]uint64{3: 7} }, reason: "partially present in a disk without a parent", off: bBATOff + 3*8},
		{name: "virtual size 65 TiB", build: func(b *builder) { b.size, b.bs = 65*tib, 256*mib; b.blocks = nil }, reason: "up to 64 TiB", off: -2},
		{name: "virtual size odd", build: func(b *builder) { b.size = 6*mib + 100 }, reason: "not a multiple of the 512-byte sector", off: -2},
		{name: "block size 512 KiB", build: func(b *builder) { b.bs = 512 * kib; b.blocks = nil }, reason: "block size 524288", off: -2},
		{name: "block size 512 MiB", build: func(b *builder) { b.bs = 512 * mib; b.blocks = nil }, reason: "block size 536870912", off: -2},
		{name: "block size 3 MiB", build: func(b *builder) { b.bs = 3 * mib; b.blocks = nil }, reason: "not a power of 2", off: -2},
		{name: "sector size 1024", build: func(b *builder) { b.ss = 1024 }, reason: "logical sector size 1024", off: -2},
		{name: "BAT region too small", build: func(b *builder) { b.size = 200 << 30; b.blocks = nil },
			edit: func(img []byte) []byte { setRegionLen(img, mib); return img }, reason: "BAT region of 1048576 bytes holds 131072 entries", off: region1Off + 16},
		{name: "BAT region past EOF", edit: func(img []byte) []byte { setRegionLen(img, 1<<31); return img }, reason: "within the file", off: region1Off + 16},
		{name: "log to replay", build: func(b *builder) { b.logGUID, b.logEntry = testLogGUID, true }, unsupported: true, reason: "log with entries to replay"},
		{name: "log to replay, current header", build: func(b *builder) { b.logGUID, b.logEntry = testLogGUID, true },
			edit: func(img []byte) []byte {
				setHeader(img, header1Off, 48, make([]byte, 16)) // older header: empty log
				return img
			}, unsupported: true, reason: "log with entries to replay"},
		{name: "log outside the file", build: func(b *builder) { b.logGUID = testLogGUID },
			edit: func(img []byte) []byte { setHeader(img, header2Off, 72, le64(1<<40)); return img }, reason: "log at 1099511627776", off: header2Off + 68},
		{name: "blocks share file space", build: func(b *builder) {
			b.size = 64 * mib
			b.blocks = map[uint64]blk{0: {stFullyPresent, data[:mib]}}
			b.rawBAT = map[uint64]uint64{}
			for i := uint64(1); i < 64; i++ {
				b.rawBAT[i] = (b.metaOff() + mib) | stFullyPresent
			}
		}, reason: "blocks share file space", off: -2},
		{name: "log entries overlap", build: func(b *builder) { b.logGUID = testLogGUID },
			edit: func(img []byte) []byte {
				for s := bLogOff; s < 2*mib; s += logSector {
					copy(img[s:], "loge")
					binary.LittleEndian.PutUint32(img[s+8:], mib)
					binary.LittleEndian.PutUint64(img[s+16:], 1)
					copy(img[s+32:], testLogGUID[:])
				}
				return img
			}, reason: "log entries overlap", off: bLogOff + 2*logSector},
		{name: "log version", edit: func(img []byte) []byte { setHeader(img, header2Off, 64, []byte{1, 0}); return img },
			unsupported: true, reason: "vhdx log version 1"},
		{name: "unknown required region", build: func(b *builder) { b.extraReg = true }, unsupported: true, reason: "required vhdx region"},
		{name: "unknown required metadata", build: func(b *builder) { b.extraMD = true }, unsupported: true, reason: "required vhdx metadata item"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := base()
			if c.build != nil {
				c.build(b)
			}
			img := b.bytes()
			if c.edit != nil {
				img = c.edit(img)
			}
			p := write(t, t.TempDir(), "bad.vhdx", img)
			err := wantErr(t, p, nil, c.unsupported, c.reason)
			var fe *vdisk.FormatError
			if !c.unsupported && errors.As(err, &fe) && c.off != -2 && fe.Off != c.off {
				t.Errorf("%v: Off %d, want %d", err, fe.Off, c.off)
			}
		})
	}
}

// TestTolerated: damage a reader gets around, and logs with nothing to
// replay, read as the intact image does.
func TestTolerated(t *testing.T) {
	t.Parallel()
	data := guestData(6*mib+1024, 4)
	want := mixedWant(data)
	for _, c := range []struct {
		name  string
		build func(b *builder)
		edit  func(img []byte)
	}{
		{"current header bad", nil, func(img []byte) { img[header2Off+200]++ }},
		{"older header bad", nil, func(img []byte) { img[header1Off+200]++ }},
		{"older header newer version", nil, func(img []byte) { setHeader(img, header1Off, 66, []byte{2, 0}) }},
		{"older header other log version", nil, func(img []byte) { setHeader(img, header1Off, 64, []byte{1, 0}) }},
		{"identical headers", nil, func(img []byte) { setHeader(img, header2Off, 8, le64(10)) }},
		{"first region table bad", nil, func(img []byte) { img[region1Off+1000]++ }},
		{"older header's log to replay", func(b *builder) { b.logGUID, b.logEntry = testLogGUID, true },
			func(img []byte) { setHeader(img, header2Off, 48, make([]byte, 16)) }},
		{"log GUID, empty log", func(b *builder) { b.logGUID = testLogGUID }, nil},
		{"log entry with a bad checksum", func(b *builder) { b.logGUID, b.badEntry = testLogGUID, true }, nil},
		{"log entry of another log GUID", func(b *builder) { b.logGUID, b.logEntry = testLogGUID, true },
			func(img []byte) { setHeader(img, header2Off, 48, []byte("another-log-guid")) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := mixed(512, data)
			if c.build != nil {
				c.build(b)
			}
			img := b.bytes()
			if c.edit != nil {
				c.edit(img)
			}
			p := write(t, t.TempDir(), "ok.vhdx", img)
			d := openFile(t, p, nil)
			if got := readAll(t, d); string(got) != string(want) {
				t.Errorf("guest bytes differ")
			}
		})
	}
}
