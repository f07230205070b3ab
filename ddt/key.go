package ddt

import (
	"sync"

	"github.com/zeebo/blake3"
)

// KeyOf is the table key of a block: the BLAKE3-256 digest of its LSIZE
// bytes (zero-padded), as ddtsim models a dedup=on dataset's checksum.
func KeyOf(block []byte) Key { return Key(blake3.Sum256(block)) }

// ZeroKeys remembers the key of the all-zero block of each LSIZE, so that
// zero records are not hashed one by one. Safe for concurrent use.
type ZeroKeys struct {
	mu sync.Mutex
	m  map[uint32]Key
}

// NewZeroKeys returns an empty ZeroKeys.
func NewZeroKeys() *ZeroKeys { return &ZeroKeys{m: make(map[uint32]Key)} }

// Get returns KeyOf lsize zero bytes.
func (z *ZeroKeys) Get(lsize uint32) Key {
	z.mu.Lock()
	defer z.mu.Unlock()
	k, ok := z.m[lsize]
	if !ok {
		k = KeyOf(make([]byte, lsize))
		z.m[lsize] = k
	}
	return k
}
