//go:build !linux

package source

import "github.com/ddtsim/ddtsim/input/source/internal/sys"

// oNoatime is O_NOATIME, a Linux flag: 0 here, where reading a file may
// update its access time as any reader's does (FreeBSD, illumos and macOS
// update it only on file systems mounted with atime; Windows as NTFS is
// set to).
const oNoatime = 0

// dirStat is the identity of the directory open as fd (fstat); whether it
// is the root of a mount is not asked here (false): the walk tells a mount
// by its device differing from its parent's.
func dirStat(fd int) (id devIno, mountRoot bool, err error) {
	var st sys.Stat_t
	if err := sys.Fstat(fd, &st); err != nil {
		return devIno{}, false, err
	}
	return devIno{uint64(st.Dev), st.Ino}, false, nil
}
