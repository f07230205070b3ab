package vdisk

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// TestParentNames: the names recorded by Windows (backslashes) are paths
// on every system; absolute ones only where they are absolute.
func TestParentNames(t *testing.T) {
	vol := `\\?\Volume{26a21bda-a627-11d7-9931-806e6f6e6963}\vm\p.vhdx`
	for _, c := range []struct {
		rel       string
		abs       []string
		other     []string
		unix, win []string
	}{
		// VHD: W2ru, W2ku and MacX, then the header's parent name.
		{`..\base.vhd`, []string{`C:\images\base.vhd`, "/Users/u/base.vhd"}, []string{"base.vhd"},
			[]string{"../base.vhd", "/Users/u/base.vhd", "base.vhd"},
			[]string{`..\base.vhd`, `C:\images\base.vhd`, "base.vhd"}},
		// VHDX: relative_path, volume_path, absolute_win32_path
		// ([MS-VHDX] 2.6.2.6.3's examples and order).
		{`..\..\path2\sub3\parent.vhdx`, []string{vol, `\\?\d:\path2\sub3\parent.vhdx`}, nil,
			[]string{"../../path2/sub3/parent.vhdx", "parent.vhdx", "p.vhdx"},
			[]string{`..\..\path2\sub3\parent.vhdx`, vol, `\\?\d:\path2\sub3\parent.vhdx`, "parent.vhdx", "p.vhdx"}},
		// As Hyper-V writes them (no \\?\ in absolute_win32_path).
		{`.\base.vhdx`, []string{"", `C:\vm\base.vhdx`}, nil,
			[]string{"./base.vhdx", "base.vhdx"},
			[]string{`.\base.vhdx`, `C:\vm\base.vhdx`, "base.vhdx"}},
		// An absolute relative path, a UNC path, a drive-relative one.
		{"/abs/a.vhd", []string{`\\server\share\b.vhd`, "d:c.vhd"}, nil,
			[]string{"a.vhd", "b.vhd", "d:c.vhd"},
			[]string{`\\server\share\b.vhd`, "a.vhd", "b.vhd", "d:c.vhd"}},
		{`x:\a.vhd`, []string{"/p/q.vhd"}, nil,
			[]string{"/p/q.vhd", "a.vhd", "q.vhd"},
			[]string{"a.vhd", "q.vhd"}},
		{"", []string{"", ""}, []string{"", "/", "."}, nil, nil},
	} {
		want := c.unix
		if runtime.GOOS == "windows" {
			want = c.win
		}
		if got := ParentNames(c.rel, c.abs, c.other...); !slices.Equal(got, want) {
			t.Errorf("ParentNames(%q, %q, %q) = %q, want %q", c.rel, c.abs, c.other, got, want)
		}
	}
}

func TestSectorBitmap(t *testing.T) {
	bits := []byte{0b1011_0000, 0b0000_0001}
	for _, c := range []struct {
		msb           bool
		own, deferred []Extent
	}{
		// Sectors 0, 2, 3 and 15 set.
		{true, ext(0, 1, 2, 4, 15, 16), ext(1, 2, 4, 15)},
		// Sectors 4, 5, 7 and 8 set.
		{false, ext(4, 6, 7, 9), ext(0, 4, 6, 7, 9, 16)},
	} {
		bm := SectorBitmap{Bits: bits, MSBFirst: c.msb}
		sectors := func(l []Extent) []Extent { // guest bytes to sectors
			var out []Extent
			for _, e := range l {
				out = append(out, Extent{(e.Off - 1000) / 10, (e.End - 1000) / 10})
			}
			return out
		}
		own, deferred := bm.Split(nil, nil, 1000, 10, 16)
		if !slices.Equal(sectors(own), c.own) || !slices.Equal(sectors(deferred), c.deferred) {
			t.Errorf("MSBFirst %v: Split gives own %v, deferred %v (sectors), want %v, %v", c.msb, sectors(own), sectors(deferred), c.own, c.deferred)
		}
		// ReadRuns over bytes 15 to 95 of the block with the whole
		// bitmap, and over 85 to 155 with its second byte (sectors 8
		// on), against the runs Set and Run give.
		full := SectorBitmap{Bits: bits, MSBFirst: c.msb}
		part := SectorBitmap{Bits: bits[1:], First: 8, MSBFirst: c.msb}
		for _, r := range []struct {
			b       SectorBitmap
			in, end uint64
		}{{full, 15, 95}, {part, 85, 155}} {
			var got []string
			read := func(who string) func([]byte, uint64) error {
				return func(p []byte, in uint64) error {
					got = append(got, fmt.Sprintf("%s %d+%d", who, in, len(p)))
					return nil
				}
			}
			if err := r.b.ReadRuns(make([]byte, r.end-r.in), r.in, 10, read("own"), read("parent")); err != nil {
				t.Fatal(err)
			}
			var want []string
			for in := r.in; in < r.end; {
				s := in / 10
				end := min(full.Run(s, 16)*10, r.end)
				who := "parent"
				if full.Set(s) {
					who = "own"
				}
				want = append(want, fmt.Sprintf("%s %d+%d", who, in, end-in))
				in = end
			}
			if !slices.Equal(got, want) || len(want) < 2 {
				t.Errorf("MSBFirst %v: ReadRuns from %d calls %q, want %q", c.msb, r.in, got, want)
			}
		}
	}
}
