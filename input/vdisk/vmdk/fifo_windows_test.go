package vmdk

import "errors"

// mkfifo: Windows has no FIFOs (the test of a FIFO extent is left out).
func mkfifo(path string) error { return errors.New("windows: no FIFOs") }
