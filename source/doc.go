// Package source is where ddtsim's records come from: it lists the files a
// prediction covers and gives each one's size, identity, data extents and
// bytes. The consumers (package analyzer's scan, package sweep) cut the
// files into records for their write policies; none of them walks a
// directory or probes a hole itself.
//
// A Source yields Files. Its first implementation, Walker, walks paths on
// the local file systems the way `cp -a` (or rsync) would copy them onto a
// ZFS dataset, so that what it yields is what the dataset would hold:
//
//   - regular files, and block devices named explicitly (read as a file of
//     their size); other special files are skipped and counted;
//   - holes: a file that looks sparse (st_blocks × 512 < st_size) has its
//     data extents mapped with lseek(SEEK_DATA/SEEK_HOLE), so that records
//     lying wholly in a hole need no reading (the only place ddtsim asks
//     for SEEK_DATA);
//   - hard links: an inode is yielded once, at its first name, unless
//     CountLinks makes every name a copy;
//   - symlinks: a path named is followed (find -H); symlinks inside
//     directories are skipped, or followed with Follow (directories
//     reached twice, symlink loops included, are skipped);
//   - OneFileSystem stays on the file system of each path named (find
//     -xdev); SkipDirs are never entered;
//   - changed files: a File's Changed, at the end of its reading, reports a
//     regular file whose size or mtime is no longer what it was when opened
//     (ErrChanged);
//   - Shard takes one share of a namespace scanned by several independent
//     runs (shard.go): files wholly in other shards are never opened, large
//     files are split into chunks of records assigned one by one, and each
//     counter is counted by one shard only.
//
// Files are opened O_NOATIME where the kernel allows it, and, unless a
// symlink is to be followed, O_NOFOLLOW, so that a symlink swapped in after
// listing leads nowhere.
//
// Other sources (a disk image read as its guest sees it) implement Source
// and yield Files with their own Reader; the consumers need no change.
//
// The modelled behaviour is the copy's, not ZFS's: how ZFS then cuts a file
// into records is package zio (FileRecords, ZvolRecords).
package source
