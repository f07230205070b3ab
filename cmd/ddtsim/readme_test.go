package main

import (
	"os"
	"strings"
	"testing"
)

// readmeAfter returns the README's text after the first mark.
func readmeAfter(t *testing.T, mark string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), mark)
	if !ok {
		t.Fatalf("README has no %q", mark)
	}
	return after
}

// TestReadmeExample keeps the README's example output true: it reruns the
// command the README shows on the bundled sample and compares.
func TestReadmeExample(t *testing.T) {
	t.Parallel()
	after := readmeAfter(t, "### Example")
	parts := strings.SplitN(after, "```\n", 3)
	if len(parts) < 3 {
		t.Fatal("README Example section has no code block")
	}
	want := parts[1]
	code, got, errs := runT("../../testdata/sample")
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

// TestReadmeSweep keeps the README's sweep table true: it reruns the
// command the README shows (after "$ ddtsim ") and compares.
func TestReadmeSweep(t *testing.T) {
	t.Parallel()
	after := readmeAfter(t, "\n$ ddtsim sweep ")
	cmdLine, rest, _ := strings.Cut(after, "\n")
	want, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("README sweep example has no end")
	}
	args := append([]string{"sweep"}, strings.Fields(cmdLine)...)
	for i, a := range args {
		if a == "testdata/sample" {
			args[i] = "../../testdata/sample"
		}
	}
	code, got, errs := runT(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got != want {
		t.Errorf("README sweep example is stale; ddtsim %s now prints:\n%s", strings.Join(args, " "), got)
	}
}
