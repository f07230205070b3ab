package zio

import "testing"

func TestFileRecords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		size  uint64
		rs    uint32
		lsize uint32
		nrec  uint64
	}{
		{1, 128 << 10, 512, 1},
		{100, 128 << 10, 512, 1},
		{5000, 128 << 10, 5120, 1},
		{100000, 128 << 10, 100352, 1},
		{128 << 10, 128 << 10, 128 << 10, 1},
		{128<<10 + 1, 128 << 10, 128 << 10, 2},
		{1 << 20, 128 << 10, 128 << 10, 8},
		{100000, 4 << 10, 4 << 10, 25},
	}
	for _, c := range cases {
		l, n := FileRecords(c.size, c.rs)
		if l != c.lsize || n != c.nrec {
			t.Errorf("FileRecords(%d, %d) = %d, %d; want %d, %d", c.size, c.rs, l, n, c.lsize, c.nrec)
		}
	}
}

func TestZvolRecords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		size  uint64
		vbs   uint32
		lsize uint32
		nrec  uint64
	}{
		{5000, 16 << 10, 16 << 10, 1}, // zfs-semantics §3.2: one 16K block (a file: one 5120-byte block)
		{1, 8 << 10, 8 << 10, 1},
		{100000, 16 << 10, 16 << 10, 7},
		{16 << 10, 16 << 10, 16 << 10, 1},
		{16<<10 + 1, 16 << 10, 16 << 10, 2},
		{1 << 20, 16 << 10, 16 << 10, 64},
		{1 << 20, 1 << 20, 1 << 20, 1},
		{0, 16 << 10, 16 << 10, 0},
	} {
		l, n := ZvolRecords(c.size, c.vbs)
		if l != c.lsize || n != c.nrec {
			t.Errorf("ZvolRecords(%d, %d) = %d, %d; want %d, %d", c.size, c.vbs, l, n, c.lsize, c.nrec)
		}
	}
}
