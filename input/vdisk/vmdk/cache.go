package vmdk

import (
	"container/list"
	"sync"
)

// grainCacheBytes bounds the decompressed grains a Disk keeps: 8 MiB,
// 128 grains of 64 KiB (a grain is at most 1 MiB, so one always fits).
// A delta disk and each of its parents are Disks of their own.
const grainCacheBytes = 8 << 20

// grainCache keeps the most recently used decompressed grains of a
// Disk's compressed sparse extents, by extent and grain, at most
// grainCacheBytes of them, so that reading a grain in pieces
// decompresses it once. It is safe for concurrent use. A grain is never
// modified once put, so one evicted while a reader copies from it stays
// valid. Two readers that miss the same grain at once both decompress
// it; the second put keeps the first copy.
type grainCache struct {
	mu    sync.Mutex
	bytes int
	m     map[grainKey]*list.Element
	l     list.List // of *cachedGrain, most recent first
}

type grainKey struct {
	s  *sparse
	gi uint64
}

type cachedGrain struct {
	k grainKey
	b []byte
}

// get returns grain k, nil when it is not cached.
func (c *grainCache) get(k grainKey) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		c.l.MoveToFront(el)
		return el.Value.(*cachedGrain).b
	}
	return nil
}

// put caches b, grain k, dropping the least recently used grains past
// the bound.
func (c *grainCache) put(k grainKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[grainKey]*list.Element)
	}
	if el, ok := c.m[k]; ok {
		c.l.MoveToFront(el)
		return
	}
	c.m[k] = c.l.PushFront(&cachedGrain{k, b})
	c.bytes += len(b)
	for c.bytes > grainCacheBytes && c.l.Len() > 1 {
		el := c.l.Back()
		g := c.l.Remove(el).(*cachedGrain)
		delete(c.m, g.k)
		c.bytes -= len(g.b)
	}
}
