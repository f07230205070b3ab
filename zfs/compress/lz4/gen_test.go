package lz4

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestGenerated checks that search.go is what gen.go writes from
// search.tmpl now (go run gen.go -out -, compared in memory): after a
// change to either, run go generate ./zfs/compress/lz4 and commit the
// three.
func TestGenerated(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run gen.go:", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(gobin, "run", "gen.go", "-out", "-")
	// The generator runs on the machine that runs go, whatever target
	// this test was built for (GOARCH=arm64 under qemu, GOOS=windows).
	cmd.Env = append(os.Environ(), "GOOS=", "GOARCH=", "GOFLAGS=")
	cmd.Stderr = &stderr
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run gen.go: %v\n%s", err, stderr.Bytes())
	}
	got, err := os.ReadFile("search.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("search.go is not the generator's output: run go generate ./zfs/compress/lz4")
	}
}
