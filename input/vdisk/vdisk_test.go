package vdisk

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
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
	type dj struct{ path, dir, name, joined string }
	cases := []dj{
		{"link/web1.qcow2", "link", "b.qcow2", "link/b.qcow2"},
		{"web1.qcow2", ".", "b.qcow2", "./b.qcow2"},
	}
	if runtime.GOOS == "windows" {
		for i := range cases {
			cases[i].joined = filepath.FromSlash(cases[i].joined)
		}
		cases = append(cases,
			// Not cleaned (see Dir); slashes in names made backslashes.
			dj{`link\web1.qcow2`, "link", "../base/b.qcow2", `link\..\base\b.qcow2`},
			dj{`a\b\..\c.vmdk`, `a\b\..`, "c-flat.vmdk", `a\b\..\c-flat.vmdk`},
			dj{`C:\vms\child.vhdx`, `C:\vms`, `..\base\p.vhdx`, `C:\vms\..\base\p.vhdx`},
			dj{`C:/vms/child.vhdx`, `C:/vms`, `.\p.vhdx`, `C:/vms\.\p.vhdx`},
			dj{`\web1.qcow2`, `\`, "b.qcow2", `\b.qcow2`},
			dj{`C:\child.vhdx`, `C:\`, "p.vhdx", `C:\p.vhdx`},
			dj{`C:child.vhdx`, `C:`, "p.vhdx", `C:p.vhdx`},
			dj{`\\srv\share\c.vhdx`, `\\srv\share\`, "p.vhdx", `\\srv\share\p.vhdx`},
			dj{`\\?\C:\vms\c.vhdx`, `\\?\C:\vms`, "sub/p.vhdx", `\\?\C:\vms\sub\p.vhdx`},
			// Absolute; rooted on the image's volume.
			dj{`C:\vms\c.vmdk`, `C:\vms`, `D:\x.vmdk`, `D:\x.vmdk`},
			dj{`C:\vms\c.vmdk`, `C:\vms`, "/abs/x.vmdk", `C:\abs\x.vmdk`},
		)
	} else {
		cases = append(cases,
			dj{"link/web1.qcow2", "link", "../base/b.qcow2", "link/../base/b.qcow2"}, // not cleaned: link may be a symlink
			dj{"/web1.qcow2", "/", "b.qcow2", "/b.qcow2"},
			dj{"a/b/../c.vmdk", "a/b/..", "c-flat.vmdk", "a/b/../c-flat.vmdk"},
			dj{"a/c.vmdk", "a", "/abs/x.vmdk", "/abs/x.vmdk"},
			// A backslash is part of a name here.
			dj{`a\b.vmdk`, ".", `c\d.vmdk`, `./c\d.vmdk`},
			dj{`C:\vms\child.vhdx`, ".", "p.vhdx", "./p.vhdx"},
		)
	}
	for _, c := range cases {
		if d := Dir(c.path); d != c.dir {
			t.Errorf("Dir(%q) = %q, want %q", c.path, d, c.dir)
		}
		if j := Join(c.dir, c.name); j != c.joined {
			t.Errorf("Join(%q, %q) = %q, want %q", c.dir, c.name, j, c.joined)
		}
	}
}

func TestReadBlocks(t *testing.T) {
	// A 25-byte disk of 10-byte blocks whose byte g reads as g; block 2
	// fails when fail is set.
	fail := false
	read := func(q []byte, i, in, g uint64) error {
		if i != g/10 || in != g%10 || in+uint64(len(q)) > 10 {
			t.Fatalf("read(%d bytes, %d, %d, %d)", len(q), i, in, g)
		}
		if fail && i == 2 {
			return errors.New("bad block")
		}
		for k := range q {
			q[k] = byte(g) + byte(k)
		}
		return nil
	}
	for _, c := range []struct {
		off, n, want int
		err          error
	}{
		{0, 25, 25, nil}, {3, 14, 14, nil}, {20, 10, 5, io.EOF}, {25, 1, 0, io.EOF}, {-1, 1, 0, os.ErrInvalid},
	} {
		p := make([]byte, c.n)
		n, err := ReadBlocks(p, int64(c.off), 25, 10, read)
		if n != c.want || err != c.err {
			t.Errorf("ReadBlocks(%d bytes at %d) = %d, %v; want %d, %v", c.n, c.off, n, err, c.want, c.err)
		}
		for k := range n {
			if p[k] != byte(c.off+k) {
				t.Fatalf("ReadBlocks(%d bytes at %d): byte %d is %d", c.n, c.off, k, p[k])
			}
		}
	}
	fail = true
	if n, err := ReadBlocks(make([]byte, 20), 5, 25, 10, read); n != 15 || err == nil {
		t.Errorf("ReadBlocks with block 2 failing = %d, %v; want 15, an error", n, err)
	}
}
