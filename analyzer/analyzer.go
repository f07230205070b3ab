package analyzer

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ddtsim/ddtsim/estimate"
	"github.com/ddtsim/ddtsim/input/source"
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/model"
	"github.com/ddtsim/ddtsim/zfs/space"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// BlockEvent describes one record of one file; see Options.OnBlock.
type BlockEvent struct {
	Path   string
	BlkID  uint64 // record index within the file
	LSize  uint32 // bytes
	Hole   bool   // not written at all; Key is then zero
	Key    ddt.Key
	Zero   bool // the record's content is all zeros
	Source string
	// Tag is what Options.OnFile returned for the file (0 without OnFile).
	Tag int
	// Count is how many records the event stands for, BlkID to
	// BlkID+Count-1, all alike: more than 1 only with Options.BlockRuns.
	Count uint64
	// Bytes is the file data those records hold, bytes: Count × LSize
	// but for a file's last record, which ends with the file.
	Bytes uint64
}

// FileEvent describes one file counted by the scan; see Options.OnFile.
type FileEvent struct {
	Path string
	Arg  int    // index of the path named to Scan under which it was found
	Size uint64 // bytes
}

// MaxJobs bounds Options.Jobs.
const MaxJobs = 256

// WorkerMemory bounds the memory the workers hold for the records in
// flight, bytes: each worker holds up to two records (the one it reads,
// and with gzip or zstd the compressor's output; LZ4, LZJB and ZLE only
// size theirs: zio.Sizer), 2 × recordsize bytes, 32 MiB at
// recordsize=16M, allocated when it first needs them, and no more
// workers run than WorkerMemory allows (Workers): 8 at recordsize=16M,
// 128 at 1M, MaxJobs at 512K and less.
const WorkerMemory = 256 << 20

// Workers is how many workers a scan with Options.Jobs jobs (> 0) runs at
// recordsize (volblocksize) bytes: jobs, at most WorkerMemory / (2 ×
// recordsize), at least 1. The result does not depend on it.
func Workers(jobs int, recordSize uint32) int {
	return max(1, min(jobs, WorkerMemory/(2*int(recordSize))))
}

