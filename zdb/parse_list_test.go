package zdb

import (
	"slices"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfslist"
)

// A zdb -S text, then zfs list and zpool list -v (human sizes), with the
// commands and a zpool status config between: Parse keeps the histogram
// and reads both list tables, and takes zpool status's NAME header for
// neither.
func TestParseLists(t *testing.T) {
	t.Parallel()
	text := strings.Join([]string{
		"$ zfs list -o space,logicalused,logicalreferenced,compressratio tank",
		"NAME   AVAIL   USED  USEDSNAP  USEDDS  USEDREFRESERV  USEDCHILD  LUSED  LREFER  RATIO",
		"tank   61.5G  41.7M         0   41.4M              0       312K  52.7M   52.6M  1.28x",
		"$ zpool list -v tank",
		"NAME                    SIZE  ALLOC   FREE  CKPOINT  EXPANDSZ   FRAG    CAP  DEDUP    HEALTH  ALTROOT",
		"tank                     63.5G  41.8M  63.5G        -         -     0%     0%  1.00x    ONLINE  -",
		"  raidz1-0               63.5G  41.8M  63.5G        -         -     0%  0.06%      -    ONLINE",
		"    virtio-zdisk0  64.0G      -      -        -         -      -      -      -    ONLINE",
		"",
		"  pool: tank",
		" state: ONLINE",
		"config:",
		"",
		"\tNAME        STATE     READ WRITE CKSUM",
		"\ttank        ONLINE       0     0     0",
		"",
		"$ zdb -S tank",
		workedZdbS,
	}, "\n")
	p := ParseString(text)
	if len(p.Lists) != 2 {
		t.Fatalf("%d list tables, want 2: %+v", len(p.Lists), p.Lists)
	}
	zfs, zpool := p.List(zfslist.Zfs), p.List(zfslist.Zpool)
	if zfs == nil || zpool == nil || zfs.Line != 2 || zpool.Line != 5 {
		t.Fatalf("zfs list %+v, zpool list %+v", zfs, zpool)
	}
	if len(zfs.Rows) != 1 || !slices.Equal(zfs.RowLines, []int{3}) || len(zpool.Rows) != 3 {
		t.Errorf("rows: zfs list %q (lines %v), zpool list %q", zfs.Rows, zfs.RowLines, zpool.Rows)
	}
	if v, ok := zfs.Size("", "USED"); !ok || v.Text != "41.7M" || !v.Contains(43728896) || v.Contains(43000000) {
		t.Errorf("USED %+v %v", v, ok)
	}
	if r, ok := zfs.Ratio("tank", "RATIO"); !ok || r != 1.28 {
		t.Errorf("RATIO %v %v", r, ok)
	}
	if v, ok := zpool.Size("", "ALLOC"); !ok || v.Text != "41.8M" {
		t.Errorf("ALLOC %+v %v", v, ok)
	}
	if d, ok := zpool.Ratio("", "DEDUP"); !ok || d != 1 {
		t.Errorf("DEDUP %v %v", d, ok)
	}
	if _, ok := zpool.Size("virtio-zdisk0", "ALTROOT"); ok {
		t.Error("the short vdev row has an ALTROOT")
	}
	if p.Primary() == nil || p.Primary().Kind != KindSimulated {
		t.Errorf("the zdb -S table is lost: %+v", p.Tables)
	}
	for _, d := range p.Diags {
		if d.Severity != SevNote {
			t.Errorf("diagnostic %s", d)
		}
	}
	if len(p.Commands) != 3 {
		t.Errorf("commands %+v, want the zfs list, zpool list and zdb -S lines", p.Commands)
	}
}

// A header with no rows is warned about and left out; a text of junk has
// no lists.
func TestParseListsNone(t *testing.T) {
	t.Parallel()
	p := ParseString("NAME  USED  AVAIL  REFER  MOUNTPOINT\n\nhello world\n")
	if len(p.Lists) != 0 || len(p.Diags) == 0 || !strings.Contains(p.Diags[0].Msg, "zfs list header without rows") {
		t.Errorf("lists %+v, diags %v", p.Lists, p.Diags)
	}
}

// TestListMountpointWithSpaces: a mountpoint (or altroot) holding spaces,
// the last column, is one field (found by a new user: the row was not
// understood and compare had nothing to compare with).
func TestListMountpointWithSpaces(t *testing.T) {
	t.Parallel()
	text := "NAME   USED  AVAIL  REFER  MOUNTPOINT\ntank  15.0M     1G  14.7M  /mnt/my tank\n"
	l, err := zfslist.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := l.Size("tank", "USED"); !ok || v.Text != "15.0M" || l.Rows[0][4] != "/mnt/my tank" {
		t.Errorf("USED %+v %v, row %q", v, ok, l.Rows[0])
	}
	p := ParseString(text)
	if len(p.Lists) != 1 || len(p.Lists[0].Rows) != 1 || p.Lists[0].Rows[0][4] != "/mnt/my tank" {
		t.Errorf("parsed lists %+v", p.Lists)
	}
}
