// Package model holds what decides how ddtsim accounts a block: the
// settings a user chooses (the OpenZFS release, the dataset properties
// recordsize, volblocksize, compression, copies and dedup, the pool's vdev
// layouts and ashift, how the files are copied, the sampling rate), their
// text forms as zfs create -o, zpool create and ddtsim's flags take them,
// and the one translation of settings into the write path's policy
// (zio.Policy).
//
// Settings is the chosen form, parsed and validated once (Parse, from
// text); Settings.Policy yields the write policy; Model is the resolved
// description a saved scan carries (the release a prefix stood for, the
// compression as zfs get prints it, the pool the layouts make), and
// Model.Settings turns it back into Settings without going through text.
//
// The property rules follow module/zcommon/zfs_prop.c (the values zfs
// create accepts: recordsize, volblocksize, compression, copies, dedup)
// and the release table in package zio.
package model
