package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the child cmd killed (SIGKILL) when the test process
// ends, so that a test that fails early leaves no child waiting for ever.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
