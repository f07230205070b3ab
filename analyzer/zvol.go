package analyzer

import "github.com/ddtsim/ddtsim/zfs/zio"

// records cuts a file of size bytes into blocks: as a file (zio.FileRecords), or
// with Options.Zvol as a volume (zio.ZvolRecords), the policy's RecordSize then
// being the volblocksize.
func (s *run) records(size uint64) (lsize uint32, nrec uint64) {
	if s.opts.Zvol {
		return zio.ZvolRecords(size, s.opts.Policy.RecordSize)
	}
	return zio.FileRecords(size, s.opts.Policy.RecordSize)
}
