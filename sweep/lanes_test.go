package sweep

import (
	"testing"

	"github.com/ddtsim/ddtsim/zfs/model"
)

// Only recordsize and compression take lists; a list for copies says so
// (it said "copies=1,2: invalid (accepted: 1, 2, 3)"). dedup=sha256,verify
// is one value, not a list.
func TestLanesListsOnlyForRecordsizeAndCompression(t *testing.T) {
	t.Parallel()
	_, _, err := Lanes(model.Text{Properties: []string{"copies=1,2"}})
	if err == nil || err.Error() != "-o copies=1,2: a sweep takes lists for recordsize and compression only; run one sweep per copies value" {
		t.Errorf("copies=1,2: %v", err)
	}
	set, lanes, err := Lanes(model.Text{Properties: []string{"dedup=sha256,verify", "recordsize=4K,8K", "compression=off,lz4"}})
	if err != nil || len(lanes) != 4 || set.Dedup != "sha256,verify" || !lanes[3].Dedup || lanes[3].RecordSize != 8<<10 {
		t.Errorf("dedup=sha256,verify: %+v, %d lanes, %v", set, len(lanes), err)
	}
}
