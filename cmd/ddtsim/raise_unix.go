//go:build unix

package main

import (
	"os"
	"syscall"
)

// raise sends sig to the process itself, for its default action.
func raise(sig syscall.Signal) { syscall.Kill(os.Getpid(), sig) }
