package english

import "testing"

func TestCount(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		got, want string
	}{
		{Count(0, "file"), "0 files"},
		{Count(1, "file"), "1 file"},
		{Count(uint64(2), "path"), "2 paths"},
		{Count(1, "error"), "1 error"},
		{Count(3, "directory"), "3 directories"},
		{Count(2, "key"), "2 keys"},
		{Count(2, "batch"), "2 batches"},
		{Count(uint64(1<<63), "block"), "9223372036854775808 blocks"},
		{Count(-1, "byte"), "-1 bytes"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
