package main

// stdoutIsRuntimeNull: the Go runtime opens nothing in place of a closed
// stdout on Windows (writes to it fail, and say so).
func stdoutIsRuntimeNull() bool { return false }
