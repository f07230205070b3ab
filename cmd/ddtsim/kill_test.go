package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ddtsim/ddtsim/internal/testutil/golden"
	"github.com/ddtsim/ddtsim/internal/testutil/testkit"
	"github.com/ddtsim/ddtsim/saved"
)

// killRounds is how many SIGKILLs TestKillLoop sends: 50, or
// DDTSIM_KILLS (scripts/bench-kill.sh sends more).
func killRounds(t *testing.T) int {
	if v := os.Getenv("DDTSIM_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("DDTSIM_KILLS=%q: want a number of kills", v)
		}
		return n
	}
	return 50
}

// ddtsimProc runs this test binary as ddtsim (TestMain) with args.
func ddtsimProc(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := selfCommand(args...)
	cmd.Env = append(os.Environ(), "DDTSIM_TEST_RUN_MAIN=1")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	return cmd, &out, &errs
}

// A real ddtsim saving a scan of the golden inputs with a checkpoint every
// 10 ms is killed with SIGKILL once it has written a few checkpoints (one
// to three that each saved more than the run started from, then up to 10
// ms more, to land anywhere, a checkpoint being written included),
// resumed, killed again, until a run ends; the zdb -S text it then prints
// is real ZFS's (the golden case's) and the uninterrupted scan's, byte for
// byte. Repeated until 50 kills were sent (DDTSIM_KILLS more). What a kill
// leaves beside the saved scan (a directory being written) is removed by
// the next run. Each kill follows saved progress, never a guessed time: a
// loaded machine slows the runs, not the episodes' end. A stress test
// (DDTSIM_STRESS=1).
func TestKillLoop(t *testing.T) {
	testkit.Stress(t)
	if testing.Short() {
		t.Skip("scans the golden inputs about a hundred times")
	}
	inputs, err := golden.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	// Two cases: LZ4 (blocks compressed, zeros as holes) and compression
	// off copied sparse (holes of the source accounted without reading).
	type kase struct {
		args []string
		want string
		name string
	}
	var cases []kase
	for _, name := range []string{"lz4-128k-a12", "off-128k-a12-always"} {
		c, err := golden.FindCase(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.ZdbS()
		if err != nil {
			t.Fatal(err)
		}
		args, why := caseArgs(c)
		if why != "" {
			t.Fatal(why)
		}
		args = append(args[1:], "--zdb", "-j", "2")
		cmd, out, errs := ddtsimProc(append(append([]string{}, args...), inputs...)...)
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s uninterrupted: %v: %s", name, err, errs)
		}
		if out.String() != want {
			t.Fatalf("%s: the uninterrupted scan differs from zdb -S:\n%s\nwant:\n%s", name, out, want)
		}
		cases = append(cases, kase{name: name, args: args, want: want})
	}

	rounds := killRounds(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	dir := t.TempDir()
	kills, episodes, resumed, midway, seen := 0, 0, 0, 0, 0
	for kills < rounds {
		episodes++
		kc := cases[episodes%len(cases)]
		args, want := kc.args, kc.want
		save := filepath.Join(dir, "scan-"+strconv.Itoa(episodes))
		for run := 0; ; run++ {
			// Every kill follows a checkpoint that saved more: a scan
			// of 55 MB ends within a few hundred.
			if run > 400 {
				t.Fatalf("episode %d: no end after %d runs", episodes, run)
			}
			var cmd *exec.Cmd
			var out, errs *bytes.Buffer
			from := ""
			if h, err := saved.ReadHeader(save); err == nil {
				cmd, out, errs = ddtsimProc("resume", "--zdb", "-j", "2", "--checkpoint", "10ms", save)
				resumed++
				if !h.Complete && h.Position != nil {
					midway++ // a checkpoint some way into the walk
				}
				from = progressOf(h)
			} else {
				cmd, out, errs = ddtsimProc(append(append(append([]string{}, args...), "--save", save, "--checkpoint", "10ms"), inputs...)...)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			n, err := awaitCheckpoints(save, from, 1+rng.IntN(3), done)
			seen += n
			if err == errCheckpointsSeen {
				time.Sleep(time.Duration(rng.Int64N(int64(10 * time.Millisecond))))
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
				kills++
				continue
			}
			if err != nil {
				t.Fatalf("episode %d run %d: %v: %s", episodes, run, err, errs)
			}
			if out.String() != want {
				t.Fatalf("episode %d (%s), after %d kills: the result differs from the uninterrupted scan's:\n%s\nwant:\n%s", episodes, kc.name, run, out, want)
			}
			break
		}
		// Nothing of the killed runs is left beside the scan.
		names, _ := os.ReadDir(dir)
		for _, n := range names {
			if strings.HasSuffix(n.Name(), ".tmp") || strings.HasSuffix(n.Name(), ".old") {
				t.Errorf("episode %d: %s left beside the saved scan", episodes, n.Name())
			}
		}
	}
	t.Logf("%d kills over %d episodes (%d resumes, %d of a checkpoint past the walk's start), after %d checkpoints seen",
		kills, episodes, resumed, midway, seen)
	if midway == 0 {
		t.Errorf("no run resumed a checkpoint with progress: the kills came too early to test resuming")
	}
}

// errCheckpointsSeen is awaitCheckpoints' answer when the checkpoints it
// waited for were written.
var errCheckpointsSeen = errors.New("checkpoints seen")

// awaitCheckpoints watches the saved scan at save (polled every
// millisecond) until n checkpoints of an interrupted scan were written
// whose progress (progressOf) differs from from and from each other's,
// then returns how many it saw and errCheckpointsSeen; or until the
// process ends (done: its Wait's error, returned). A checkpoint replaced
// between two polls is missed, never counted: when this returns, at
// least n were written, the last of them with more progress than from.
func awaitCheckpoints(save, from string, n int, done <-chan error) (int, error) {
	seen, last := 0, from
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return seen, err
		case <-tick.C:
		}
		h, err := saved.ReadHeader(save)
		if err != nil || h.Complete {
			continue // not written yet, being replaced, or the end
		}
		if p := progressOf(h); p != last {
			seen, last = seen+1, p
			if seen >= n {
				return seen, errCheckpointsSeen
			}
		}
	}
}

