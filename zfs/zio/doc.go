// Package zio models the OpenZFS write path for level-0 file data: which
// compressor runs with which capacity, when a block becomes a hole or an
// embedded block pointer, how PSIZE is rounded, and how much space (ASIZE,
// DSIZE) it takes on a vdev. Its names follow module/zfs/zio.c and
// module/zfs/vdev*.c.
package zio
