package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddtsim/ddtsim/zfs/compress/zstd"
)

// repoRoot is the repository's root, relative to this package.
const repoRoot = "../.."

// readmeMaxLines is the most lines README.md may have: a few screens, the
// rest in docs/.
const readmeMaxLines = 250

// docAfter returns the text of the file at path (relative to the
// repository's root) after the first mark.
func docAfter(t *testing.T, path, mark string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(text), mark)
	if !ok {
		t.Fatalf("%s has no %q", path, mark)
	}
	return after
}

// shownRun reads the command shown in a code block of path after mark (the
// rest of the line after mark, split into arguments) and the output shown
// under it, up to the end of the block. Paths under testdata/ are made
// relative to this package.
func shownRun(t *testing.T, path, mark string) (args []string, want string) {
	t.Helper()
	cmdLine, rest, _ := strings.Cut(docAfter(t, path, mark), "\n")
	want, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("%s: the example after %q has no end", path, mark)
	}
	args = strings.Fields(cmdLine)
	for i, a := range args {
		if strings.HasPrefix(a, "testdata/") {
			args[i] = filepath.Join(repoRoot, a)
		}
	}
	return args, want
}

// TestReadmeExample keeps the README's example output true: it reruns the
// command the README shows on the bundled sample and compares.
func TestReadmeExample(t *testing.T) {
	t.Parallel()
	args, want := shownRun(t, "README.md", "\n$ go run ./cmd/ddtsim ")
	if len(args) != 1 || !strings.HasSuffix(filepath.ToSlash(args[0]), "testdata/sample") {
		t.Fatalf("README example runs %q, not the bundled sample", args)
	}
	code, got, errs := runT(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The memory line differs from run to run (peak RSS): it is left out
	// of the comparison, whether the README shows it or not.
	if withoutMemory(got) != withoutMemory(want) {
		t.Errorf("README example is stale; ddtsim testdata/sample now prints:\n%s", got)
	}
}

// withoutMemory drops the summary's "memory" line.
func withoutMemory(s string) string {
	lines := strings.SplitAfter(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, "  memory ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestReadmeLength keeps README.md to a few screens.
func TestReadmeLength(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to docs/", n, readmeMaxLines)
	}
}

// TestDocsSweep keeps docs/sweep.md's table true: it reruns the command it
// shows (after "$ ddtsim ") and compares.
func TestDocsSweep(t *testing.T) {
	if !zstd.Exact {
		t.Skip("the example's zstd rows are exact figures; this build approximates zstd (no cgo)")
	}
	t.Parallel()
	args, want := shownRun(t, "docs/sweep.md", "\n$ ddtsim sweep ")
	args = append([]string{"sweep"}, args...)
	code, got, errs := runT(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got != want {
		t.Errorf("docs/sweep.md example is stale; ddtsim %s now prints:\n%s", strings.Join(args, " "), got)
	}
}
