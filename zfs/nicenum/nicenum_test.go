package nicenum

import "testing"

// Values from zfs-semantics §2.2 (count / bytes 0.7.0+).
func TestNicenum(t *testing.T) {
	t.Parallel()
	cases := []struct {
		num          uint64
		count, bytes string
	}{
		{0, "0", "0B"},
		{512, "512", "512B"},
		{1000, "1000", "1000B"},
		{1023, "1023", "1023B"},
		{1024, "1K", "1K"},
		{1025, "1.00K", "1.00K"},
		{1152, "1.12K", "1.12K"},
		{1536, "1.50K", "1.50K"},
		{4608, "4.50K", "4.50K"},
		{10239, "10.0K", "10.0K"},
		{10240, "10K", "10K"},
		{83046, "81.1K", "81.1K"},
		{104857, "102K", "102K"},
		{130944, "128K", "128K"},
		{1047552, "1023K", "1023K"},
		{1048575, "1024K", "1024K"},
		{1048576, "1M", "1M"},
		{10844792422, "10.1G", "10.1G"},
		{1<<64 - 1, "16.0E", "16.0E"},
		{5 << 10, "5K", "5K"},
		{1835008, "1.75M", "1.75M"},
	}
	for _, c := range cases {
		if got := Format(c.num, false); got != c.count {
			t.Errorf("Format(%d, count) = %q, want %q", c.num, got, c.count)
		}
		if got := Format(c.num, true); got != c.bytes {
			t.Errorf("Format(%d, bytes) = %q, want %q", c.num, got, c.bytes)
		}
	}
}

func TestBucketLabels(t *testing.T) {
	t.Parallel()
	want := []string{"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1K", "2K", "4K"}
	for i, w := range want {
		if got := Format(1<<i, false); got != w {
			t.Errorf("label of bucket %d = %q, want %q", i, got, w)
		}
	}
	if got := Format(1<<20, false); got != "1M" {
		t.Errorf("label of bucket 20 = %q, want 1M", got)
	}
}

func TestIEC(t *testing.T) {
	for num, want := range map[uint64]string{
		0: "0 B", 512: "512 B", 1023: "1023 B", 1024: "1 KiB", 131072: "128 KiB",
		2256896: "2.15 MiB", 28940697: "27.6 MiB", 50 << 30: "50 GiB", 1 << 60: "1 EiB",
		// Just under a unit, where Format says 1024 of the one below
		// (1024M): the next unit, not "1024 MiB" beside "1 GiB".
		1<<30 - 16<<10: "1.00 GiB", 1<<20 - 100: "1.00 MiB", 1023<<20 + 600<<10: "1.00 GiB", 1023 << 20: "1023 MiB",
	} {
		if got := IEC(num); got != want {
			t.Errorf("IEC(%d) = %q, want %q", num, got, want)
		}
	}
}
