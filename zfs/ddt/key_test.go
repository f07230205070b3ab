package ddt

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	zblake3 "github.com/zeebo/blake3"
)

// The zero block's cached key is the digest of the zero bytes, per LSIZE.
func TestZeroKeys(t *testing.T) {
	t.Parallel()
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

// blake3Vectors are the hash cases of the BLAKE3 reference test vectors
// (test_vectors/test_vectors.json of BLAKE3-team/BLAKE3, version 1.8.6):
// input length and the first 32 bytes of the output, hex. The input is the
// bytes 0, 1, ..., 250 repeated.
var blake3Vectors = []struct {
	n   int
	hex string
}{
	{0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
	{1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
	{2, "7b7015bb92cf0b318037702a6cdd81dee41224f734684c2c122cd6359cb1ee63"},
	{3, "e1be4d7a8ab5560aa4199eea339849ba8e293d55ca0a81006726d184519e647f"},
	{4, "f30f5ab28fe047904037f77b6da4fea1e27241c5d132638d8bedce9d40494f32"},
	{5, "b40b44dfd97e7a84a996a91af8b85188c66c126940ba7aad2e7ae6b385402aa2"},
	{6, "06c4e8ffb6872fad96f9aaca5eee1553eb62aed0ad7198cef42e87f6a616c844"},
	{7, "3f8770f387faad08faa9d8414e9f449ac68e6ff0417f673f602a646a891419fe"},
	{8, "2351207d04fc16ade43ccab08600939c7c1fa70a5c0aaca76063d04c3228eaeb"},
	{63, "e9bc37a594daad83be9470df7f7b3798297c3d834ce80ba85d6e207627b7db7b"},
	{64, "4eed7141ea4a5cd4b788606bd23f46e212af9cacebacdc7d1f4c6dc7f2511b98"},
	{65, "de1e5fa0be70df6d2be8fffd0e99ceaa8eb6e8c93a63f2d8d1c30ecb6b263dee"},
	{127, "d81293fda863f008c09e92fc382a81f5a0b4a1251cba1634016a0f86a6bd640d"},
	{128, "f17e570564b26578c33bb7f44643f539624b05df1a76c81f30acd548c44b45ef"},
	{129, "683aaae9f3c5ba37eaaf072aed0f9e30bac0865137bae68b1fde4ca2aebdcb12"},
	{1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
	{1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
	{1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
	{2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"},
	{2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"},
	{3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"},
	{3073, "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3"},
	{4096, "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969"},
	{4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"},
	{5120, "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833"},
	{5121, "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff"},
	{6144, "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205"},
	{6145, "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f"},
	{7168, "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a"},
	{7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"},
	{8192, "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63"},
	{8193, "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"},
	{16384, "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4"},
	{31744, "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"},
	{102400, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"},
}

// KeyOf is standard BLAKE3-256: the reference test vectors.
func TestKeyOfVectors(t *testing.T) {
	t.Parallel()
	for _, v := range blake3Vectors {
		in := make([]byte, v.n)
		for i := range in {
			in[i] = byte(i % 251)
		}
		if k := KeyOf(in); hex.EncodeToString(k[:]) != v.hex {
			t.Errorf("KeyOf(%d bytes of the vector input) = %x, want %s", v.n, k, v.hex)
		}
	}
}

// KeyOf gives the digest another BLAKE3 implementation gives
// (github.com/zeebo/blake3, with its own AVX2, SSE4.1 and pure Go code) on
// random inputs of many lengths: around the 64-byte block, the 1 KiB chunk
// and the 16 KiB group KeyOf hashes at a time, on and off the power-of-two
// subtree sizes up to 16 MiB (the largest recordsize) and beyond, and at
// every record size a scan hashes.
func TestKeyOfMatchesZeebo(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	in := make([]byte, 16<<20+groupSize+1)
	for i := range in {
		in[i] = byte(r.Uint32())
	}
	lengths := []int{0, 1, 63, 64, 65, 1023, 1024, 1025, 2047, 2048, 2049, 3 << 10, 7<<10 + 1, 15 << 10, 100000, 16<<20 - 1, 16 << 20, 16<<20 + 1, 16<<20 + groupSize, 16<<20 + groupSize + 1}
	for g := 1; g <= 9; g++ {
		lengths = append(lengths, g*groupSize-1, g*groupSize, g*groupSize+1, g*groupSize+1024)
	}
	for n := 512; n <= 16<<20; n *= 2 {
		lengths = append(lengths, n)
	}
	for range 200 {
		lengths = append(lengths, r.IntN(300<<10))
	}
	for _, n := range lengths {
		// Inputs starting at varying offsets: unaligned too.
		off := r.IntN(len(in) - n + 1)
		b := in[off : off+n]
		if got, want := KeyOf(b), zblake3.Sum256(b); got != Key(want) {
			t.Errorf("KeyOf(%d random bytes at offset %d) = %x, github.com/zeebo/blake3 gives %x", n, off, got, want)
		}
	}
}

// GroupKey keeps the content's first 64 bits and puts the group in the
// next 64, big-endian, as the table reads its 128-bit prefix.
func TestGroupKey(t *testing.T) {
	k := KeyOf([]byte("ddtsim group key"))
	g := GroupKey(k, 0x0102030405060708)
	if [8]byte(g[:8]) != [8]byte(k[:8]) || [16]byte(g[16:]) != [16]byte(k[16:]) {
		t.Errorf("content bytes changed: %x from %x", g, k)
	}
	if got := [8]byte(g[8:16]); got != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Errorf("group bytes %x", got)
	}
}
