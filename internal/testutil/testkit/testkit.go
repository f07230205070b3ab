// Package testkit holds what several packages' tests make alike: a plain
// write policy, deterministic random bytes, files written in a temporary
// tree.
package testkit

import (
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ddtsim/ddtsim/internal/testutil/stress"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
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

// WorkedZdbS is the worked example of zfs-semantics §2.3, as real zdb -S
// prints it.
const WorkedZdbS = `Simulated DDT histogram:

bucket              allocated                       referenced          
______   ______________________________   ______________________________
refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE
------   ------   -----   -----   -----   ------   -----   -----   -----
     1        1      5K      5K      8K        1      5K      5K      8K
     2        3    384K    384K    384K        6    768K    768K    768K
     8        1    128K    128K    128K        8      1M      1M      1M
 Total        5    517K    517K    520K       15   1.75M   1.75M   1.76M

dedup = 3.46, compress = 1.00, copies = 1.00, dedup * compress / copies = 3.46

`

// WorkedHistogram is the histogram WorkedZdbS prints.
func WorkedHistogram() *ddt.Histogram {
	h := &ddt.Histogram{}
	h.Add(1, 5120, 5120, 8192)
	for range 3 {
		h.Add(2, 131072, 131072, 131072)
	}
	h.Add(8, 131072, 131072, 131072)
	return h
}

// Stress skips the test unless DDTSIM_STRESS=1 (package stress): a stress
// test (a million files, a terabyte of holes, fifty kills) that takes
// tens of seconds and is not run by a plain go test ./....
func Stress(t testing.TB) {
	t.Helper()
	stress.Require(t)
}

// NotExistText is the system's text for opening a file that does not
// exist: "no such file or directory" on Unix, "The system cannot find the
// file specified." on Windows ("File not found." under Wine), for tests
// that want an error to say so.
func NotExistText(t testing.TB) string {
	t.Helper()
	_, err := os.Open(filepath.Join(t.TempDir(), "none"))
	var pe *os.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("opening a missing file: %v", err)
	}
	return pe.Err.Error()
}

// SelfArgs is the command line that runs this test binary with args:
// through the emulator DDTSIM_TEST_EXEC names when it is set (.ci/run runs
// the linux/arm64 tests under qemu-aarch64-static, whose children the
// kernel cannot start by themselves where no binfmt_misc handler is
// registered: "exec format error").
func SelfArgs(args ...string) (string, []string) {
	if emu := os.Getenv("DDTSIM_TEST_EXEC"); emu != "" {
		return emu, append([]string{os.Args[0]}, args...)
	}
	return os.Args[0], args
}

// SelfCommand is exec.Command of SelfArgs.
func SelfCommand(args ...string) *exec.Cmd {
	prog, a := SelfArgs(args...)
	return exec.Command(prog, a...)
}

// NeedSparse skips the test unless the file at path looks sparse, as the
// walk judges it (allocated 512-byte blocks × 512 < size): a test that
// made holes in it needs the file system to show them. Seen not to, once,
// under qemu-user in .ci/run's linux/arm64 run.
func NeedSparse(t testing.TB, path string) {
	t.Helper()
	if st := Stat(t, path, true); st.Blocks*512 >= st.Size {
		t.Skipf("%s does not look sparse here (%d blocks for %d bytes): the file system does not show its holes", path, st.Blocks, st.Size)
	}
}

// NoParentText is the system's text for creating a file in a directory
// that does not exist: "no such file or directory" on Unix, "The system
// cannot find the path specified." on Windows ("Path not found." under
// Wine).
func NoParentText(t testing.TB) string {
	t.Helper()
	return createErrText(t, filepath.Join(t.TempDir(), "none", "f"))
}

// NotDirText is the system's text for creating a file below a regular
// file, as if it were a directory: "not a directory" on Unix; on Windows
// the same as NoParentText's.
func NotDirText(t testing.TB) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return createErrText(t, filepath.Join(file, "f"))
}

// createErrText is the text of the *PathError os.Create gives for path,
// which must fail.
func createErrText(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Create(path)
	var pe *os.PathError
	if !errors.As(err, &pe) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("creating %s: %v, want a *PathError", path, err)
	}
	return pe.Err.Error()
}
