package zio

import "testing"

// zfs create -V's default volblocksize (zfs_main.c: default_volblocksize(),
// include/sys/fs/zfs.h: ZVOL_DEFAULT_BLOCKSIZE).
func TestDefaultVolBlockSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		release string
		vdevs   []string
		ashift  int
		want    uint32
	}{
		{"0.7.13", nil, 12, 8 << 10},
		{"2.0.7", []string{"raidz2 6"}, 12, 8 << 10}, // before 2.1: no pool-aware default
		{"2.1.11", nil, 12, 8 << 10},
		{"2.1.11", []string{"mirror 2"}, 12, 8 << 10},
		{"2.1.11", []string{"raidz1 4"}, 12, 8 << 10},  // 2 sectors: 8K
		{"2.1.11", []string{"raidz2 6"}, 12, 16 << 10}, // 4 sectors: 16K
		{"2.1.11", []string{"draid2 8"}, 12, 16 << 10}, // 6 data disks: 24K → 16K
		{"2.1.11", []string{"draid2:8d:11c:1s"}, 12, 32 << 10},
		{"2.2", nil, 12, 16 << 10},
		{"2.2", []string{"raidz2 6"}, 12, 16 << 10},
		{"2.3.2", []string{"raidz3 8"}, 13, 32 << 10},
		{"2.4", []string{"disk", "raidz2 6"}, 12, 16 << 10},
		{"2.4", []string{"draid1:8d:10c"}, 12, 32 << 10},
		{"2.4", nil, 9, 16 << 10},
	} {
		rel, err := LookupRelease(c.release)
		if err != nil {
			t.Fatal(err)
		}
		pool, err := NewPool(c.vdevs, c.ashift)
		if err != nil {
			t.Fatal(err)
		}
		if got := DefaultVolBlockSize(rel, pool); got != c.want {
			t.Errorf("%s %v ashift %d: %d, want %d", c.release, c.vdevs, c.ashift, got, c.want)
		}
	}
}

func TestCheckVolBlockSize(t *testing.T) {
	t.Parallel()
	old, _ := LookupRelease("0.6.4")
	newer, _ := LookupRelease("2.2")
	for _, c := range []struct {
		bs  uint64
		rel *Release
		ok  bool
	}{
		{512, old, true}, {128 << 10, old, true}, {256 << 10, old, false},
		{16 << 20, newer, true}, {32 << 20, newer, false}, {256, newer, false}, {3 << 10, newer, false},
	} {
		if err := CheckVolBlockSize(c.bs, c.rel); (err == nil) != c.ok {
			t.Errorf("%d on %s: %v", c.bs, c.rel.Name, err)
		}
	}
}
