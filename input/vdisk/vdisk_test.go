package vdisk

import (
	"fmt"
	"testing"
)

func ext(pairs ...uint64) []Extent {
	var l []Extent
	for i := 0; i < len(pairs); i += 2 {
		l = append(l, Extent{pairs[i], pairs[i+1]})
	}
	return l
}

func TestExtentAlgebra(t *testing.T) {
	t.Parallel()
	a := ext(0, 10, 20, 30, 40, 50)
	b := ext(5, 25, 30, 40, 45, 60)
	for _, c := range []struct {
		name      string
		got, want []Extent
	}{
		{"union", Union(a, b), ext(0, 60)},
		{"union disjoint", Union(ext(0, 1), ext(2, 3)), ext(0, 1, 2, 3)},
		{"intersect", Intersect(a, b), ext(5, 10, 20, 25, 45, 50)},
		{"intersect none", Intersect(ext(0, 5), ext(5, 10)), nil},
		{"minus", Minus(a, b), ext(0, 5, 25, 30, 40, 45)},
		{"minus all", Minus(ext(10, 20), ext(0, 30)), nil},
		{"minus inside", Minus(ext(0, 30), ext(10, 12, 14, 16)), ext(0, 10, 12, 14, 16, 30)},
		{"clip", Clip(a, 25), ext(0, 10, 20, 25)},
		{"merge touching", Merge(ext(0, 10), Extent{10, 20}), ext(0, 20)},
		{"merge empty", Merge(ext(0, 10), Extent{15, 15}), ext(0, 10)},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestDirJoin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ path, dir, name, joined string }{
		{"link/web1.qcow2", "link", "../base/b.qcow2", "link/../base/b.qcow2"}, // not cleaned: link may be a symlink
		{"web1.qcow2", ".", "b.qcow2", "./b.qcow2"},
		{"/web1.qcow2", "/", "b.qcow2", "/b.qcow2"},
		{"a/b/../c.vmdk", "a/b/..", "c-flat.vmdk", "a/b/../c-flat.vmdk"},
		{"a/c.vmdk", "a", "/abs/x.vmdk", "/abs/x.vmdk"},
	} {
		if d := Dir(c.path); d != c.dir {
			t.Errorf("Dir(%q) = %q, want %q", c.path, d, c.dir)
		}
		if j := Join(c.dir, c.name); j != c.joined {
			t.Errorf("Join(%q, %q) = %q, want %q", c.dir, c.name, j, c.joined)
		}
	}
}
