package main

import (
	"runtime"
	"testing"
)

// unixOnly skips the test on Windows, saying why: its premise is Unix's
// (a signal sent to a child, a closed file descriptor, a symbolic link
// followed, a name Windows refuses).
func unixOnly(t *testing.T, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("windows: " + why)
	}
}

// noSymlinks is unixOnly's reason for the tests that make symbolic links.
const noSymlinks = "symbolic links need a privilege there, and Wine 8's cannot be followed"