// Options configure a scan.
type Options struct {
	Policy *zio.Policy
	Sparse model.Sparse
	// Jobs is the number of reader/hash/compress workers; ≤ 0 means
	// GOMAXPROCS. At large recordsizes fewer run (Workers), so that the
	// records in flight hold at most WorkerMemory bytes.
	Jobs int
	// Warn receives every per-path problem (unreadable file, file changed
	// during the scan, ...). It may be called from several goroutines at
	// once. Nil discards warnings (they are still counted).
	Warn func(path string, err error)
	// OnBlock, when set, is called for every record of every file, from
	// several goroutines at once. For tests and block listings.
	OnBlock func(BlockEvent)
	// OnFile, when set, is called for every file counted in
	// Counters.Files (empty ones too), from one goroutine, before any
	// OnBlock of the file; what it returns is the Tag of the file's
	// BlockEvents.
	OnFile func(FileEvent) (tag int)
	// BlockRuns lets OnBlock receive a run of records lying wholly in a
	// hole of the source file as one event (Count > 1) instead of one per
	// record, so that a file of terabytes of holes stays cheap.
	BlockRuns bool
	// Progress, when set, is updated while the scan runs.
	Progress *Progress
	// Follow follows symlinks found inside directories (loops and
	// directories already walked are skipped). Symlinks named as paths are
	// always followed.
	Follow bool
	// CountLinks counts every name of a hard-linked file, as if each were
	// a separate copy. By default an inode is scanned once, as `cp -a`
	// stores it.
	CountLinks bool
	// OneFileSystem stays on the file system of each path named, as
	// `find -xdev` does.
	OneFileSystem bool
	// KeepCache leaves what the scan reads in the page cache; by default
	// the pages its reading brought in are dropped once read
	// (source.Walker.KeepCache).
	KeepCache bool
	// SkipDirs are directories never walked into (ddtsim's own spill
	// directory, when it lies below a path scanned).
	SkipDirs []string
	// Zvol cuts each file (or block device) into blocks as a volume
	// (zfs create -V) of volblocksize Policy.RecordSize stores it: every
	// block exactly that size (zio.ZvolRecords).
	Zvol bool
	// Guest reads virtual-disk images as the disks their guests see
	// (guest.Open; model.Settings.Guest).
	Guest bool
	// Sample N > 1 keeps only the blocks whose content hash falls in 1/N of
	// the hash space (ddt.InSample): about 1/N of the table's memory and of
	// the compression work. The table then holds a sample; see
	// ddt.EstimateSample.
	Sample uint64
	// Read, when active (estimate.Plan.Active), reads only the records
	// the plan chooses among those holding data: the others are counted
	// (Counters.Records, Unread, ScannedBytes) but not read, hashed or
	// put in the table, which then holds the sample (estimate.Compute).
	// Records lying wholly in a hole of the source file are accounted as
	// in a full scan, unless ZFS would store their zeros (compression=off
	// copied without holes): then they are sampled like data. Distinct from Sample, which reads every record and
	// keeps 1/N of the contents.
	Read estimate.Plan
	// Done, when set, is called each time records [first, end) of file f
	// are fully accounted in the table and the counters: a chunk read to
	// its end, a run of records in a hole of the source file, or the part
	// of a chunk read before a read error. It is called from several
	// goroutines at once, at most once per record. When the scan is
	// cancelled, the records reported are exactly those the result holds
	// (a chunk once started is finished), which is what Resume needs.
	Done func(f FileInfo, first, end uint64)
	// Started, when set, is called for each file whose records the scan
	// takes, once Resume has said which records of it are done already
	// (done: sorted, disjoint, possibly past f.Records; nil without
	// Resume), on the walk's goroutine, in the walk's order
	// (source.Position), before any Done of the file.
	Started func(f FileInfo, done []Span)
	// Finished, when set with Started, is called once the scan is through
	// with a file Started reported: every record accounted, or given up
	// (a read error, a file that shrank), after its last Done. It is not
	// called for a file left unfinished because the scan was cancelled.
	// It is called from several goroutines at once.
	Finished func(f FileInfo)
	// FilesAhead, with Started: the walk starts no file while this many
	// files it started, from the oldest one not finished on, are not all
	// finished, so that the files finished after the oldest unfinished
	// one (what a progress kept as a walk position must list) stay fewer
	// whatever the reads do; 0 means DefaultFilesAhead.
	FilesAhead int
	// CheckpointEvery > 0, with Checkpoint: at this interval the scan
	// stops its workers between chunks (a chunk once started is
	// finished) and calls Checkpoint with its state, consistent with what
	// Done and Finished reported so far; the workers go on when it
	// returns, so it should only copy what it keeps (see State).
	CheckpointEvery time.Duration
	Checkpoint      func(State)
	// Resume, when set, continues an earlier scan (see Resume).
	Resume *Resume
	// Mem > 0 bounds the table's memory, bytes: beyond it the table is
	// spilled as sorted runs to files in SpillDir (an existing directory
	// the caller removes) and merged at the end, to the same result (see
	// ddt.Table.Spill). Result.Table.Close removes the runs. With a group
	// plan, the groups read are bounded so too at the end
	// (estimate.GroupSample.Spill; Result.Groups.Close).
	Mem      int64
	SpillDir string
	// SpillWarn receives a failure to write a run (a *ddt.SpillError; the
	// table then stays in memory, nothing is lost). Nil discards it.
	SpillWarn func(error)
	// Stages, when set, sums the time spent in each stage of the work
	// (Stages): a diagnosis of what limits a scan. Scan sets its Workers.
	Stages *Stages
	// Shard, when sharded (Count > 1), scans only this run's share of the
	// files (source.Shard): every run walks the whole tree; a file is
	// read by the shard its identity (file system, inode) falls to, and
	// a file larger than source.ShardChunkBytes(Policy.RecordSize) (1
	// GiB of records) is split into chunks of that many bytes, each read
	// by the shard it falls to. The tables and counters of the Count
	// scans, made with the same paths and options, add up to one scan's
	// of the whole (saved.Merge): the records are each counted by the
	// shard that reads them; a file (Files, LogicalBytes, HardLinks, the
	// error of a file that cannot be opened) by the owner of its chunk 0;
	// what the walk counts (Dirs, Symlinks, Special, OtherFS,
	// RepeatedDirs, ImageParts, the problems of directories and paths
	// named) by shard 0. The problems a shard meets but another counts
	// still reach Warn, as a *source.CountedElsewhereError, and are not
	// counted in Errors. A read error, or a change noticed at the end of
	// the reading (Changed), is counted by each shard that meets it in
	// the chunks it reads. Progress counts this shard's share: its files
	// and the bytes of its chunks. A resumed shard (Resume) must be the
	// same shard.
	Shard source.Shard
	// Faults, for tests only, are the walk's test seams (source.Faults):
	// files that change before they are opened, opens and reads that
	// fail, come back short or wait, files split into small chunks
	// (Faults.ShardChunkBytes). nil outside tests.
	Faults *source.Faults
}

