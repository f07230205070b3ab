package report

import (
	"testing"

	"github.com/ddtsim/ddtsim/analyzer"
)

// A block device read is not a regular file, and what -x left out is in
// the text summary (both found by a new user).
func TestFilesAndSkippedText(t *testing.T) {
	t.Parallel()
	c := analyzer.Counters{Files: 3, Devices: 1, Symlinks: 2, OtherFS: 2, Errors: 1}
	if got := filesText(c); got != "2 regular files and 1 block device" {
		t.Errorf("filesText = %q", got)
	}
	if got := skippedText(c); got != "2 symlinks, 0 special files, 0 extra hard links, 0 repeated paths, 2 directories on other file systems (-x); 1 error" {
		t.Errorf("skippedText = %q", got)
	}
	c = analyzer.Counters{Files: 11}
	if got, want := filesText(c)+"; "+skippedText(c), "11 regular files; 0 symlinks, 0 special files, 0 extra hard links, 0 repeated paths; 0 errors"; got != want {
		t.Errorf("plain scan: %q, want %q", got, want)
	}
}
