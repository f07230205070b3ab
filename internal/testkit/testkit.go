// Package testkit holds what several packages' tests make alike: a plain
// write policy, deterministic random bytes, files written in a temporary
// tree.
package testkit

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/zio"
)

// Policy is the write policy of OpenZFS 2.3.2 on one disk of ashift 12,
// recordsize 128K, one copy, with compression comp.
func Policy(t testing.TB, comp zio.Compression) *zio.Policy {
	t.Helper()
	rel, err := zio.LookupRelease("2.3.2")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zio.NewDisk(12)
	return &zio.Policy{Release: rel, RecordSize: 128 << 10, Compression: comp, Copies: 1, Vdev: d}
}

// Rand returns n random bytes, the same for the same seed.
func Rand(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// Write writes data to path, creating its directories; it ends the test
// on an error.
func Write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
