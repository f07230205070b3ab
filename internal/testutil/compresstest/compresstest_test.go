package compresstest

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// digest is the start of b's SHA-256, in hex.
func digest(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b))[:16] }

// TestGeneratorsPinned pins what the generators draw: the compressors' tests
// and benchmark figures (c, bytes/s) stay comparable only while the inputs
// are the same bytes. The digests are those of the generators the tests had
// before they moved here.
func TestGeneratorsPinned(t *testing.T) {
	t.Parallel()
	type pin struct {
		name   string
		n      int
		digest string
	}
	for _, tc := range []struct {
		gens []Generator
		pins []pin
	}{
		{Generators, []pin{
			{"random", 1, "3cbdaf66b3dd2b17"}, {"random", 1000, "549fc5554fb5551e"}, {"random", 131072, "c53a6c7871473e71"},
			{"text", 1, "252f10c83610ebca"}, {"text", 1000, "671d3fb535c7ccf2"}, {"text", 131072, "a30fa1b33e4e349c"},
			{"repetitive", 1, "8d33f520a3c4cef8"}, {"repetitive", 1000, "73b7df5938bcb1c4"}, {"repetitive", 131072, "dd1650571dd0777b"},
			{"zero", 1, "6e340b9cffb37a98"}, {"zero", 1000, "541b3e9daa09b20b"}, {"zero", 131072, "fa43239bcee7b97c"},
			{"lowentropy", 1, "6e340b9cffb37a98"}, {"lowentropy", 1000, "0ae68f210df502da"}, {"lowentropy", 131072, "1dc78151ae35a622"},
			{"mixed", 1, "6e340b9cffb37a98"}, {"mixed", 1000, "ab9fdf388c02e4c9"}, {"mixed", 131072, "8231a94f0e876b71"},
		}},
		{LevelGenerators, []pin{
			{"text", 1, "01ba4719c80b6fe9"}, {"text", 1000, "ea75a5454768d138"}, {"text", 131072, "1b5137c69cedc42b"},
			{"binary", 1, "6e340b9cffb37a98"}, {"binary", 1000, "dbeb8db54b16640b"}, {"binary", 131072, "86f1683316f82d21"},
			{"random", 1, "c4694f2e93d5c4e7"}, {"random", 1000, "d30c166eb71d1ee0"}, {"random", 131072, "c86f46075380a5d3"},
			{"zero", 1, "6e340b9cffb37a98"}, {"zero", 1000, "541b3e9daa09b20b"}, {"zero", 131072, "fa43239bcee7b97c"},
		}},
	} {
		r := rand.New(rand.NewPCG(1, 2))
		i := 0
		for _, g := range tc.gens {
			for _, n := range []int{1, 1000, 131072} {
				p := tc.pins[i]
				i++
				if got := digest(g.Gen(r, n)); g.Name != p.name || got != p.digest {
					t.Errorf("%s(%d) = %s, want %s(%d) = %s", g.Name, n, got, p.name, p.n, p.digest)
				}
			}
		}
	}
}

func TestAppendixAPinned(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"TV1": "d999b1249ef173aa", "TV2": "59f410ae5e179624", "TV3": "311971d921f30a78", "TV4": "6d794e0f0dc336ef",
		"TV5": "347c92c776547513", "TV6": "9f02776b72a44496", "TV7": "271ac4e2c03bdaee", "TV8": "38b6b56fad2a5e97",
	} {
		if got := digest(AppendixAInput(name)); got != want {
			t.Errorf("%s: digest %s, want %s", name, got, want)
		}
	}
	if AppendixAInput("TV9") != nil {
		t.Error("TV9 exists")
	}
}

// TestBenchInputsPinned pins the benchmark inputs but the gofmt record,
// which depends on the Go installation.
func TestBenchInputsPinned(t *testing.T) {
	t.Parallel()
	want := []struct{ name, digest string }{
		{"text", "b89181849a67b17c"}, {"random", "f9335d6d2ef6b77b"}, {"zero", "fa43239bcee7b97c"},
		{"extra", "fda21975e091c0d5"}, {"binary", ""},
	}
	inputs := BenchInputs(func(r *rand.Rand) []BenchInput { return []BenchInput{{"extra", Random(r, 1000)}} })
	if len(inputs) != len(want) {
		t.Fatalf("%d inputs, want %d", len(inputs), len(want))
	}
	for i, in := range inputs {
		if in.Name != want[i].name {
			t.Errorf("input %d: %s, want %s", i, in.Name, want[i].name)
		}
		if want[i].digest != "" && digest(in.Data) != want[i].digest {
			t.Errorf("%s: digest %s, want %s", in.Name, digest(in.Data), want[i].digest)
		}
	}
	if bin := inputs[len(inputs)-1].Data; bin != nil && len(bin) != RecordSize {
		t.Errorf("binary: %d bytes", len(bin))
	}
}

// TestRules checks the capacity and PSIZE of docs/zfs-semantics.md §4.3 on
// a few blocks.
func TestRules(t *testing.T) {
	t.Parallel()
	v21, v23 := Rules{}, Rules{V23: true}
	for _, tc := range []struct {
		r        Rules
		l, d     int
		c        int
		failed   bool
		psize    int
		embedded bool
	}{
		{v21, 131072, 114688, 50000, false, 53248, false},
		{v23, 131072, 114688, 114688, false, 114688, false},
		{v21, 131072, 114688, 114689, false, 131072, false},
		{v21, 4096, 3584, 3000, false, 4096, false}, // rounds up to L: stored as is
		{v23, 4096, 112, 113, false, 4096, false},
		{v23, 4096, 112, 112, false, 112, true},
		{v21, 8192, 7168, 0, true, 8192, false},
		{v23, 10000, 8192, 5000, false, 8192, false},
	} {
		if d := tc.r.Capacity(tc.l); d != tc.d {
			t.Errorf("%+v: Capacity(%d) = %d, want %d", tc.r, tc.l, d, tc.d)
		}
		if p, e := tc.r.PSize(tc.l, tc.c, tc.failed); p != tc.psize || e != tc.embedded {
			t.Errorf("%+v: PSize(%d, %d, %v) = %d, %v; want %d, %v", tc.r, tc.l, tc.c, tc.failed, p, e, tc.psize, tc.embedded)
		}
	}
}
