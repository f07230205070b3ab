//go:build !(linux || freebsd || darwin || netbsd || openbsd || dragonfly)

package sys

// The file types of a directory entry, as <dirent.h>'s DT_ constants on
// Linux and the BSDs (IFTODT of the S_IF type bits); illumos's dirent has
// no d_type and Windows none at all, but the walk keeps a listing's
// types in these terms.
const (
	DT_UNKNOWN = 0
	DT_FIFO    = 1
	DT_CHR     = 2
	DT_DIR     = 4
	DT_BLK     = 6
	DT_REG     = 8
	DT_LNK     = 10
	DT_SOCK    = 12
)