// Progress holds counters a caller may read while a scan runs.
type Progress struct {
	Files        atomic.Int64 // regular files found
	BytesDone    atomic.Int64 // logical bytes of records processed (read or known holes)
	BytesPending atomic.Int64 // logical bytes of files found so far
	// Walked is set once the walk has listed every file: BytesPending is
	// then the total.
	Walked atomic.Bool
}

// Counters describe what a scan saw. Sizes are bytes, blocks are records.
//
// ScannedBytes counts the bytes of every record processed: read, or
// accounted as lying in a hole of the source file (a file's last record
// counts the bytes it holds, not its LSIZE). A complete scan covers
// LogicalBytes; an interrupted one, or one with unreadable files, less.
// Savings are figured over it.
//
// The counters of the shards of a sharded scan add up to those of one
// scan of the whole (Options.Shard), but for Compressed (each shard
// compresses the first copy of a content it meets), the tables' own
// figures (UniqueBlocks, Stored and Embedded are recomputed from the
// merged table; TableBytes, SpillRuns), and, for a file that fails or
// changes while several shards read it, Errors and Changed.
type Counters struct {
	Files         uint64 `json:"files"`          // regular files scanned, and those that could not be opened (not those gone)
	Dirs          uint64 `json:"dirs"`           // directories walked
	Symlinks      uint64 `json:"symlinks"`       // symlinks skipped (not followed)
	Special       uint64 `json:"special"`        // devices, sockets, FIFOs skipped
	HardLinks     uint64 `json:"hard_links"`     // extra names of an inode already scanned, skipped
	Devices       uint64 `json:"block_devices"`  // block devices named explicitly and read
	OtherFS       uint64 `json:"other_fs"`       // directories on another file system, skipped (OneFileSystem)
	RepeatedDirs  uint64 `json:"repeated_dirs"`  // directories reached again (repeated paths, bind mounts, symlink loops), skipped
	RepeatedFiles uint64 `json:"repeated_files"` // files reached again (a path named twice), skipped
	ImageParts    uint64 `json:"image_parts"`    // files read as parts of an image (--guest: VMDK extents, qcow2 data files), not on their own
	Changed       uint64 `json:"changed"`        // files that changed while they were read (figures approximate)
	Errors        uint64 `json:"errors"`         // paths that could not be read (fully)
	LogicalBytes  uint64 `json:"logical_bytes"`  // sum of file sizes (of Files)
	// ShareBytes is the file data this scan's share holds, bytes: the
	// sizes of the files it reads, less the chunks other shards read
	// (Options.Shard). Not sharded, it is LogicalBytes; the shards'
	// add up to the whole's. 0 in scans saved before it was counted. The
	// files of the share that could not be read count in it.
	ShareBytes uint64 `json:"share_bytes"`
	// Unreadable counts, of Files, the regular files that could not be
	// opened (permissions, I/O), or with Guest not read as the images they
	// are: none of their records is in the result; UnreadableBytes their
	// sizes, bytes, of LogicalBytes (source.Counters). The walk counts
	// them: 0 at a checkpoint, and in scans saved before they were
	// counted.
	Unreadable      uint64 `json:"unreadable_files"`
	UnreadableBytes uint64 `json:"unreadable_bytes"`
	EmptyFiles      uint64 `json:"empty_files"`    // of Files, those of 0 bytes (with --zvol: no volume)
	ScannedBytes    uint64 `json:"scanned_bytes"`  // file bytes the result covers (see above)
	ReadBytes       uint64 `json:"read_bytes"`     // bytes actually read from the files
	Records         uint64 `json:"records"`        // level-0 records of all files, holes included
	Holes           uint64 `json:"holes"`          // records not written (all-zero)
	HoleBytes       uint64 `json:"hole_bytes"`     // the file bytes those records hold (of ScannedBytes)
	SourceHoles     uint64 `json:"source_holes"`   // records wholly inside a source hole, never read
	ZeroBlocks      uint64 `json:"zero_blocks"`    // all-zero records stored as data (compression=off)
	Embedded        uint64 `json:"embedded"`       // records stored in their block pointer, not counted by zdb -S
	EmbeddedLSize   uint64 `json:"embedded_lsize"` // their logical size, bytes (LUSED counts it)
	// EmbeddedPad is, of EmbeddedLSize, the bytes past the ends of the
	// files of their files' last records (a file's last record is padded
	// with zeros to its LSIZE, a small file's to a multiple of 512):
	// EmbeddedLSize − EmbeddedPad is the file data kept in block
	// pointers. Records left out by --sample are not counted; 0 in scans
	// saved before it was counted.
	EmbeddedPad    uint64 `json:"embedded_pad,omitempty"`
	Stored         uint64 `json:"stored"`           // records allocated and counted by zdb -S
	UniqueBlocks   uint64 `json:"unique_blocks"`    // DDT entries: unique stored contents
	UniqueEmbedded uint64 `json:"-"`                // unique embedded contents (internal)
	Compressed     uint64 `json:"compressed_runs"`  // compressor runs (one per unique content)
	Unsampled      uint64 `json:"unsampled"`        // records left out by --sample
	Unread         uint64 `json:"unread,omitempty"` // records holding data left unread by --read (Options.Read)
	TableBytes     uint64 `json:"table_bytes"`      // the table's own memory at its peak (ddt.Table.PeakBytes); 0 for a merge
	SpillRuns      uint64 `json:"spill_runs"`       // times the table was spilled to disk (Options.Mem)
	// With --read (Options.Read active): Population, the records the
	// plan samples, read or not (those ZFS would store: not the ones
	// wholly in a source hole that stay holes); and their LSIZE, which
	// the metadata gives without reading (zio.FileRecords): DataLSize
	// their sum, bytes; MaxLSize the largest; ReadLSize the sum over
	// those read and ReadLSizeSq the sum of their squares in 512-byte
	// sectors, Σ (LSIZE/512)² (estimate.Input). 0 without --read.
	Population uint64 `json:"population,omitempty"`
	DataLSize  uint64 `json:"data_lsize,omitempty"`
	// DataMaxDSize is the most those records can take: the sum of the
	// policy's DSIZE of each as an uncompressed block of its LSIZE,
	// bytes (zio.Policy.DSize). 0 in scans saved before it was counted.
	DataMaxDSize uint64 `json:"data_max_dsize,omitempty"`
	MaxLSize     uint64 `json:"max_lsize,omitempty"`
	ReadLSize    uint64 `json:"read_lsize,omitempty"`
	ReadLSizeSq  uint64 `json:"read_lsize_sq,omitempty"`
	// ReadHoles and ReadHoleBytes are, of Holes and HoleBytes, those of
	// the records the plan read (all zeros, made holes): a sample, to be
	// scaled by the fraction, where the rest (source holes) are the
	// whole data's. 0 without --read, and in scans saved before they
	// were counted.
	ReadHoles     uint64 `json:"read_holes,omitempty"`
	ReadHoleBytes uint64 `json:"read_hole_bytes,omitempty"`
	// Indirect are the files' indirect blocks (space.File), one copy;
	// Dirs the directories' ZAP objects (space.Dir), of the directories
	// listed (walked or not). The metadata that zfs list counts beside the
	// data (package space). In a sharded scan a file split between shards
	// has the indirect blocks of each piece counted (whole ones where the
	// pieces hold whole indirect blocks: source.ShardChunkBytes does up to
	// 1M records; the levels above them once per piece). A file an
	// interruption cut short is counted once its resumed scan finishes it,
	// from the block pointers of both (BPTally, Resume.Tally), as an
	// uninterrupted scan counts it.
	Indirect space.Blocks `json:"indirect_blocks"`
	DirZAPs  space.Blocks `json:"directory_zaps"`
	// SizeFiles are, with --read's group plan (estimate.Plan.Groups),
	// the files of more than one record the walk counted, per file size,
	// bytes: a group holds at most as many records as there are files of
	// its size (MaxGroupRecords). Nil without a group plan; it grows with
	// the sizes met (a few tens of bytes each).
	SizeFiles map[uint64]uint64 `json:"size_files,omitempty"`
	// SizeHoles are, with --read's group plan, the records of files of
	// more than one record that lie wholly in holes ZFS leaves holes (not
	// in the Population), per file size, bytes: with SizeFiles, the
	// population's records of each size (Strata). Nil without them.
	SizeHoles map[uint64]uint64 `json:"size_holes,omitempty"`
	// OneRecordPopulation are, with --read, the records of the
	// population (Population) in files of one record: each a group of
	// its own under the group plan (the groups of the data are at most
	// these and one a record index of each size of SizeFiles).
	OneRecordPopulation uint64 `json:"one_record_population,omitempty"`
	// OneRecordSizes are, with --read's group plan, those records per
	// LSIZE, bytes (Strata: a bound per LSIZE class). Nil without them.
	OneRecordSizes map[uint64]uint64 `json:"one_record_sizes,omitempty"`
	// PeakRSS is the process's peak resident set, bytes (PeakRSS()). Scan
	// leaves it 0, so that equal scans have equal counters; the command
	// sets it when it reports.
	PeakRSS uint64 `json:"peak_rss"`
}

