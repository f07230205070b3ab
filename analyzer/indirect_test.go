package analyzer

import "testing"

// TestSeenSet: a hash met again is a repeat until the set is reset, over
// a full indirect block's worth of hashes and across generations.
func TestSeenSet(t *testing.T) {
	var s seenSet
	s.reset()
	for round := range 3 {
		for i := range uint64(1024) {
			h := i * 2048 // all in the same slot modulo the table: a long probe
			if s.add(h) {
				t.Fatalf("round %d: %d new, taken as met", round, i)
			}
		}
		for i := range uint64(1024) {
			if !s.add(i * 2048) {
				t.Fatalf("round %d: %d met, taken as new", round, i)
			}
		}
		s.reset()
	}
	s.cur = ^uint32(0) // the generation wraps: the set is cleared for real
	s.add(7)
	s.reset()
	if s.add(7) {
		t.Error("7 met after a reset past the wrap")
	}
}
