// Package nicenum is how OpenZFS prints numbers for people, both ways:
// Format prints a count or a byte size as zfs_nicenum_format() does
// (lib/libzutil/zutil_nicenum.c, 0.7.0+: "512B", "1.50K", "10.1G"), and
// Parse reads such a text back as the Value it stands for: the interval of
// integers that Format prints as that text, found with Format itself. zdb,
// zpool status -D, zfs list and zpool list print sizes this way, so every
// reader and writer of their text in this module goes through here.
//
// Intervals add and multiply with saturation (SatAdd, SatMul), so sums of
// displayed values stay intervals that hold the true sum.
package nicenum
