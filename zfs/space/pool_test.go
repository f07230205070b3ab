package space

import (
	"testing"

	"github.com/ddtsim/ddtsim/zfs/zio"
)

// TestMasterNode: an empty file system's master node is 512 bytes stored
// whole up to 2.3 and 1 KiB stored whole from 2.4.0 at ashift 12 (the
// golden zvol pools' root file system: LREFER 43,008 on 2.1.11 and 2.3.2,
// 43,520 on 2.4.4, USEDDS 98,304 on all three, so one metadata block 512
// bytes larger within the same sector). At ashift 9 the 2.4 microzap
// compresses into one 512-byte sector (capacity 896 rounded down to 512).
func TestMasterNode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		release      string
		ashift       int
		lsize, psize uint64
	}{
		{"2.1.11", 12, 512, 512}, {"2.3.2", 12, 512, 512}, {"2.3.9", 12, 512, 512},
		{"2.4.0", 12, 1024, 1024}, {"2.4.4", 12, 1024, 1024}, {"2.4.4", 9, 1024, 512},
	} {
		rel, err := zio.LookupRelease(c.release)
		if err != nil {
			t.Fatal(err)
		}
		d, err := zio.NewDisk(c.ashift)
		if err != nil {
			t.Fatal(err)
		}
		b := MasterNode(Metadata(&zio.Policy{Release: rel, Vdev: d, Copies: 1, RecordSize: 128 << 10}))
		if b.Count != 1 || b.LSize != c.lsize || b.PSize != c.psize {
			t.Errorf("%s ashift %d: master node %+v, want LSIZE %d PSIZE %d", c.release, c.ashift, b, c.lsize, c.psize)
		}
	}
}