// MaxGroupRecords is the most records a group of a group plan can hold:
// the most files of one size (SizeFiles), at least 1 (a file of one
// record is a group of its own).
func (c *Counters) MaxGroupRecords() uint64 {
	m := uint64(1)
	for _, n := range c.SizeFiles {
		m = max(m, n)
	}
	return m
}

func (c *Counters) add(o *Counters) {
	c.ReadBytes += o.ReadBytes
	c.ScannedBytes += o.ScannedBytes
	c.Records += o.Records
	c.Holes += o.Holes
	c.HoleBytes += o.HoleBytes
	c.EmbeddedPad += o.EmbeddedPad
	c.SourceHoles += o.SourceHoles
	c.ZeroBlocks += o.ZeroBlocks
	c.Compressed += o.Compressed
	c.Unsampled += o.Unsampled
	c.Unread += o.Unread
	c.Population += o.Population
	c.OneRecordPopulation += o.OneRecordPopulation
	c.DataLSize += o.DataLSize
	c.DataMaxDSize += o.DataMaxDSize
	c.MaxLSize = max(c.MaxLSize, o.MaxLSize)
	c.ReadLSize += o.ReadLSize
	c.ReadLSizeSq += o.ReadLSizeSq
	c.ReadHoles += o.ReadHoles
	c.ReadHoleBytes += o.ReadHoleBytes
	c.Indirect.Add(o.Indirect)
	for size, n := range o.SizeHoles {
		c.addSizeHoles(size, n)
	}
	for l, n := range o.OneRecordSizes {
		if c.OneRecordSizes == nil {
			c.OneRecordSizes = map[uint64]uint64{}
		}
		c.OneRecordSizes[l] += n
	}
}

