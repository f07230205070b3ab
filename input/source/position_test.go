package source

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The walk yields files in Position order: every pair of consecutive files
// compares −1, on a tree whose names make bytewise order of whole paths
// differ from the walk's ("a.txt" sorts before "a/x" as a string).
func TestPositionIsWalkOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	names := []string{"a/x", "a/y/z", "a.txt", "a-b", "a0", "b", "a/y.z", "a/y/a", "a/ä"}
	if runtime.GOOS != "windows" { // there "A" is "a", and a name is Unicode
		names = append(names, "A", "a/\xff")
	}
	for _, p := range names {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	single := filepath.Join(dir, "a0")
	w := &Walker{Paths: []string{dir, single}}
	var got []Position
	w.Walk(context.Background(), func(f *File) {
		got = append(got, Position{Arg: f.Arg, Path: f.Path})
		f.Close()
	}, nil)
	if len(got) != len(names) { // the second path named is a repeat
		t.Fatalf("walked %d files, want %d: %v", len(got), len(names), got)
	}
	for i := 1; i < len(got); i++ {
		if c := got[i-1].Compare(got[i]); c != -1 {
			t.Errorf("%v compared to the next, %v: %d, want -1", got[i-1], got[i], c)
		}
		if c := got[i].Compare(got[i-1]); c != 1 {
			t.Errorf("%v compared to the previous, %v: %d, want 1", got[i], got[i-1], c)
		}
	}
	if c := got[3].Compare(got[3]); c != 0 {
		t.Errorf("a position compared to itself: %d", c)
	}
	if c := (Position{Arg: 1, Path: "a"}).Compare(Position{Arg: 0, Path: "z"}); c != 1 {
		t.Errorf("a later path named compares %d, want 1", c)
	}
	if c := comparePaths("d/a", "d/a/x"); c != -1 {
		t.Errorf("a directory compared with a path below it: %d, want -1", c)
	}
}
