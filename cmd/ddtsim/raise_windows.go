package main

import "syscall"

// raise: Windows has no signals to send oneself (Ctrl-C and Ctrl-Break
// arrive as os.Interrupt, a closed console as SIGTERM); endBySignal then
// exits with 128 + the signal's number.
func raise(sig syscall.Signal) {}
