//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing where the platform cannot tie a child's life
// to its parent's (Linux's PR_SET_PDEATHSIG): the tests kill their
// children themselves.
func dieWithParent(cmd *exec.Cmd) {}
