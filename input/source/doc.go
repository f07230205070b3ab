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
// Files and directories are opened O_NOATIME where the kernel allows it
// (the owner, or root), so that a scan changes nothing where it reads, not
// even an access time, and, unless a symlink is to be followed,
// O_NOFOLLOW, so that a symlink swapped in after listing leads nowhere;
// files O_NONBLOCK too, so that a FIFO swapped in for a file is opened
// without waiting for a writer, then found a FIFO by fstat and skipped,
// never read. What a file is when opened decides: a FIFO, a device or a
// directory found there is counted as special; a symlink (refused by
// O_NOFOLLOW) and a socket cannot be opened, and are an error, the file
// counted with the size it was listed with.
//
// A walk holds what it needs to go on, not what it met (dirfd.go,
// listing.go, repeats.go):
//
//   - directories are opened, listed and their entries opened relative to
//     their parent's file descriptor, one name at a time, so that a tree
//     of any depth is walked, its paths far beyond PATH_MAX; the
//     descriptors held are bounded whatever the depth (the path named and
//     the 32 deepest directories), a directory whose descriptor was closed
//     being opened again through ".." on the way back up, and checked to
//     be the same (st_dev, st_ino);
//   - a directory's listing, sorted by name as the walk's order needs,
//     costs its names and 8 bytes an entry (a million entries: 16 MB with
//     names of 8 bytes);
//   - the identities remembered to tell a file or a directory met again
//     are those a repeat can happen to: the paths named, the mount points
//     below them (bind mounts), files of several names until all their
//     names are met; so that memory does not grow with the number of
//     files, but with Follow (a symlink may lead anywhere: every identity
//     walked is kept) and for hard-linked files whose other names lie
//     outside the paths walked.
//
// A file whose size comes within a page of 8 EiB has its last 64 KiB
// taken as data whatever lseek says (the kernel's search overflows
// there); sizes are uint64 throughout.
//
// Other sources (a disk image read as its guest sees it) implement Source
// and yield Files with their own Reader; the consumers need no change.
//
// The modelled behaviour is the copy's, not ZFS's: how ZFS then cuts a file
// into records is package zio (FileRecords, ZvolRecords).
package source
