package source

import "golang.org/x/sys/unix"

// oNoatime is O_NOATIME: reading a file opened with it leaves its access
// time alone (Linux only; 0 where the platform has no such flag).
const oNoatime = unix.O_NOATIME

// dirStat is the identity of the directory open as fd and whether it is
// the root of a mount (statx's STATX_ATTR_MOUNT_ROOT, Linux 5.8 and
// later; false where the kernel does not say).
func dirStat(fd int) (id devIno, mountRoot bool, err error) {
	var x unix.Statx_t
	err = unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, unix.STATX_TYPE|unix.STATX_INO, &x)
	if err == nil {
		mountRoot = x.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && x.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
		return devIno{unix.Mkdev(x.Dev_major, x.Dev_minor), x.Ino}, mountRoot, nil
	}
	if err != unix.ENOSYS {
		return devIno{}, false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return devIno{}, false, err
	}
	return devIno{uint64(st.Dev), st.Ino}, false, nil
}
