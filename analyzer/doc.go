// Package analyzer is the engine of a scan: Run cuts each file that package source
// yields into level-0 blocks (records) as a dataset or a volume of one
// write policy stores it, decides which are holes, and runs the
// read/hash/compress work on all cores, filling a ddt.Table; its
// Analysis is the table, its histogram and the counters.
//
// The file-to-block rules are zio.FileRecords (module/zfs/zfs_vnops.c:
// zfs_write(), module/zfs/dnode.c: dnode_set_blksz()) and, with
// Options.Zvol, zio.ZvolRecords (module/zfs/zvol.c); what becomes of each
// record (a hole, a reference, a first reference compressed by package
// zio, modelling module/zfs/zio.c: zio_write_compress()) is a Lane, which
// package sweep uses too, one per policy.
//
// Files are split into chunks of at most 8 MiB for the workers, so that
// one large image keeps every core busy; runs of records lying wholly in a
// hole of the source file are accounted in one step, without reading. A
// chunk once started is finished even when the scan is cancelled, so that
// an interrupted scan reports exactly what its result holds (Options.Done)
// and can be continued (Options.Resume). Files are Started in the walk's
// order and Finished when done, so that a caller can keep the progress as
// a position in that order. Every Options.CheckpointEvery the workers stop
// between two records (each accounts a record under a lock of its own and
// reads outside it, so a hung read holds nothing back) and the caller gets
// a consistent state (State) to save. Files: analyzer.go (options,
// counters, Run), file.go (a file into chunks and hole runs), work.go
// (the workers), lane.go (the per-record accounting), resume.go,
// checkpoint.go, zvol.go.
package analyzer
