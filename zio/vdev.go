package zio

import "fmt"

// Vdev is a top-level vdev's allocation model.
type Vdev interface {
	// MinAlloc is the smallest allocation, bytes (vdev.c: vdev_get_min_alloc()).
	MinAlloc() uint64
	// ASize is the allocated size of a PSIZE-byte block, bytes
	// (vdev_psize_to_asize()).
	ASize(psize uint64) uint64
	// DeflateRatio is vdev_deflate_ratio: floor(2^17 / (ASize(128K)/512))
	// (vdev.c: vdev_set_deflate_ratio()).
	DeflateRatio() uint64
	// String describes the vdev as zpool create would name it.
	String() string
}

// MinAshift and MaxAshift bound the ashift a pool accepts
// (include/sys/vdev_impl.h: ASHIFT_MIN, ASHIFT_MAX).
const (
	MinAshift = 9
	MaxAshift = 16
)

// Disk is a single disk or file vdev (a stripe member) with 2^Ashift-byte
// sectors. A mirror allocates the same ASIZE.
type Disk struct {
	Ashift int
}

// NewDisk returns a disk vdev; ashift outside 9..16 is an error.
func NewDisk(ashift int) (Disk, error) {
	if ashift < MinAshift || ashift > MaxAshift {
		return Disk{}, fmt.Errorf("invalid ashift %d (accepted: %d to %d)", ashift, MinAshift, MaxAshift)
	}
	return Disk{Ashift: ashift}, nil
}

// MinAlloc returns 2^ashift bytes.
func (d Disk) MinAlloc() uint64 { return 1 << d.Ashift }

// ASize rounds psize up to a whole number of sectors (vdev.c:
// vdev_default_asize()).
func (d Disk) ASize(psize uint64) uint64 {
	s := uint64(1) << d.Ashift
	return (psize + s - 1) &^ (s - 1)
}

// DeflateRatio is 512 on a plain disk: DSIZE equals ASIZE.
func (d Disk) DeflateRatio() uint64 { return (1 << 17) / (d.ASize(128<<10) >> 9) }

func (d Disk) String() string { return fmt.Sprintf("disk (ashift %d)", d.Ashift) }