// progressOf is what a saved scan's header says is done: the walk's
// position and the files done out of order, as one string.
func progressOf(h *saved.Header) string {
	b, err := json.Marshal(struct {
		P *saved.Position
		F []saved.File
	}{h.Position, h.Files})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// A checkpoint damaged after it was written (one of its files cut short at
// a random byte: a disk that lost the end of a file, a copy stopped half
// way) is refused by resume with a message naming the file, and left as
// it is; the scan is not continued from a table it cannot trust.
func TestResumeRefusesCutCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("scans the golden inputs")
	}
	inputs, err := golden.Inputs()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "scan")
	// A checkpoint part way: the scan killed once one is written.
	cmd, _, errs := ddtsimProc(append([]string{"--zdb", "-o", "compression=gzip-9", "-j", "1", "--checkpoint", "20ms", "--save", base}, inputs...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if h, err := saved.ReadHeader(base); err == nil && h.Position != nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint within a minute: %s", errs)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	h, err := saved.ReadHeader(base)
	if err != nil || h.Complete {
		t.Fatalf("checkpoint: %v, complete %v", err, h != nil && h.Complete)
	}
	names := []string{saved.ManifestName}
	for p := range saved.Partitions {
		names = append(names, saved.PartName(p))
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 16))
	for i := range 12 {
		dir := filepath.Join(t.TempDir(), "cut")
		if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		name := names[rng.IntN(len(names))]
		if i == 0 {
			name = saved.ManifestName
		}
		file := filepath.Join(dir, name)
		st, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		cut := rng.Int64N(st.Size())
		if err := os.Truncate(file, cut); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runT("resume", "--zdb", dir)
		if code != exitFailed || out != "" || !strings.Contains(stderr, name) {
			t.Errorf("%s cut at byte %d of %d: exit %d, stdout %q, stderr %q; want exit %d and a message naming it",
				name, cut, st.Size(), code, out, stderr, exitFailed)
		}
		if st2, err := os.Stat(file); err != nil || st2.Size() != cut {
			t.Errorf("%s cut at byte %d: changed by resume (%v)", name, cut, err)
		}
		if i < 2 {
			t.Logf("%s cut at byte %d of %d: %s", name, cut, st.Size(), strings.TrimSpace(stderr))
		}
	}
}
