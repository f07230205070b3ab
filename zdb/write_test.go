package zdb

import (
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/ddt"
)

// The worked example of zfs-semantics §2.3: one disk, ashift 12, recordsize
// 128K, compression off. A = 300 KiB random (3 blocks), B = copy of A,
// C = 5000 random bytes (one 5120-byte block, DSIZE 8192), D = 1 MiB zeros.
func TestWriteZdbSWorkedExample(t *testing.T) {
	t.Parallel()
	h := &ddt.Histogram{}
	h.Add(1, 5120, 5120, 8192) // C
	for i := 0; i < 3; i++ {   // A and B
		h.Add(2, 131072, 131072, 131072)
	}
	h.Add(8, 131072, 131072, 131072) // D
	want := "Simulated DDT histogram:\n" +
		"\n" +
		"bucket              allocated                       referenced          \n" +
		"______   ______________________________   ______________________________\n" +
		"refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n" +
		"------   ------   -----   -----   -----   ------   -----   -----   -----\n" +
		"     1        1      5K      5K      8K        1      5K      5K      8K\n" +
		"     2        3    384K    384K    384K        6    768K    768K    768K\n" +
		"     8        1    128K    128K    128K        8      1M      1M      1M\n" +
		" Total        5    517K    517K    520K       15   1.75M   1.75M   1.76M\n" +
		"\n" +
		"dedup = 3.46, compress = 1.00, copies = 1.00, dedup * compress / copies = 3.46\n" +
		"\n"
	var b strings.Builder
	if err := WriteSimulated(&b, h, true); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, line := range strings.Split(b.String(), "\n")[2:10] {
		if len(line) != 72 {
			t.Errorf("line %q has %d characters, want 72", line, len(line))
		}
	}
}

// zfs-semantics §1.7: no block at all gives the header and one empty line,
// no rows, no Total, no ratio line.
func TestWriteZdbSEmpty(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := WriteSimulated(&b, &ddt.Histogram{}, true); err != nil {
		t.Fatal(err)
	}
	want := "Simulated DDT histogram:\n\n" +
		"bucket              allocated                       referenced          \n" +
		"______   ______________________________   ______________________________\n" +
		"refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n" +
		"------   ------   -----   -----   -----   ------   -----   -----   -----\n" +
		"\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}

// zfs-semantics §2.3: the 0.7.0+ byte formatter versus 0.6.x plain numbers
// on a bucket-2 row (one key, LSIZE 1024, PSIZE 512, referenced 3 times).
func TestByteSuffixRow(t *testing.T) {
	t.Parallel()
	h := &ddt.Histogram{}
	h.Add(3, 1024, 512, 512)
	for _, c := range []struct {
		suffix bool
		row    string
	}{
		{true, "     2        1      1K    512B    512B        3      3K   1.50K   1.50K\n"},
		{false, "     2        1      1K     512     512        3      3K   1.50K   1.50K\n"},
	} {
		var b strings.Builder
		if err := WriteHistogram(&b, h, c.suffix); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.row) {
			t.Errorf("bytesSuffix=%v: no row %q in\n%s", c.suffix, c.row, b.String())
		}
	}
}
