package space

import (
	"github.com/ddtsim/ddtsim/zfs/ddt"
	"github.com/ddtsim/ddtsim/zfs/zio"
)

// Input is what Predict needs of a scan: the write policy, the level-0
// data as the DDT model sums it, and the metadata the scan tallied.
type Input struct {
	Policy *zio.Policy
	// Data is the histogram's total: Referenced as written without
	// dedup, Allocated with it (level-0 blocks, embedded ones left out,
	// as zdb -S counts them).
	Data ddt.Bucket
	// EmbeddedLSize is the logical size of the level-0 blocks embedded
	// in their block pointers (all references), bytes: in LUSED, not
	// allocated.
	EmbeddedLSize uint64
	// Objects is how many objects the copy creates: files, directories
	// (the top one not included: the dataset's root is one of the fixed
	// objects), symlinks and special files; hard links share one.
	Objects uint64
	// Volumes > 0: the data is that many volumes (zfs create -V, one per
	// file, as ddtsim --zvol scans them), children of the pool's root
	// dataset, which stays an empty file system; Objects and Dirs are
	// then ignored.
	Volumes uint64
	// Indirect and Dirs are the files' indirect blocks and the
	// directories' ZAPs (File, Dir), one copy of each.
	Indirect, Dirs Blocks
	// DDTOnDisk is the dedup table's allocated size (deflated, every copy:
	// zdb -DD dspace; package ddtsize), bytes, with dedup on, as zfs list
	// sees it right after the copy: on a fast-dedup pool (2.3+) mostly
	// the dedup log (ddtsize.ListedTable).
	DDTOnDisk uint64
	// DDTFlushed is the table's allocated size once the dedup log is
	// flushed into the ZAPs (ddtsize.Estimate: zdb -DD after the export);
	// 0 means the same as DDTOnDisk.
	DDTFlushed uint64
}

// Figures are what zfs list -p and zpool list -p show for a pool whose
// root dataset received the copy, bytes (ratios as zfs prints them, to two
// decimals).
type Figures struct {
	Used      uint64 `json:"used"`      // USED of the pool's root dataset: UsedDS + UsedChild
	UsedDS    uint64 `json:"usedds"`    // USEDDS = REFER of the dataset holding the files
	UsedChild uint64 `json:"usedchild"` // USEDCHILD: the pool's own metadata (the MOS, the DDT) charged to the root
	LUsed     uint64 `json:"logicalused"`
	LRefer    uint64 `json:"logicalreferenced"`
	// CompressRatio is LUSED over the physical size of every block (one
	// copy: dsl_dataset_block_born() sums BP_GET_PSIZE), as compressratio
	// shows it.
	CompressRatio float64 `json:"compressratio"`
	Alloc         uint64  `json:"alloc"` // zpool list ALLOC: raw allocated bytes, parity included, each block once
	Dedup         float64 `json:"dedupratio"`
	// DDT is the dedup table's share of UsedChild (its allocated bytes as
	// zfs list sees them right after the copy; 0 without dedup).
	DDT uint64 `json:"ddt"`
	// Flushed holds USED and ALLOC once the dedup log of a fast-dedup
	// pool (2.3+) has been flushed into the ZAPs, minutes or hours after
	// the copy (nil when that changes nothing).
	Flushed *FlushedFigures `json:"log_flushed,omitempty"`
	// Metadata is the dataset's metadata, one copy (indirect blocks,
	// directories, dnodes and its fixed objects), for reports; Indirect
	// and Directories are the first two parts of it (with volumes: no
	// directories).
	Metadata    Blocks `json:"metadata"`
	Indirect    Blocks `json:"indirect"`
	Directories Blocks `json:"directories"`
}

// FlushedFigures are USED and ALLOC with the dedup log flushed, bytes.
type FlushedFigures struct {
	Used  uint64 `json:"used"`
	Alloc uint64 `json:"alloc"`
	DDT   uint64 `json:"ddt"`
}

// Prediction holds the figures with dedup as the policy has it, and with
// the other setting.
type Prediction struct {
	Figures
	// Other is the prediction with dedup the other way (nil for the
	// policy's own only).
	Other *Figures `json:"other_dedup,omitempty"`
}

// Predict returns the space the copy takes with dedup as in.Policy has it.
func Predict(in Input) Figures {
	p := in.Policy
	md := Metadata(p)
	ratio := p.Vdev.DeflateRatio()
	dsize := func(asize uint64) uint64 { return asize >> 9 * ratio }

	meta := in.Indirect
	mos := MOS(p)
	f := Figures{Indirect: in.Indirect}
	if in.Volumes == 0 {
		f.Directories = in.Dirs
		meta.Add(in.Dirs)
		meta.Add(Dataset(md, in.Objects))
		f.UsedDS = in.Data.Referenced.DSize + uint64(md.Copies)*dsize(meta.ASize)
		f.LRefer = in.Data.Referenced.LSize + in.EmbeddedLSize + meta.PSize
		f.UsedChild = uint64(mosCopies) * dsize(mos.ASize)
		f.LUsed = f.LRefer + mos.PSize
	} else {
		// The root file system, empty; the volumes are its children.
		root := Dataset(md, 0)
		for range in.Volumes {
			meta.Add(Volume(md))
		}
		f.UsedDS = uint64(md.Copies) * dsize(root.ASize)
		f.LRefer = root.PSize
		f.UsedChild = uint64(mosCopies)*dsize(mos.ASize) + in.Data.Referenced.DSize + uint64(md.Copies)*dsize(meta.ASize)
		f.LUsed = f.LRefer + mos.PSize + in.Data.Referenced.LSize + in.EmbeddedLSize + meta.PSize
		meta.Add(root)
	}
	f.Metadata = meta
	data := in.Data.Referenced
	// The DDT's PSIZE, about: one copy of its deflated size (deflation
	// takes the parity out again).
	var ddtDSize, ddtPSize uint64
	if p.Dedup {
		data = in.Data.Allocated
		ddtDSize = in.DDTOnDisk
		f.UsedChild += ddtDSize
		ddtPSize = ddtDSize / mosCopies
		f.LUsed += ddtPSize
	}
	f.Used = f.UsedDS + f.UsedChild
	f.Alloc = p.RawSize(data.DSize) + uint64(md.Copies)*meta.ASize + uint64(mosCopies)*mos.ASize +
		p.RawSize(ddtDSize) + max(in.Volumes, 1)*p.Vdev.ASize(zilBlock(p))
	if ps := in.Data.Referenced.PSize + meta.PSize + mos.PSize + ddtPSize; ps > 0 {
		f.CompressRatio = round2(float64(f.LUsed) / float64(ps))
	}
	if p.Dedup {
		f.DDT = ddtDSize
		if fl := in.DDTFlushed; fl != 0 && fl != ddtDSize {
			f.Flushed = &FlushedFigures{Used: f.Used - ddtDSize + fl, Alloc: f.Alloc - p.RawSize(ddtDSize) + p.RawSize(fl), DDT: fl}
		}
	}
	f.Dedup = 1
	if p.Dedup && in.Data.Allocated.DSize > 0 {
		f.Dedup = round2(float64(in.Data.Referenced.DSize) / float64(in.Data.Allocated.DSize))
	}
	return f
}

// round2 rounds r down to two decimals, as zfs prints ratios
// (zfs_nicenum of the ratio × 100, truncated).
func round2(r float64) float64 { return float64(int64(r*100)) / 100 }
