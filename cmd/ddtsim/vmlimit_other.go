//go:build !linux

package main

// fitVMLimit is a no-op here: see vmlimit_linux.go.
func fitVMLimit() int64 { return 0 }
