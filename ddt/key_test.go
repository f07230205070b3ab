package ddt

import "testing"

// The zero block's cached key is the digest of the zero bytes, per LSIZE.
func TestZeroKeys(t *testing.T) {
	z := NewZeroKeys()
	for _, lsize := range []uint32{512, 4 << 10, 128 << 10, 512} {
		if got, want := z.Get(lsize), KeyOf(make([]byte, lsize)); got != want {
			t.Errorf("ZeroKeys.Get(%d) = %x, want %x", lsize, got[:4], want[:4])
		}
	}
	if z.Get(512) == z.Get(1024) {
		t.Error("zero blocks of different LSIZE share a key")
	}
}
