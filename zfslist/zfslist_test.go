package zfslist

import (
	"strings"
	"testing"
)

func TestListKind(t *testing.T) {
	t.Parallel()
	for cols, want := range map[string]string{
		"USED AVAIL REFER MOUNTPOINT":                                     Zfs,
		"SIZE ALLOC FREE CKPOINT EXPANDSZ FRAG CAP DEDUP HEALTH ALTROOT":  Zpool,
		"STATE READ WRITE CKSUM":                                          "",
		"AVAIL USED USEDSNAP USEDDS USEDREFRESERV USEDCHILD LUSED LREFER": Zfs,
		"ALLOC DEDUP":       Zpool,
		"FOO BAR":           "",
		"USED ALLOC":        "",
		"USED DEDUP":        "",
		"USED":              Zfs,
		"DEDUP RATIO ALLOC": Zpool,
	} {
		if got := Kind(strings.Fields(cols)); got != want {
			t.Errorf("Kind(%s) = %q, want %q", cols, got, want)
		}
	}
}
