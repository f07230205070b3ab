package model

import "fmt"

// Sparse says how the data is assumed to arrive on the pool, modelled on
// `cp --sparse=WHEN`; it only matters for all-zero records when ZFS itself
// would store them (compression=off).
type Sparse int

const (
	// SparseAuto copies a file that looks sparse (st_blocks × 512 <
	// st_size) as SparseAlways and any other file as SparseNever.
	SparseAuto Sparse = iota
	// SparseAlways: every all-zero record becomes a hole.
	SparseAlways
	// SparseNever: every record is written, zeros included.
	SparseNever
)

// ParseSparse parses "auto", "always" or "never".
func ParseSparse(s string) (Sparse, error) {
	switch s {
	case "auto":
		return SparseAuto, nil
	case "always":
		return SparseAlways, nil
	case "never":
		return SparseNever, nil
	}
	return 0, fmt.Errorf("invalid sparse mode %q (accepted: auto, always, never)", s)
}

// String names the mode as --sparse takes it ("auto", "always", "never").
func (s Sparse) String() string {
	if s < SparseAuto || s > SparseNever {
		return fmt.Sprintf("Sparse(%d)", int(s))
	}
	return [...]string{"auto", "always", "never"}[s]
}