// addSizeHoles counts n records of a file of size bytes in SizeHoles.
func (c *Counters) addSizeHoles(size, n uint64) {
	if c.SizeHoles == nil {
		c.SizeHoles = map[uint64]uint64{}
	}
	c.SizeHoles[size] += n
}

// sumValues is the sum of m's values.
func sumValues(m map[uint64]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// Strata sorts the groups of a group plan's sample by the most records a
// group can hold (estimate.NewStrata), from SizeFiles and SizeHoles;
// records gives the records of a file of a size (zio.FileRecords, or
// zio.ZvolRecords with --zvol), dsize the DSIZE of an uncompressed
// block of an LSIZE (zio.Policy.DSize). Nil where the counts do not place every
// record of the population (one shard of a sharded scan).
func (c *Counters) Strata(plan estimate.Plan, records func(size uint64) (lsize uint32, n uint64), dsize func(lsize uint64) uint64) *estimate.Strata {
	sizes := make(map[uint64]estimate.SizeCount, len(c.SizeFiles))
	for size, n := range c.SizeFiles {
		sizes[size] = estimate.SizeCount{Files: n}
	}
	for size, n := range c.SizeHoles {
		x := sizes[size]
		x.Holes = n
		sizes[size] = x
	}
	if n := sumValues(c.OneRecordSizes); n != c.OneRecordPopulation {
		return nil // counted by an earlier build
	}
	return estimate.NewStrata(plan, sizes, c.OneRecordSizes, records, dsize, c.Population, c.DataLSize)
}

// GroupsOf gathers the table of a group plan's sample, whose keys are a
// content's first 64 bits and its group (ddt.GroupKey), by content and by
// group (estimate.GroupSample), a content at a time
// (ddt.Table.RangeGrouped): its memory grows with the groups of more than
// one record read, not with the contents.
//
// The sample sorts its groups into strata (estimate.Strata; nil: one).
// With dir set, it keeps at most about mem bytes of groups in memory, the
// others in runs in dir (estimate.GroupSample.Spill).
func GroupsOf(t *ddt.Table, strata *estimate.Strata, mem int64, dir string) *estimate.GroupSample {
	gs := estimate.NewGroupSample(strata)
	if dir != "" {
		gs.Spill(dir, mem)
	}
	t.RangeGrouped(func(k ddt.Key, e ddt.Entry) bool {
		gs.AddEntry(binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint64(k[8:16]), e)
		return true
	})
	return gs
}

// Summarize is t's histogram and summary (ddt.Table.Summarize); for the
// table of a group plan's sample (plan.Groups), whose keys are (content,
// group), they are by content, from the group sample it also returns
// (GroupsOf, its groups in strata and spilled as it says; nil for other
// plans). The table is read once either way.
func Summarize(t *ddt.Table, plan estimate.Plan, strata *estimate.Strata, mem int64, dir string) (*ddt.Histogram, ddt.Summary, *estimate.GroupSample) {
	if !plan.Active() || !plan.Groups {
		h, st := t.Summarize()
		return h, st, nil
	}
	gs := GroupsOf(t, strata, mem, dir)
	h, st := gs.Histogram()
	return h, st, gs
}

// Analysis is a finished scan.
type Analysis struct {
	Table     *ddt.Table
	Histogram *ddt.Histogram
	Counters  Counters
	// WalkDone is set when the walk listed every file before the scan
	// ended: Counters.Files and LogicalBytes are then the whole data's.
	// A scan cancelled during the walk leaves it false: they count the
	// files found so far.
	WalkDone bool
	// Groups is, with --read's group plan (estimate.Plan.Groups), the
	// table of the records read by content and by group (the table's
	// keys are (content, group): Histogram and the counters of entries
	// are by content, from it); nil without.
	Groups *estimate.GroupSample
	// Pending are the block-pointer tallies of the files a cancelled scan
	// took records from and left unfinished, in no order: their indirect
	// blocks are not in Counters.Indirect, and a resume goes on from them
	// (Resume.Tally).
	Pending []Pending
}

// Run walks paths (files and directories, recursively), and returns the
// simulated dedup table. Per-path problems go to opts.Warn and are counted;
// Run itself fails only on an invalid policy or when ctx is cancelled
// (then it returns the partial result with ctx.Err()).
func Run(ctx context.Context, paths []string, opts Options) (*Analysis, error) {
	if err := opts.Shard.Check(); err != nil {
		return nil, fmt.Errorf("analyzer: shard %s: %w", opts.Shard, err)
	}
	return scanSource(ctx, opts.walker(paths), opts)
}

// scanSource is Scan of the files src yields (Options.Follow, CountLinks,
// OneFileSystem and SkipDirs are the walker's, and go unused here).
func scanSource(ctx context.Context, src source.Source, opts Options) (*Analysis, error) {
	if opts.Policy == nil {
		return nil, fmt.Errorf("analyzer: no policy")
	}
	if err := opts.Policy.Validate(); err != nil {
		return nil, err
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	if jobs > MaxJobs {
		return nil, fmt.Errorf("analyzer: %d jobs is more than %d", jobs, MaxJobs)
	}
	jobs = Workers(jobs, opts.Policy.RecordSize)
	s := &run{
		opts:  opts,
		table: ddt.NewTable(opts.Policy.DSize),
		zero:  ddt.NewZeroKeys(),
		zeros: make([]byte, opts.Policy.RecordSize),
	}
	if r := opts.Resume; r != nil && r.Table != nil {
		s.table = r.Table
	}
	s.md = space.Metadata(opts.Policy)
	if w, ok := src.(*source.Walker); ok && w.Listed == nil {
		w.Listed = s.listed
	}
	s.walkLane = &Lane{Policy: opts.Policy, Table: s.table, Zero: s.zero, Sample: opts.Sample}
	if opts.Started != nil {
		ahead := opts.FilesAhead
		if ahead <= 0 {
			ahead = DefaultFilesAhead
		}
		s.window = newWindow(ahead)
	}
	if opts.Mem > 0 {
		if err := s.table.Spill(ddt.SpillOptions{Limit: opts.Mem, Dir: opts.SpillDir, Warn: opts.SpillWarn}); err != nil {
			return nil, err
		}
	}
	// The queue to the workers: deep enough that, in a tree of small
	// files (a chunk each), the walk and the workers seldom wait on each
	// other (each wait parks a goroutine: measured 1.2× on 300,000 small
	// files against 4 a worker); each chunk queued may hold its file open.
	chunks := make(chan chunk, chunkQueue(jobs, opts.Read.Active()))
	var wg sync.WaitGroup
	s.walkAcct = &accountant{}
	s.acct = make([]*accountant, jobs)
	for i := range s.acct {
		s.acct[i] = &accountant{}
		wg.Add(1)
		go func(a *accountant) {
			defer wg.Done()
			s.work(ctx, chunks, a)
		}(s.acct[i])
	}
	stopCheckpoints := s.checkpoints()
	if st := opts.Stages; st != nil {
		st.Workers = jobs
	}
	walkStart := opts.Stages.now()
	walked := src.Walk(ctx, func(f *source.File) { s.visit(ctx, f, chunks) }, s.warn)
	opts.Stages.since(StageWalk, walkStart)
	walkDone := ctx.Err() == nil // Walk returns early only when ctx is cancelled
	if p := opts.Progress; p != nil && walkDone {
		p.Walked.Store(true)
	}
	close(chunks)
	wg.Wait()
	stopCheckpoints()

	res := &Analysis{Table: s.table, Counters: Counters{Files: walked.Files, Dirs: walked.Dirs, Symlinks: walked.Symlinks,
		Special: walked.Special, HardLinks: walked.HardLinks, Devices: walked.Devices, OtherFS: walked.OtherFS,
		RepeatedDirs: walked.RepeatedDirs, RepeatedFiles: walked.RepeatedFiles, ImageParts: walked.ImageParts, LogicalBytes: walked.LogicalBytes}, WalkDone: walkDone}
	res.Counters.add(&s.walkAcct.c)
	for _, a := range s.acct {
		res.Counters.add(&a.c)
	}
	res.Counters.Errors = uint64(s.errors.Load())
	res.Counters.Changed = uint64(s.changedFiles.Load())
	res.Counters.EmptyFiles = s.walkEmpty.Load()
	res.Counters.Unreadable, res.Counters.UnreadableBytes = walked.Unreadable, walked.UnreadableBytes
	// The files this shard counts that it could not read are of its share
	// (not sharded: the share is everything).
	res.Counters.ShareBytes = s.walkShare.Load() + walked.UnreadableBytes
	s.spaceMu.Lock()
	res.Counters.Indirect.Add(s.indirectBlocks)
	res.Counters.DirZAPs = s.dirBlocks
	s.spaceMu.Unlock()
	res.Counters.SizeFiles = s.sizeFilesCopy()
	res.Pending = s.pending
	if r := opts.Resume; r != nil {
		res.Counters.add(&r.Counters)
		res.Counters.Changed += r.Counters.Changed
	}
	var spillDir string
	if s.opts.Mem > 0 {
		spillDir = s.opts.SpillDir
	}
	var strata *estimate.Strata
	if s.opts.Read.Groups {
		strata = res.Counters.Strata(s.opts.Read, s.records, s.opts.Policy.DSize)
	}
	h, st, groups := Summarize(s.table, s.opts.Read, strata, s.opts.Mem, spillDir)
	if groups != nil && groups.SpillErr() != nil && s.opts.SpillWarn != nil {
		s.opts.SpillWarn(ddt.NewSpillError(spillDir, groups.SpillErr(), "keeping the --read sample's groups in memory"))
	}
	res.Groups = groups
	res.Histogram = h
	res.Counters.UniqueBlocks = st.Entries
	res.Counters.Stored = st.Refs
	res.Counters.UniqueEmbedded = st.EmbeddedEntries
	res.Counters.Embedded = st.EmbeddedRefs
	res.Counters.EmbeddedLSize = st.EmbeddedLSize
	res.Counters.TableBytes = uint64(s.table.PeakBytes())
	res.Counters.SpillRuns = uint64(s.table.SpillRuns())
	if err := s.table.Err(); err != nil {
		return res, fmt.Errorf("the table spilled to disk could not be read back, the result is incomplete: %w", err)
	}
	return res, ctx.Err()
}

// chunkQueue is the depth of the queue of chunks to jobs workers: 4 a job,
// and 64 more unless the limit of open files is low (each chunk queued may
// hold its file open: found by a new user, at ulimit -n 64 the 64 more
// made a scan lose most of a tree to EMFILE). When the scan reads a
// sample (read: Options.Read), most chunks are read in part or not at
// all, and a large file's chunks come in a burst: 1024 more, or a
// quarter of the limit of open files if less, let the walk go on past
// a large file while the workers read the records it planned (on
// scripts/bench-read.sh's estate at --read 1%, the walk waited for the
// workers a third of its time with 64; a tenth with 1024).
func chunkQueue(jobs int, read bool) int {
	limit := source.FileLimit()
	switch {
	case limit < source.PlentyOfFiles:
		return 4 * jobs
	case read:
		return 4*jobs + int(min(1024, limit/4))
	}
	return 4*jobs + 64
}
