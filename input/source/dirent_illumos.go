package source

import "github.com/ddtsim/ddtsim/input/source/internal/sys"

// direntTypeOf: illumos's struct dirent has no d_type; every entry is
// DT_UNKNOWN, and the walk lstats it (walk.typeOf).
func direntTypeOf(b []byte) uint8 { return sys.DT_UNKNOWN }
